"""Score stage: CAOS and CHAIR-style counts for one model x instruction x embedder."""

from __future__ import annotations

from pathlib import Path

from halluscope.io import read_jsonl
from halluscope.metrics.caos import SCORES, CAOSScorer, CaptionObject, VectorTable
from halluscope.stages.csvio import write_csv
from halluscope.stages.data import load_items
from halluscope.stages.embed import frequent_objects
from halluscope.stages.oracle import load_decisions

KEYS = ("model", "embedder", "instruction_id", "image_id")
CAPTION_COLUMNS = (
    *KEYS,
    "n_objects",
    "n_unique_objects",
    "n_in_domain",
    "n_hallucinated",
    "n_in_domain_hallucinated",
    "n_unverified",
    "n_gt",
    "n_gt_mentioned",
    "n_scored",
    *SCORES,
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


def run(
    objects: Path,
    oracle: Path,
    items_path: Path,
    vectors: Path,
    k: int,
    k_max: int,
    frequent: str | list[str],
    model_id: str,
    instruction_id: str,
    embedder_id: str,
    out_captions: Path,
    out_objects: Path,
) -> None:
    from halluscope.embeddings import load_vectors

    items = load_items(items_path)
    decisions = load_decisions(oracle)
    words, matrix = load_vectors(vectors)
    scorer = CAOSScorer(VectorTable(words, matrix), frequent_objects(frequent), k=k, k_max=k_max)
    caption_rows, object_rows = [], []
    for rec in read_jsonl(objects):
        image_id = rec["image_id"]
        gt = set(items[image_id].get("gt_objects", []))
        objs = caption_objects(rec, gt, decisions)
        result = scorer.score_caption(sorted(gt), objs)
        key = {
            "model": model_id,
            "embedder": embedder_id,
            "instruction_id": instruction_id,
            "image_id": image_id,
        }
        mentioned = {o.name for o in objs if o.in_domain}
        caption_rows.append(
            {
                **key,
                "n_objects": len(objs),
                "n_unique_objects": len({o.name for o in objs}),
                "n_in_domain": sum(o.in_domain for o in objs),
                "n_hallucinated": sum(o.present is False for o in objs),
                "n_in_domain_hallucinated": sum(o.in_domain and o.present is False for o in objs),
                "n_unverified": sum(o.present is None for o in objs),
                "n_gt": len(gt),
                "n_gt_mentioned": len(gt & mentioned),
                "n_scored": result.n_hallucinated,
                **result.scores,
                "missing_vectors": "|".join(result.missing),
            }
        )
        object_rows.extend({**key, **row} for row in result.objects)
    write_csv(out_captions, CAPTION_COLUMNS, caption_rows)
    write_csv(out_objects, object_columns(k_max), object_rows)
