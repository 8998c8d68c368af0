"""Oracle stage: is each out-of-domain object really in the image? (Algorithm 1, step 5)."""

from __future__ import annotations

from pathlib import Path

from halluscope.io import read_jsonl, write_jsonl
from halluscope.stages.data import load_items

METHODS = ("annotations", "none")


def run(objects: Path, items_path: Path, method: str, out: Path) -> None:
    """One record per (image, out-of-domain object), in caption order of first mention.

    ``annotations`` answers from the authored ``other_objects`` of the item (the demo's
    ground truth); ``none`` leaves presence unknown (``present: null``, reported as unverified).
    """
    if method not in METHODS:
        raise ValueError(f"oracle.method: unknown method {method!r}; valid: {', '.join(METHODS)}")
    items = load_items(items_path)
    records = []
    for rec in read_jsonl(objects):
        seen = set()
        present_set = set(items[rec["image_id"]].get("other_objects", []))
        for obj in rec["objects"]:
            if obj["in_domain"] or obj["name"] in seen:
                continue
            seen.add(obj["name"])
            present = obj["name"] in present_set if method == "annotations" else None
            records.append(
                {
                    "image_id": rec["image_id"],
                    "name": obj["name"],
                    "present": present,
                    "votes": {},
                    "method": method,
                }
            )
    write_jsonl(out, records)


def load_decisions(path: str | Path) -> dict[tuple[str, str], bool | None]:
    """(image id, object name) -> presence decision."""
    return {(r["image_id"], r["name"]): r["present"] for r in read_jsonl(path)}
