"""Oracle stage: is each out-of-domain object really in the image? (Algorithm 1, step 5).

``method``:

- ``ensemble``: the CAOS LVLM-ensemble oracle (:mod:`halluscope.models.oracle`): every member model
  (``oracle.members``, ids of ``models:``) answers "Does the image contain <object>? ..." through
  the response cache; majority vote, ties Absent. The demo's members are the simulated LVLMs, which
  err with their ``oracle_error_rate``;
- ``annotations``: presence from the item's annotated ``other_objects`` (the demo's ground truth);
- ``none``: presence unknown (``present: null``, reported as unverified and counted, never
  guessed).

Items without labels (no ``other_objects``) give ``present: null`` under ``annotations``; items
without an image give ``present: null`` under ``ensemble``.

Outputs: ``results/oracle/{profile}/{model}/{instruction}.jsonl`` with one record per (image,
out-of-domain object) in caption order of first mention, ``{"image_id", "name", "present",
"votes", "method"}`` (+ ``answers`` for the ensemble), and ``...{instruction}.accuracy.json``:
the accuracy of each member and of the decision on the labelled objects
(:func:`halluscope.models.oracle.accuracy_report`). :func:`pool` writes the same report over every
oracle file of a dataset (each distinct image/object pair once).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.io import InputError, read_jsonl, write_json, write_jsonl
from halluscope.settings import StageSettings, derived, param
from halluscope.stage_command import stage
from halluscope.stages.data import load_items
from halluscope.stages.llm import LLMSettings, generation_block

METHODS = ("annotations", "ensemble", "none")


@dataclass(frozen=True)
class OracleSettings(StageSettings):
    """What one oracle job reads from params (section ``oracle``): the method and, for
    ``ensemble``, the member models, each asked with the section's generation block."""

    method: str = param("oracle.method")
    members: tuple[LLMSettings, ...] = derived(lambda config: ensemble(config), default=())


def ensemble(config: Mapping[str, Any]) -> tuple[LLMSettings, ...]:
    """The members of an ``ensemble`` oracle in id order (the order of the vote records and
    the accuracy report), each asked with the section's generation block; none otherwise."""
    oracle = config["oracle"]
    if oracle["method"] != "ensemble":
        return ()
    block = generation_block(oracle)
    return tuple(
        LLMSettings.from_block(config, block, "oracle.members", model=model_id)
        for model_id in sorted(oracle.get("members", []))
    )


def out_of_domain_pairs(objects: Path, items: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(image id, object name) of every out-of-domain object, first mention order, no repeats."""
    pairs: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for number, rec in enumerate(read_jsonl(objects), start=1):
        image_id = rec.get("image_id")
        if image_id not in items:
            raise InputError(f"{objects}:{number}: image id {image_id!r} is not in the items")
        for obj in rec.get("objects", []):
            pair = (image_id, obj["name"])
            if obj["in_domain"] or pair in seen:
                continue
            seen.add(pair)
            pairs.append(pair)
    return pairs


@stage("oracle-decide")
def run(
    settings: OracleSettings,
    objects: Path,
    items: Path,
    out: Path,
    accuracy: Path | None = None,
    cache: Path | None = None,
) -> dict[str, Any]:
    """Presence decisions (in the image or not) for one objects file.

    Writes the decisions (and, with ``accuracy``, the accuracy report); returns the report (the
    rule's log). ``cache``: the response cache folder of the ensemble."""
    from halluscope.models.oracle import EnsembleOracle, accuracy_report, label

    method, members = settings.method, settings.members
    if method not in METHODS:
        raise ValueError(f"oracle.method: unknown method {method!r}; valid: {', '.join(METHODS)}")
    by_id = load_items(items)
    pairs = out_of_domain_pairs(objects, by_id)
    unparsed: dict[str, int] = {}
    if method == "ensemble":
        from halluscope.models.base import make_backend
        from halluscope.models.cache import ResponseCache

        if not members:
            raise ValueError("oracle.members: the ensemble method needs at least one member")
        if cache is None:
            raise ValueError("oracle: the ensemble method needs a response cache folder (--cache)")
        backends = {
            m.model_id: make_backend(m.spec, model_name=m.model_id, answer_keys=True)
            for m in members
        }
        shared = members[0]  # one generation block asks every member
        oracle = EnsembleOracle(
            backends,
            ResponseCache(cache, shared.cache_mode),
            dict(shared.params),
            shared.template_version,
            shared.batch_size,
        )
        records = oracle.decide(by_id, pairs)
        unparsed = dict(oracle.unparsed)
    else:
        records = [
            {
                "image_id": image_id,
                "name": name,
                "present": label(by_id[image_id], name) if method == "annotations" else None,
                "votes": {},
                "method": method,
            }
            for image_id, name in pairs
        ]
    write_jsonl(out, records)
    report = {"method": method, **accuracy_report(records, by_id), "unparsed_answers": unparsed}
    if accuracy is not None:
        write_json(accuracy, report)
    return report


@stage("oracle-pool")
def pool(oracle_files: list[Path], /, *, items: Path, out: Path) -> None:
    """Oracle accuracy over many oracle files (each distinct image/object pair once)."""
    from halluscope.models.oracle import accuracy_report

    by_id = load_items(items)
    records: list[dict[str, Any]] = []
    methods: set[str] = set()
    for path in oracle_files:
        for rec in read_jsonl(path):
            records.append(rec)
            methods.add(str(rec.get("method")))
    report = {
        "files": len(oracle_files),
        "method": "|".join(sorted(methods)),
        **accuracy_report(records, by_id),
    }
    write_json(out, report)


def load_decisions(path: str | Path) -> dict[tuple[str, str], bool | None]:
    """(image id, object name) -> presence decision."""
    return {(r["image_id"], r["name"]): r["present"] for r in read_jsonl(path)}
