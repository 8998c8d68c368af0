"""Embed stage: one vector per name that CAOS will compare (objects, GT, frequent objects)."""

from __future__ import annotations

from pathlib import Path

from halluscope.io import read_jsonl, write_json
from halluscope.stages.data import load_items


def frequent_objects(frequent: str | list[str]) -> list[str]:
    """The K list of CAOS: ``coco`` = MSCOCO classes by training frequency, or an explicit list."""
    if frequent == "coco":
        from halluscope.objects.coco import COCO_FREQUENCY_ORDER

        return list(COCO_FREQUENCY_ORDER)
    return list(frequent)


def run(
    embedder_id: str,
    spec: dict,
    frequent: str | list[str],
    items_path: Path,
    object_files: list[Path],
    out: Path,
    missing_out: Path,
) -> None:
    """Write ``{embedder}.npz`` and the list of names without a vector."""
    from halluscope.embeddings import embed_names, load_embedder, save_vectors

    names: set[str] = set(frequent_objects(frequent))
    for item in load_items(items_path).values():
        names.update(item.get("gt_objects", []))
        names.update(item.get("other_objects", []))
    for path in object_files:
        for rec in read_jsonl(path):
            names.update(o["name"] for o in rec["objects"])
    embedder = load_embedder(embedder_id, spec)
    words, matrix, missing = embed_names(embedder, sorted(names))
    save_vectors(out, words, matrix)
    write_json(missing_out, {"embedder": embedder_id, "missing": missing, "n_embedded": len(words)})
