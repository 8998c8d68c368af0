"""Drift check of the rewritten questions (NOPE Appendix C: "if q' does not contradict its
reference q"); see :func:`check_paraphrase`."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

from halluscope.benchmarks.nope.validation import (
    _GENERIC_HEADS,
    _GENERIC_WORDS,
    _NOUN_POS,
    NLP,
    _word_keys,
    load_nlp,
)

# ---------------------------------------------------------------------------------------------
# Drift check of the rewritten questions
# ---------------------------------------------------------------------------------------------

DEFAULT_MIN_SIMILARITY = 0.35
"""Minimum :func:`content_similarity` between a paraphrase and its reference question.

Calibrated on the paper's own Table 5 example: its nine paraphrases that keep the relation score
0.50-0.89 (e.g. "Who is using the object above the spices?" -> "Who is the user of the spices in
the picture?" 0.50), while a question about something else that still names the object ("Where did
the chef buy the spatula for his new restaurant?" for "Where is the spatula located in the
image?") scores 0.29. Lexical overlap misses synonyms, so it is only the last of the checks."""

# fmt: off
_TYPE_CUES: dict[str, tuple[str, ...]] = {
    "color": ("color", "colour", "hue", "shade"),
    "object": ("what", "which", "object", "item", "thing"),
    "location": (
        "where", "location", "locate", "position", "find", "spot", "place", "situate",
        "whereabouts",
    ),
    "counting": ("how many", "number of", "count", "quantity"),
    "person": (
        "who", "whom", "whose", "person", "someone", "somebody", "anyone", "anybody",
        "individual", "people",
    ),
}
# fmt: on
"""Words (lemmas or phrases) that keep a question of each type answerable by its NegP answer."""

_CUE_WORDS = frozenset(c for cues in _TYPE_CUES.values() for c in cues if " " not in c)

_RELATION_GROUPS: dict[str, tuple[str, ...]] = {
    "above": ("above", "over", "atop", "top"),
    "under": ("under", "below", "beneath", "underneath", "bottom"),
    "on the left of": ("left",),
    "on the right of": ("right",),
}
_OPPOSITE = {
    "above": "under",
    "under": "above",
    "on the left of": "on the right of",
    "on the right of": "on the left of",
}


@dataclass(frozen=True)
class DriftCheck:
    """Result of :func:`check_paraphrase`: ``reason`` is ``None`` when the paraphrase is kept."""

    valid: bool
    reason: str | None
    similarity: float | None = None


def _keys(doc: Any) -> set[str]:
    out: set[str] = set()
    for token in doc:
        if token.is_alpha:
            out |= _word_keys(token)
    return out


def _content(doc: Any) -> set[str]:
    return {
        t.lemma_.lower()
        for t in doc
        if t.is_alpha and not t.is_stop and t.lemma_.lower() not in _GENERIC_WORDS
    }


def content_similarity(a: str, b: str, nlp: NLP | None = None) -> float:
    """F1 overlap of the content lemmas (no stop words, no "image"/"picture"...) of two texts."""
    nlp = nlp or load_nlp()
    left, right = _content(nlp(a)), _content(nlp(b))
    if not left or not right:
        return 0.0
    common = len(left & right)
    if not common:
        return 0.0
    precision, recall = common / len(right), common / len(left)
    return 2 * precision * recall / (precision + recall)


def _has_cue(cues: Iterable[str], keys: set[str], lowered: str) -> bool:
    for cue in cues:
        if " " in cue:
            if re.search(rf"\b{re.escape(cue)}\b", lowered):
                return True
        elif cue in keys:
            return True
    return False


def check_paraphrase(
    paraphrase: str | None,
    reference_question: str,
    obj: str,
    question_type: str,
    relation: str | None = None,
    *,
    nlp: NLP | None = None,
    similarity: Callable[[str, str], float] | None = None,
    min_similarity: float = DEFAULT_MIN_SIMILARITY,
    present: Collection[str] = (),
) -> DriftCheck:
    """Reject a rewritten question that drifts from (contradicts) its reference question.

    In order, the first failing rule names the reason:

    * ``missing`` / ``not_a_question``: no paraphrase, or it does not end with "?" (the rewriting
      prompt asks to keep a question mark);
    * ``object_missing``: every word of the object must still occur (as text or lemma);
    * ``question_type_changed``: a cue of the reference's question type must remain (e.g. "how
      many"/"number of" for counting, "where"/"location"/"find" for location), and "how many" may
      not appear in a question of another type (the NegP answer would change);
    * ``relation_changed``: the opposite spatial relation (left/right, above/under) replaces the
      reference's one (the paper's own example turns "on the left of the honey" into "on the right
      side of the honey");
    * ``present_object_added``: with ``present`` (:func:`present_keys` of the caption and
      labels), a noun of the paraphrase names a present object that the reference question does
      not ("What is the color of the American flag?" for an image with a flag): the answer
      would no longer be a NegP. Question words ("person", "individual", "item") do not count;
    * ``low_similarity``: ``similarity(reference, paraphrase)`` (default
      :func:`content_similarity`) below ``min_similarity``.
    """
    if paraphrase is None or not paraphrase.strip():
        return DriftCheck(False, "missing")
    text = " ".join(paraphrase.split())
    if not text.endswith("?"):
        return DriftCheck(False, "not_a_question")
    nlp = nlp or load_nlp()
    doc = nlp(text)
    keys = _keys(doc)
    lowered = text.lower()
    for token in nlp(obj):
        if token.is_alpha and not token.is_stop and not (_word_keys(token) & keys):
            return DriftCheck(False, "object_missing")
    cues = _TYPE_CUES.get(question_type)
    if cues is not None and not _has_cue(cues, keys, lowered):
        return DriftCheck(False, "question_type_changed")
    if question_type != "counting" and re.search(r"\bhow many\b", lowered):
        return DriftCheck(False, "question_type_changed")
    if relation in _RELATION_GROUPS:
        kept = _has_cue(_RELATION_GROUPS[relation], keys, lowered)
        flipped = _has_cue(_RELATION_GROUPS[_OPPOSITE[relation]], keys, lowered)
        if flipped and not kept:
            return DriftCheck(False, "relation_changed")
    if present:
        # question words ("person" for who, "item" for what) are not objects of the scene
        allowed = _keys(nlp(reference_question)) | _CUE_WORDS | _GENERIC_HEADS
        for token in doc:
            if token.is_alpha and token.pos_ in _NOUN_POS:
                word = _word_keys(token)
                if word & set(present) and not word & allowed:
                    return DriftCheck(False, "present_object_added")
    if similarity is None:
        score = content_similarity(reference_question, text, nlp)
    else:
        score = float(similarity(reference_question, text))
    if score < min_similarity:
        return DriftCheck(False, "low_similarity", score)
    return DriftCheck(True, None, score)


DRIFT_REASONS = (
    "not_a_question",
    "object_missing",
    "question_type_changed",
    "relation_changed",
    "present_object_added",
    "low_similarity",
)
"""Reasons of :func:`check_paraphrase` that mean the paraphrase drifted from its reference."""
