"""Embed stage: one vector per name that CAOS will compare (objects, GT, frequent objects)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.benchmarks.caos.k_order import frequent_objects
from halluscope.io import read_jsonl, write_json
from halluscope.settings import StageSettings, keyed_values, param, plain
from halluscope.stage_command import stage
from halluscope.stages.data import load_items


@dataclass(frozen=True)
class EmbedSettings(StageSettings):
    """What one embed job reads from params: the embedder id and its spec (``embed.specs``) and
    the K order of CAOS (``caos.frequent``), whose names are embedded too."""

    embedder_id: str
    spec: dict
    frequent: str | list[str] = param("caos.frequent")

    @classmethod
    def from_config(cls, config: Mapping[str, Any], embedder: str) -> EmbedSettings:
        spec = plain(config["embed"]["specs"][embedder])
        return cls(embedder, spec, **keyed_values(cls, config))

    @classmethod
    def jobs(cls, config: Mapping[str, Any]) -> list[dict[str, str]]:
        return [{"embedder": e} for e in config["embed"]["embedders"]]


@stage("embed")
def run(
    objects: tuple[Path, ...] = (),
    /,
    *,
    settings: EmbedSettings,
    items: Path,
    out: Path,
    missing: Path,
) -> None:
    """One vector per object name CAOS compares, for one embedder.

    Writes ``{embedder}.npz`` (``out``) and the list of names without a vector (``missing``)."""
    from halluscope.embeddings import embed_names, load_embedder, save_vectors
    from halluscope.objects.coco import COCO_CLASSES

    # every MSCOCO class, so that any K order (caos.frequent, caos.sensitivity) has its vectors
    embedder_id = settings.embedder_id
    names: set[str] = set(frequent_objects(settings.frequent)) | set(COCO_CLASSES)
    for item in load_items(items).values():
        names.update(item.get("gt_objects", []))
        names.update(item.get("other_objects", []))
    for path in objects:
        for rec in read_jsonl(path):
            names.update(o["name"] for o in rec["objects"])
    embedder = load_embedder(embedder_id, settings.spec)
    words, matrix, unknown = embed_names(embedder, sorted(names))
    save_vectors(out, words, matrix)
    record = {"embedder": embedder_id, "missing": unknown, "n_embedded": len(words)}
    if settings.spec.get("kind") == "sentence-transformers":
        from halluscope.determinism import torch_kernels

        record["kernels"] = torch_kernels()  # the pinned kernel set that computed the vectors
    write_json(missing, record)
