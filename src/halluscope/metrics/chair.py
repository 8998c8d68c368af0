"""CHAIR (Rohrbach et al. 2018) with precision, recall and objects per caption.

Definitions (per caption, ``M`` = the MSCOCO class mentions of the caption in caption order,
duplicates kept, as found by :class:`~halluscope.objects.parser.ObjectParser`; ``G`` = the set
of ground-truth classes of the image):

* ``hallucinated`` = the mentions of ``M`` whose class is not in ``G`` (duplicates kept);
* ``CHAIRs`` = 1 if ``hallucinated`` is non-empty, else 0;
* ``CHAIRi`` = ``|hallucinated| / |M|``, and 0 when ``|M| = 0`` (as the reference does);
* ``recall`` = ``|set(M) & G| / |G|``, and 0 when ``G`` is empty (as the reference does);
* ``precision`` = ``(|M| - |hallucinated|) / |M|``, ``None`` when ``|M| = 0``.

Overall (``N`` captions):

* ``CHAIRs`` = captions with at least one hallucinated mention / ``N``;
* ``CHAIRi`` = sum of hallucinated mentions / sum of mentions (micro average, the reference);
* ``recall`` = sum of ``|set(M) & G|`` / sum of ``|G|`` (micro, as the reference computes it);
* ``precision`` = 1 - ``CHAIRi`` = non-hallucinated mentions / mentions (micro);
* ``precision_macro`` = mean per-caption precision over captions with at least one mention,
  ``recall_macro`` = mean per-caption recall over captions with a non-empty ``G`` (the CAOS
  paper reports "average precision/recall"; both aggregations are given, named);
* ``objects_per_caption`` = sum of ``|M|`` / ``N`` (mentions, duplicates kept) and
  ``unique_objects_per_caption`` = sum of ``|set(M)|`` / ``N``.

``CHAIRi``/``precision`` of a set with no mention at all are reported as 0.0 / ``None``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

from halluscope.objects.parser import ObjectParser

__all__ = ["caption_chair", "chair_scores"]


def caption_chair(mentions: list[str], gt: Iterable[str]) -> dict[str, Any]:
    """CHAIR values of one caption from its class mentions (caption order) and GT classes."""
    gt_set = set(gt)
    hallucinated = [m for m in mentions if m not in gt_set]
    covered = {m for m in mentions if m in gt_set}
    n = len(mentions)
    return {
        "mentions": list(mentions),
        "hallucinated": hallucinated,
        "gt": sorted(gt_set),
        "n_mentions": n,
        "n_hallucinated": len(hallucinated),
        "n_gt": len(gt_set),
        "n_gt_mentioned": len(covered),
        "CHAIRs": int(bool(hallucinated)),
        "CHAIRi": len(hallucinated) / n if n else 0.0,
        "recall": len(covered) / len(gt_set) if gt_set else 0.0,
        "precision": (n - len(hallucinated)) / n if n else None,
    }


def chair_scores(
    records: Iterable[tuple[Hashable, str, Iterable[str]]],
    parser: ObjectParser | None = None,
) -> dict[str, Any]:
    """CHAIR for ``(id, caption, gt_classes)`` records; see the module docstring.

    Returns ``{"overall": {...}, "captions": [...]}``; captions keep the input order and carry
    their ``id``, ``caption`` and the fields of :func:`caption_chair`. ``overall["normalization"]``
    names the word normalisation variant of the parser (``pattern`` or ``lemmatizer``).
    """
    parser = parser if parser is not None else ObjectParser()
    captions: list[dict[str, Any]] = []
    for rec_id, caption, gt in records:
        row = caption_chair([m.class_name for m in parser.parse(caption)], gt)
        captions.append({"id": rec_id, "caption": caption, **row})
    if not captions:
        raise ValueError("chair_scores: no captions to score")
    n_caps = len(captions)
    n_mentions = sum(c["n_mentions"] for c in captions)
    n_hall = sum(c["n_hallucinated"] for c in captions)
    n_gt = sum(c["n_gt"] for c in captions)
    n_cov = sum(c["n_gt_mentioned"] for c in captions)
    with_mentions = [c["precision"] for c in captions if c["n_mentions"]]
    with_gt = [c["recall"] for c in captions if c["n_gt"]]
    overall = {
        "normalization": parser.variant,
        "n_captions": n_caps,
        "n_mentions": n_mentions,
        "n_hallucinated": n_hall,
        "n_hallucinated_captions": sum(c["CHAIRs"] for c in captions),
        "n_captions_without_mentions": n_caps - len(with_mentions),
        "n_gt": n_gt,
        "n_gt_mentioned": n_cov,
        "CHAIRs": sum(c["CHAIRs"] for c in captions) / n_caps,
        "CHAIRi": n_hall / n_mentions if n_mentions else 0.0,
        "recall": n_cov / n_gt if n_gt else 0.0,
        "precision": (n_mentions - n_hall) / n_mentions if n_mentions else None,
        "precision_macro": sum(with_mentions) / len(with_mentions) if with_mentions else None,
        "recall_macro": sum(with_gt) / len(with_gt) if with_gt else None,
        "objects_per_caption": n_mentions / n_caps,
        "unique_objects_per_caption": sum(len(set(c["mentions"])) for c in captions) / n_caps,
    }
    return {"overall": overall, "captions": captions}
