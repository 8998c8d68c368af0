"""Tri-HE: triplet judges and the Hallu_Q / Hallu_I hallucination rates.

Source: Wu, Chung, Chen, Yeung, "Unified Triplet-Level Hallucination Evaluation for Large
Vision-Language Models" (arXiv:2410.23114v4), and the released code (wujunjie1998/Tri-HE at
038a927: ``NLI_judge.py``, ``gpt4_judge.py``, ``evaluation/main_evaluation.py``) where the
paper leaves an edge case open.

Judgements
----------
Every triplet a model's answer contains (its knowledge graph G_theta) gets one judgement:
``"yes"`` = the triplet is supported by (can be obtained or inferred from) the image's
reference triplets; ``"no"`` = it is not supported, i.e. **hallucinated** (§3.3: a triplet that
"cannot be induced based on GT triplets" is "a hallucination"; the released evaluation counts
``'no'``); ``"null"`` = the judge's reply could not be parsed. For a ``"no"``, the LLM judge
also names the unsupported part (§3.3, "LLM Judge"): ``"object"`` (object1 or object2) or
``"relation"``; other judges give no attribution (``None``).

Three judges (the classes, which load or call a model, are in
:mod:`halluscope.benchmarks.trihe.judges`; this module holds their decision rules on given
similarity numbers: :func:`supported`, :func:`best_verdict`, :func:`select_references`,
:func:`slot_similarity`):

* ``SimilarityJudge``, the judge the paper calls "NLI judge" (§3.3). It is not NLI: the
  released ``NLI_judge.py`` uses cosine similarities of sentence embeddings
  (all-mpnet-base-v2; here any sentence-transformers model, all-MiniLM-L6-v2 offline by
  default). For one claim, exactly as released: references are the image's scene-graph strings
  with ``(``, ``)`` and ``,`` deleted plus a final ``.``; the claim is its three parts joined
  by spaces; ``s_j`` = cos(claim, reference_j). ``kept`` = references with ``s_j > 0.5`` (file
  order), ``top3`` = the three references with the highest ``s_j`` (descending). Each list is
  joined by spaces into one text and embedded. ``score`` = cos(claim, join(top3)) when
  ``kept`` is empty, else max(cos(claim, join(kept)), cos(claim, join(top3))). Supported
  (``"yes"``) iff ``score > 0.6``. (The "max cosine of the claim against the joined
  references" of the data README is this max over the two joined texts.)
* ``NLIJudge``, a real NLI cross-encoder (any ``AutoModelForSequenceClassification`` whose
  ``config.id2label`` has an entailment label). Premise = the references joined by spaces, or,
  with a ``retriever``, the paper's selection (``kept`` if non-empty, else ``top3``, §3.3);
  hypothesis = the claim. Supported iff P(entailment) > ``threshold`` (0.6, the paper's value).
* ``SlotSimilarityJudge`` (halluscope, not in the paper): the released judge embeds whole
  triplets, and a sentence embedding of "person eating spacesuit" stays close to "person wearing
  spacesuit" (the nouns dominate), so it misses most relation hallucinations (measured on the
  demo with all-MiniLM-L6-v2: every wrong relation tried scored > 0.6). This judge compares the
  three parts separately: a claim is supported iff some reference has ``min(cos(subjects),
  cos(relations), cos(objects)) > threshold`` (0.6). Same encoder, no new model.
* :func:`object_attribution` gives any judge the object/relation split by the paper's
  definitions (§3.1): a hallucinated triplet is an *object* hallucination when its subject or
  object is not among the image's objects V (exact lower-case match, or cosine >=
  ``threshold`` with a name of V), else a *relation* hallucination (this includes the paper's
  "prediction error": right objects and relation, wrong pairing).
* The LLM judge: :func:`build_judge_prompt` writes the prompt (our wording of the task the
  paper describes in §3.3 and Appendix A.2, with the released reply format) and
  :func:`parse_judge_reply` reads the reply into a judgement and an attribution. Reply rules:
  ``released`` (the released substrings), ``lenient`` (quotes and spacing forgiven) and ``json``
  (our extension for small local models that do not keep the released sentence form: the
  prompt asks for ``{"answer": "yes"|"no", "error": "object1"|"object2"|"relation"|"none"}``
  and the backend constrains decoding to :data:`JUDGE_REPLY_SCHEMA`, so every reply parses).

Rates (§3.2, Eq. 1 and 2)
-------------------------
For a question ``q`` with ``n_q`` judged triplets, ``h_q`` = its ``"no"`` judgements:

* ``Hallu_Q = 100 * mean over scored questions of h_q / n_q`` (Eq. 1: the mean of per-question
  ratios "# HT in G_theta / # TT in G_theta"; not the share of questions with a hallucination
  and not a pooled triplet ratio).
* ``Hallu_I = 100 * mean over scored images of (mean over the image's scored questions of
  h_q / n_q)`` (Eq. 2: the mean over images of Hallu_Q restricted to the image's questions;
  the paper writes "x 100%" in both equations, the percentage is applied once).
* ``object_q``, ``object_i``, ``relation_q``, ``relation_i``: the same two means with ``h_q``
  replaced by the ``"no"`` judgements attributed to an object, resp. to the relation (Table 2's
  "Object" and "Relation" columns). The denominator stays ``n_q``.

Edge cases, as released in ``evaluation/main_evaluation.py``:

* a question with no triplet (``n_q = 0``) is skipped (not a 0);
* an image with no scored question is skipped;
* ``"null"`` counts in ``n_q`` but not in ``h_q``;
* a ``"no"`` whose attribution is missing counts as a relation hallucination (the release counts
  every ``"no"`` that does not name object1/object2 as relation), so that object + relation =
  overall for every question; ``unattributed="none"`` counts it in neither.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from halluscope.benchmarks.trihe.data import Triplet

KEEP_THRESHOLD = 0.5
TOP_K = 3
SUPPORT_THRESHOLD = 0.6
JUDGMENTS = ("yes", "no", "null")
ERRORS = ("object", "relation")

Claim = Sequence[str] | Triplet | str
Reference = str | Triplet


class TextEncoder(Protocol):
    """What the similarity judge needs from a sentence-transformers model."""

    def encode(self, sentences: list[str], **kwargs: Any) -> Any: ...


def claim_text(claim: Claim) -> str:
    """The claim as the released judge embeds it: its parts joined by single spaces."""
    if isinstance(claim, Triplet):
        return claim.text()
    if isinstance(claim, str):
        return claim
    return " ".join(str(part) for part in claim)


def reference_text(reference: Reference) -> str:
    """A reference as released: the raw string without ``(``, ``)``, ``,`` plus ``"."``.

    ``"(laptop, is, black)"`` -> ``"laptop is black."``. A parsed :class:`Triplet` gives the same
    text for every well-formed string.
    """
    if isinstance(reference, Triplet):
        return reference.text() + "."
    return reference.replace("(", "").replace(")", "").replace(",", "") + "."


def unit_rows(matrix: Any) -> np.ndarray:
    """The rows of ``matrix`` scaled to unit length (zero rows stay zero): dot = cosine."""
    m = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1.0, norms)


@dataclass(frozen=True)
class Verdict:
    """One claim's judgement, its score and the premise text the score came from."""

    judgment: Literal["yes", "no"]
    score: float
    premise: str


def supported(score: float, threshold: float = SUPPORT_THRESHOLD) -> Literal["yes", "no"]:
    """Every judge's decision: supported (``"yes"``) iff ``score > threshold``, strictly."""
    return "yes" if score > threshold else "no"


def best_verdict(
    scores: Sequence[float], premises: Sequence[str], threshold: float = SUPPORT_THRESHOLD
) -> Verdict:
    """The verdict on the best-scoring premise (the first one on a tie)."""
    best = int(np.argmax(scores))
    score = scores[best]
    return Verdict(supported(score, threshold), score, premises[best])


def select_references(
    similarities: Any,
    references: Sequence[str],
    keep_threshold: float = KEEP_THRESHOLD,
    top_k: int = TOP_K,
) -> tuple[list[list[str]], list[list[str]]]:
    """The released similarity judge's premises, per claim (a row of ``similarities``, claims x
    references): ``kept`` = the references with cosine > ``keep_threshold`` (file order), ``top``
    = the ``top_k`` highest (descending, ties in file order)."""
    kept: list[list[str]] = []
    top: list[list[str]] = []
    for row in similarities:
        kept.append([references[j] for j in np.nonzero(row > keep_threshold)[0]])
        top.append([references[j] for j in np.argsort(-row, kind="stable")[:top_k]])
    return kept, top


def slot_similarity(
    claim: Sequence[str], reference: Sequence[str], vectors: Mapping[str, np.ndarray]
) -> float:
    """The slot judge's score of a claim against one reference: the lowest of the cosines of
    subject, relation and object (``vectors``: unit vectors of the lower-cased parts)."""
    return min(
        float(vectors[a.lower()] @ vectors[b.lower()])
        for a, b in zip(claim, reference, strict=True)
    )


def triplet_parts(item: Claim | Reference) -> tuple[str, str, str] | None:
    """The three parts of a claim or reference (``None`` for a string that is not a triplet)."""
    if isinstance(item, Triplet):
        return (item.subject, item.relation, item.object)
    if isinstance(item, str):
        from halluscope.benchmarks.trihe.data import TripletParseError, parse_triplet

        try:
            triplets, _ = parse_triplet(item)
        except TripletParseError:
            return None
        if len(triplets) != 1:
            return None
        t = triplets[0]
        return (t.subject, t.relation, t.object)
    parts = tuple(str(p).strip() for p in item)
    return parts if len(parts) == 3 else None  # type: ignore[return-value]


_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)


def object_attribution(
    claims: Sequence[Claim],
    judgments: Sequence[str],
    vocabulary: Iterable[str],
    encoder: TextEncoder | None = None,
    threshold: float = SUPPORT_THRESHOLD,
) -> list[str | None]:
    """Per claim: ``"object"`` / ``"relation"`` for a ``"no"`` (paper §3.1), else ``None``.

    A subject or object is in V when its lower-case text (leading article dropped) is a name of
    ``vocabulary`` or, with an ``encoder``, has cosine >= ``threshold`` with one.
    """
    names = sorted({_ARTICLE.sub("", v.strip().lower()) for v in vocabulary if v.strip()})
    parts = [triplet_parts(c) for c in claims]
    asked = sorted(
        {_ARTICLE.sub("", x.lower()) for j, p in zip(judgments, parts, strict=True) if j == "no"
         for x in ((p[0], p[2]) if p else ())}
    )  # fmt: skip
    known = {a for a in asked if a in names}
    rest = [a for a in asked if a not in known]
    if rest and names and encoder is not None:
        matrix = unit_rows(encoder.encode(names + rest, convert_to_numpy=True))
        sims = matrix[len(names) :] @ matrix[: len(names)].T
        known |= {a for a, row in zip(rest, sims, strict=True) if float(row.max()) >= threshold}
    out: list[str | None] = []
    for judgment, part in zip(judgments, parts, strict=True):
        if judgment != "no":
            out.append(None)
        elif part is None:
            out.append(None)
        else:
            objects = (_ARTICLE.sub("", part[0].lower()), _ARTICLE.sub("", part[2].lower()))
            out.append("relation" if all(o in known for o in objects) else "object")
    return out


# --- LLM judge ------------------------------------------------------------------------------

JUDGE_SYSTEM_PROMPT = "You are a helpful assistant."

JUDGE_PROMPT_TEMPLATE = """\
You check one claim against the scene graph of an image. The scene graph is a list of \
reference triplets (object1, relation, object2); a list of the objects seen in the image is \
given too.

Task 1. Decide whether the claim triplet (object1, relation, object2) is supported.
- Answer 'yes' if the claim is one of the reference triplets.
- Answer 'yes' if the claim can be logically inferred from one or more reference triplets. \
Take into account common associations and implications; hedged wording such as "could be", \
"might" or "suggests", which allows broader inferences; objects of the same kind as equal \
(for example "man" and "woman" are both a "person"); and the object list, when the triplets \
alone do not settle the claim.
- Otherwise answer 'no'.

Task 2. Only if your answer to Task 1 is 'no': say which part of the claim is not supported \
or inferable, 'object1', 'object2' or 'relation'.

Judge only from the reference triplets and the object list, not from your own knowledge.

Reference triplets:
{references}

Objects in the image:
{objects}

Claim:
{claim}

Give your answer to Task 1 only in the form: My answer is 'yes'  (or: My answer is 'no').
If it is 'no', then give your answer to Task 2 only in the form: The error is related to \
'object1'  (or 'object2', or 'relation')."""


#: The reply form of ``reply_rule="json"`` (replaces the last paragraph of the prompt).
JSON_REPLY_INSTRUCTION = """\
Reply with a JSON object only: {"answer": "yes" or "no", "error": "object1", "object2", \
"relation" or "none"}. "error" names the unsupported part when the answer is "no", else it \
is "none"."""

#: Grammar for constrained decoding of ``reply_rule="json"`` replies (llama.cpp, OpenAI servers).
JUDGE_REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "enum": ["yes", "no"]},
        "error": {"type": "string", "enum": ["object1", "object2", "relation", "none"]},
    },
    "required": ["answer", "error"],
    "additionalProperties": False,
}
_RELEASED_REPLY_FORM = "Give your answer to Task 1 only in the form:"


def _triplet_string(item: Claim | Reference) -> str:
    if isinstance(item, Triplet):
        return f"({item.subject}, {item.relation}, {item.object})"
    if isinstance(item, str):
        return item
    return "(" + ", ".join(str(p) for p in item) + ")"


def build_judge_prompt(
    references: Sequence[Reference], objects: Sequence[str], claim: Claim, rule: str = "released"
) -> str:
    """The LLM-judge user prompt for one claim (one reference triplet per line).

    ``rule="json"`` asks for :data:`JUDGE_REPLY_SCHEMA` instead of the released sentences.
    """
    unique_objects = list(dict.fromkeys(objects))
    prompt = JUDGE_PROMPT_TEMPLATE.format(
        references="\n".join(_triplet_string(r) for r in references),
        objects=", ".join(unique_objects) if unique_objects else "(none)",
        claim=_triplet_string(claim),
    )
    if rule == "json":
        prompt = prompt[: prompt.index(_RELEASED_REPLY_FORM)] + JSON_REPLY_INSTRUCTION
    return prompt


def judge_messages(
    references: Sequence[Reference], objects: Sequence[str], claim: Claim, rule: str = "released"
) -> list[dict[str, str]]:
    """Chat messages for an OpenAI-compatible endpoint (system + user)."""
    return [
        {"role": "system", "content": JUDGE_SYSTEM_PROMPT},
        {"role": "user", "content": build_judge_prompt(references, objects, claim, rule)},
    ]


@dataclass(frozen=True)
class JudgeReply:
    """A parsed LLM-judge reply; ``error`` is only set for a ``"no"``."""

    judgment: Literal["yes", "no", "null"]
    error: Literal["object", "relation"] | None


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_LENIENT_ANSWER = re.compile(r"my answer is\s*:?\s*[\"'*`]*\s*(yes|no)\b")
_LENIENT_ERROR = re.compile(r"error is related to\s*:?\s*[\"'*`]*\s*(object\s*[12]|relation)")


def _parse_json_reply(text: str) -> JudgeReply:
    """A ``reply_rule="json"`` reply; anything but the schema's object is ``null``."""
    import json

    try:
        reply = json.loads(text)
    except ValueError:
        return JudgeReply("null", None)
    if not isinstance(reply, dict) or reply.get("answer") not in ("yes", "no"):
        return JudgeReply("null", None)
    if reply["answer"] == "yes":
        return JudgeReply("yes", None)
    error = reply.get("error")
    kind = {"object1": "object", "object2": "object", "relation": "relation"}.get(error)
    return JudgeReply("no", kind)  # type: ignore[arg-type]


def parse_judge_reply(
    text: str | None, rule: Literal["released", "lenient", "json"] = "released"
) -> JudgeReply:
    """Read an LLM-judge reply into ``yes``/``no``/``null`` and the part at fault.

    ``released`` (default): case-insensitive substrings as in the released ``gpt4_judge.py``:
    ``my answer is 'yes'`` or ``my answer is "yes"`` -> yes, else the same with ``no`` -> no, else
    ``null``. For a ``no``: ``the error is related to 'object1'``/``'object2'`` -> ``"object"``,
    ``... 'relation'`` -> ``"relation"``, else ``None`` (the scorer decides what an
    unattributed ``no`` counts as). ``lenient`` also accepts curly, missing or markdown quotes
    and ``object 1``; the first match counts.
    """
    if not text:
        return JudgeReply("null", None)
    low = text.lower()
    if rule == "released":
        judgment: Literal["yes", "no", "null"] = "null"
        for word in ("yes", "no"):
            if f"my answer is '{word}'" in low or f'my answer is "{word}"' in low:
                judgment = word  # type: ignore[assignment]
                break
        if judgment != "no":
            return JudgeReply(judgment, None)
        for part, kind in (("object1", "object"), ("object2", "object"), ("relation", "relation")):
            if f"the error is related to '{part}'" in low:
                return JudgeReply("no", kind)  # type: ignore[arg-type]
        return JudgeReply("no", None)
    if rule == "json":
        return _parse_json_reply(text)
    if rule != "lenient":
        raise ValueError(
            f"unknown judge-reply rule {rule!r}; expected 'released', 'lenient' or 'json'"
        )
    low = low.translate(_QUOTES)
    match = _LENIENT_ANSWER.search(low)
    if match is None:
        return JudgeReply("null", None)
    if match.group(1) == "yes":
        return JudgeReply("yes", None)
    err = _LENIENT_ERROR.search(low)
    if err is None:
        return JudgeReply("no", None)
    return JudgeReply("no", "relation" if err.group(1) == "relation" else "object")


# --- rates ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class QuestionJudgments:
    """The judgements of the triplets of one model answer (one Tri-HE question)."""

    image_id: str
    question_id: Any
    judgments: tuple[str, ...]
    errors: tuple[str | None, ...] | None = None

    def __post_init__(self) -> None:
        bad = [j for j in self.judgments if j not in JUDGMENTS]
        if bad:
            raise ValueError(f"judgments must be 'yes', 'no' or 'null', got {bad[0]!r}")
        if self.errors is None:
            return
        if len(self.errors) != len(self.judgments):
            raise ValueError(
                f"{len(self.judgments)} judgments but {len(self.errors)} errors; "
                "expected one error entry per judgment"
            )
        for j, e in zip(self.judgments, self.errors, strict=True):
            if e is not None and e not in ERRORS:
                raise ValueError(f"errors must be 'object', 'relation' or null, got {e!r}")
            if e is not None and j != "no":
                raise ValueError(f"error {e!r} given for a {j!r} judgment; only a 'no' has one")


def _pct(values: list[float]) -> float | None:
    return 100.0 * float(np.mean(values)) if values else None


def hallucination_rates(
    questions: Iterable[QuestionJudgments],
    unattributed: Literal["relation", "none"] = "relation",
) -> dict[str, Any]:
    """Hallu_Q, Hallu_I and their object/relation split (percent); see the module docstring.

    The object/relation rates are ``None`` when no question carries attributions.
    """
    if unattributed not in ("relation", "none"):
        raise ValueError(f"unattributed must be 'relation' or 'none', got {unattributed!r}")
    per_image: dict[str, list[tuple[float, float, float]]] = {}
    n_skipped = n_triplets = n_no = n_null = n_unattributed = 0
    attributed = False
    images_seen: list[str] = []
    for q in questions:
        if q.image_id not in per_image:
            per_image[q.image_id] = []
            images_seen.append(q.image_id)
        n = len(q.judgments)
        if n == 0:
            n_skipped += 1
            continue
        errors = q.errors if q.errors is not None else (None,) * n
        attributed = attributed or q.errors is not None
        no = obj = rel = 0
        for j, e in zip(q.judgments, errors, strict=True):
            if j == "null":
                n_null += 1
            if j != "no":
                continue
            no += 1
            if e == "object":
                obj += 1
            elif e == "relation":
                rel += 1
            else:
                n_unattributed += 1
                rel += unattributed == "relation"
        n_triplets += n
        n_no += no
        per_image[q.image_id].append((no / n, obj / n, rel / n))
    scored = [v for image in images_seen for v in per_image[image]]
    image_means = [
        tuple(float(np.mean(col)) for col in zip(*per_image[image], strict=True))
        for image in images_seen
        if per_image[image]
    ]
    out: dict[str, Any] = {
        "hallu_q": _pct([s[0] for s in scored]),
        "hallu_i": _pct([m[0] for m in image_means]),
        "object_q": _pct([s[1] for s in scored]) if attributed else None,
        "object_i": _pct([m[1] for m in image_means]) if attributed else None,
        "relation_q": _pct([s[2] for s in scored]) if attributed else None,
        "relation_i": _pct([m[2] for m in image_means]) if attributed else None,
        "n_scored": len(scored),
        "n_skipped": n_skipped,
        "n_images_scored": len(image_means),
        "n_images_skipped": len(images_seen) - len(image_means),
        "n_triplets": n_triplets,
        "n_hallucinated": n_no,
        "n_null": n_null,
        "n_unattributed": n_unattributed,
        "unattributed": unattributed,
    }
    return out
