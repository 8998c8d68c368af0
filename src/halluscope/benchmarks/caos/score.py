"""Score stage: CAOS and CHAIR-style counts per model x instruction x embedder (a job scores
every instruction of one model x embedder, loading the vectors once).

Counts are of the caption's *distinct* objects (L of Algorithm 1), except the ``*_mentions``
columns, which count every mention (CHAIR_I is a mention-level rate in the reference CHAIR).
``n_in_domain`` and ``n_in_domain_hallucinated`` give the in-domain reading of precision and
CHAIR_S (``tables.chair_counts: in-domain``), the other counts the reading with out-of-domain
objects judged by the oracle.
CAOS is computed three times: with unverified objects (no oracle) left out (the headline), and
with all of them present / all absent (``*_if_present``, ``*_if_absent``), the two bounds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from halluscope.benchmarks.caos.captions.oracle import load_decisions
from halluscope.benchmarks.caos.csvio import write_csv
from halluscope.benchmarks.caos.k_order import frequent_objects
from halluscope.benchmarks.caos.metric import (
    SCORES,
    CAOSScorer,
    CaptionObject,
    VectorTable,
    distinct_objects,
)
from halluscope.io import InputError, read_jsonl
from halluscope.settings import StageSettings, keyed_values, param, plain
from halluscope.stage_command import paired, stage
from halluscope.stages.data import load_items

KEYS = ("model", "embedder", "instruction_id", "image_id")
#: The two bounds for objects no oracle verified (see halluscope.benchmarks.caos.metric).
BOUNDS = ("present", "absent")
BOUND_SCORES = tuple(f"{s}_if_{b}" for b in BOUNDS for s in SCORES)
CAPTION_COLUMNS = (
    *KEYS,
    "n_objects",
    "n_mentions",
    "n_in_domain",
    "n_in_domain_mentions",
    "n_in_domain_hallucinated_mentions",
    "n_hallucinated",
    "n_in_domain_hallucinated",
    "n_unverified",
    "n_gt",
    "n_gt_mentioned",
    "n_scored",
    *SCORES,
    *BOUND_SCORES,
    "missing_vectors",
)


def object_columns(k_max: int) -> tuple[str, ...]:
    return (
        *KEYS,
        "position",
        "name",
        "in_domain",
        "sim_T",
        "sim_X",
        *(f"sim_K{k}" for k in range(1, k_max + 1)),
    )


def caption_objects(record: dict, gt: set[str], decisions: dict) -> list[CaptionObject]:
    """Label each mention present / hallucinated / unverified (Algorithm 1, step 5)."""
    out = []
    for obj in record["objects"]:
        if obj["in_domain"]:
            present: bool | None = obj["name"] in gt
        else:
            present = decisions.get((record["image_id"], obj["name"]))
        out.append(
            CaptionObject(obj["name"], bool(obj["in_domain"]), present, int(obj["position"]))
        )
    return out


@dataclass(frozen=True)
class CaosScoreSettings(StageSettings):
    """What a score job reads of ``params.yaml``: ``caos.k`` (Algorithm 1's K), ``caos.k_max``
    (the K-sweep's largest K) and ``caos.frequent`` (the frequent-object list K is taken from, or
    ``coco-instances`` / ``coco-images``); for rule ``score``, the instructions a job scores (in
    the order of its input and output files) and its embedder with the embedder's spec (its
    vectors are an ``ancient()`` input: a change of the spec reruns the job through this field)."""

    k: int = param("caos.k")
    k_max: int = param("caos.k_max")
    frequent: str | list[str] = param("caos.frequent")
    instructions: list[str] = param("generate.instructions")
    embedder: str = ""
    embedder_spec: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], embedder: str) -> CaosScoreSettings:
        spec = plain(config["embed"]["specs"][embedder])
        return cls(**keyed_values(cls, config), embedder=embedder, embedder_spec=spec)

    @classmethod
    def jobs(cls, config: Mapping[str, Any]) -> list[dict[str, str]]:
        return [{"embedder": e} for e in config["embed"]["embedders"]]


@stage("score")
def run(
    settings: CaosScoreSettings,
    objects: list[Path],
    oracle: list[Path],
    items: Path,
    vectors: Path,
    model_id: str,
    out_captions: list[Path],
    out_objects: list[Path],
) -> None:
    """CAOS and CHAIR-style counts of one model x embedder, for one or more instructions.

    The i-th instruction of the settings scores the i-th ``objects`` / ``oracle`` files into the
    i-th ``out_captions`` / ``out_objects``; the items and vectors are loaded once."""
    from halluscope.embeddings import load_vectors

    columns = paired(
        objects=objects, oracle=oracle, out_captions=out_captions, out_objects=out_objects
    )
    if len(columns) != len(settings.instructions):
        raise InputError(
            f"--objects, --oracle, --out-captions, --out-objects: {len(columns)} files each, "
            f"expected one per instruction of --settings ({len(settings.instructions)})"
        )
    words, matrix = load_vectors(vectors)
    scorer = CAOSScorer(
        VectorTable(words, matrix),
        frequent_objects(settings.frequent),
        k=settings.k,
        k_max=settings.k_max,
    )
    by_image = load_items(items)
    for instruction, files in zip(settings.instructions, columns, strict=True):
        ids = {"model": model_id, "embedder": settings.embedder, "instruction_id": instruction}
        _score_file(scorer, settings.k_max, ids, by_image, *files)


def _score_file(
    scorer: CAOSScorer,
    k_max: int,
    ids: dict[str, str],
    items: dict,
    objects: Path,
    oracle: Path,
    out_captions: Path,
    out_objects: Path,
) -> None:
    decisions = load_decisions(oracle)
    caption_rows, object_rows = [], []
    for rec in read_jsonl(objects):
        image_id = rec["image_id"]
        gt = set(items[image_id].get("gt_objects", []))
        mentions = caption_objects(rec, gt, decisions)
        objs = distinct_objects(mentions)
        result = scorer.score_caption(sorted(gt), objs)
        bounds = {}
        for bound in BOUNDS:
            scores = (
                scorer.score_caption(sorted(gt), objs, unverified=bound).scores
                if any(o.present is None for o in objs)
                else result.scores
            )
            bounds.update({f"{s}_if_{bound}": v for s, v in scores.items()})
        key = {**ids, "image_id": image_id}
        mentioned = {o.name for o in objs if o.in_domain}
        caption_rows.append(
            {
                **key,
                "n_objects": len(objs),
                "n_mentions": len(mentions),
                "n_in_domain": sum(o.in_domain for o in objs),
                "n_in_domain_mentions": sum(o.in_domain for o in mentions),
                "n_in_domain_hallucinated_mentions": sum(
                    o.in_domain and o.present is False for o in mentions
                ),
                "n_hallucinated": sum(o.present is False for o in objs),
                "n_in_domain_hallucinated": sum(o.in_domain and o.present is False for o in objs),
                "n_unverified": sum(o.present is None for o in objs),
                "n_gt": len(gt),
                "n_gt_mentioned": len(gt & mentioned),
                "n_scored": result.n_hallucinated,
                **result.scores,
                **bounds,
                "missing_vectors": "|".join(result.missing),
            }
        )
        object_rows.extend({**key, **row} for row in result.objects)
    write_csv(out_captions, CAPTION_COLUMNS, caption_rows)
    write_csv(out_objects, object_columns(k_max), object_rows)
