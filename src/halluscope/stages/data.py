"""Data stage: per-image ground truth (items.jsonl) and exported images."""

from __future__ import annotations

from pathlib import Path

from halluscope.io import InputError, read_jsonl


def run(dataset: str, annotations: Path, items: Path, images: Path) -> None:
    """Build ``items.jsonl`` for a dataset (only the authored demo dataset so far)."""
    if dataset != "demo":
        raise InputError(f"data.dataset: unknown dataset {dataset!r}; valid datasets: demo")
    from halluscope.data.demo import export_items, load_annotations

    export_items(load_annotations(annotations), images, items)


def load_items(path: str | Path) -> dict[str, dict]:
    """Items by image id; duplicate ids are refused with the file and line."""
    out: dict[str, dict] = {}
    for number, item in enumerate(read_jsonl(path), start=1):
        image_id = item.get("image_id")
        if not isinstance(image_id, str) or not image_id:
            raise InputError(f"{path}:{number}: expected a non-empty string 'image_id'")
        if image_id in out:
            raise InputError(f"{path}:{number}: duplicate image id {image_id!r}")
        out[image_id] = item
    return out
