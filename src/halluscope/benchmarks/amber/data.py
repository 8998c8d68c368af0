"""AMBER's data: the generative queries and their annotations, as items and prompts.

Files (registered in :mod:`halluscope.data.sources`, read from ``../shared/data`` or downloaded
with checksums; a path works too): ``amber/query/query_generative.json`` (1,004 records
``{"id", "image", "query"}``, every query "Describe this image."), ``amber/annotations.json``
(entry ``id`` N at index N-1: ``truth`` = objects in the image, ``hallu`` = objects that are not,
chosen by AMBER's authors as likely hallucinations). The images (``AMBER_<id>.jpg``) are not on
these machines: with ``data.images`` unset, items have ``image: null`` and only answerers that do
not look at the image (the simulated LVLMs, recorded responses) can run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from halluscope.io import InputError, read_json


def load_queries(path: Path) -> list[dict[str, Any]]:
    """The generative queries, validated (``id`` positive int, ``image`` and ``query`` strings)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(
            f"{path}: expected a JSON list of AMBER queries, got {type(data).__name__}"
        )
    out = []
    for index, record in enumerate(data):
        ok = isinstance(record, dict) and isinstance(record.get("id"), int) and record["id"] > 0
        if not ok or not all(isinstance(record.get(k), str) for k in ("image", "query")):
            raise InputError(
                f"{path}: record {index}: expected {{'id': positive int, 'image': str, "
                f"'query': str}}, got {record!r}"[:300]
            )
        out.append(record)
    ids = [r["id"] for r in out]
    if len(set(ids)) != len(ids):
        duplicate = next(i for i in ids if ids.count(i) > 1)
        raise InputError(f"{path}: duplicate query id {duplicate}")
    return out


def items(options: dict[str, Any]) -> list[dict]:
    """One item per generative query (file order, ``data.limit`` first ones). The annotations
    (``amber.annotations``) enter at the prompts stage, as each prompt's answer key."""
    from halluscope.data.fetch import resolve_input
    from halluscope.stages.data import image_file, image_item, limit_records

    queries = load_queries(resolve_input(options.get("image_list") or QUERIES))
    out = []
    for record in limit_records(queries, options):
        image_id = Path(record["image"]).stem
        source = {
            "dataset": "AMBER (generative)",
            "amber_id": record["id"],
            "query": record["query"],
        }
        out.append(image_item(image_id, image_file(options, record["image"], image_id), source))
    return out


QUERIES = "amber/query/query_generative.json"
