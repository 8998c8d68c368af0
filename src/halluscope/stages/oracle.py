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

Outputs: ``results/oracle/{dataset}/{model}/{instruction}.jsonl`` with one record per (image,
out-of-domain object) in caption order of first mention, ``{"image_id", "name", "present",
"votes", "method"}`` (+ ``answers`` for the ensemble), and ``...{instruction}.accuracy.json``:
the accuracy of each member and of the decision on the labelled objects
(:func:`halluscope.models.oracle.accuracy_report`). :func:`pool` writes the same report over every
oracle file of a dataset (each distinct image/object pair once).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from halluscope.io import InputError, input_error_exit, read_jsonl, write_json, write_jsonl
from halluscope.stages.data import load_items

METHODS = ("annotations", "ensemble", "none")


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


def run(
    objects: Path,
    items_path: Path,
    method: str,
    out: Path,
    accuracy_out: Path | None = None,
    members: Mapping[str, Mapping[str, Any]] | None = None,
    params: Mapping[str, Any] | None = None,
    template_version: str = "v1",
    cache_dir: Path | None = None,
    cache_mode: str = "live",
) -> dict[str, Any]:
    """Write the decisions (and, with ``accuracy_out``, the accuracy report); returns the report.

    ``members`` maps member ids to model specs (``ensemble`` only); ``params`` are the generation
    params of the questions plus an optional ``batch_size``.
    """
    from halluscope.models.oracle import EnsembleOracle, accuracy_report, label

    if method not in METHODS:
        raise ValueError(f"oracle.method: unknown method {method!r}; valid: {', '.join(METHODS)}")
    items = load_items(items_path)
    pairs = out_of_domain_pairs(objects, items)
    unparsed: dict[str, int] = {}
    if method == "ensemble":
        from halluscope.models.base import make_backend
        from halluscope.models.cache import ResponseCache

        if not members:
            raise ValueError("oracle.members: the ensemble method needs at least one member")
        if cache_dir is None:
            raise ValueError("oracle: the ensemble method needs a response cache folder (--cache)")
        gen = dict(params or {})
        batch_size = int(gen.pop("batch_size", 16))
        backends = {
            member: make_backend(spec, model_name=member, answer_keys=True)
            for member, spec in members.items()
        }
        oracle = EnsembleOracle(
            backends, ResponseCache(cache_dir, cache_mode), gen, template_version, batch_size
        )
        records = oracle.decide(items, pairs)
        unparsed = dict(oracle.unparsed)
    else:
        records = [
            {
                "image_id": image_id,
                "name": name,
                "present": label(items[image_id], name) if method == "annotations" else None,
                "votes": {},
                "method": method,
            }
            for image_id, name in pairs
        ]
    write_jsonl(out, records)
    report = {"method": method, **accuracy_report(records, items), "unparsed_answers": unparsed}
    if accuracy_out is not None:
        write_json(accuracy_out, report)
    return report


def pool(oracle_files: Sequence[Path], items_path: Path, out: Path) -> dict[str, Any]:
    """One accuracy report over many oracle files (each distinct image/object pair once)."""
    from halluscope.models.oracle import accuracy_report

    items = load_items(items_path)
    records: list[dict[str, Any]] = []
    methods: set[str] = set()
    for path in oracle_files:
        for rec in read_jsonl(path):
            records.append(rec)
            methods.add(str(rec.get("method")))
    report = {
        "files": len(oracle_files),
        "method": "|".join(sorted(methods)),
        **accuracy_report(records, items),
    }
    write_json(out, report)
    return report


def load_decisions(path: str | Path) -> dict[tuple[str, str], bool | None]:
    """(image id, object name) -> presence decision."""
    return {(r["image_id"], r["name"]): r["present"] for r in read_jsonl(path)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of the decide step (shared by ``python -m`` and the ``halluscope`` CLI)."""
    parser.add_argument("--objects", type=Path, required=True)
    parser.add_argument("--items", type=Path, required=True)
    parser.add_argument("--method", required=True, choices=METHODS)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--accuracy", type=Path, default=None)
    parser.add_argument("--members", type=json.loads, default=None, help="{id: model spec} JSON")
    parser.add_argument("--params", type=json.loads, default=None, help="generation params JSON")
    parser.add_argument("--template-version", default="v1")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--cache-mode", default="live", choices=("live", "record", "replay"))


def run_args(args: argparse.Namespace) -> None:
    """Run the decide step from parsed flags; the report goes to stderr (the rule's log)."""
    report = run(
        args.objects,
        args.items,
        args.method,
        args.out,
        accuracy_out=args.accuracy,
        members=args.members,
        params=args.params,
        template_version=args.template_version,
        cache_dir=args.cache,
        cache_mode=args.cache_mode,
    )
    print(json.dumps(report, sort_keys=True), file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """``python -m halluscope.stages.oracle {decide,pool} ...``; bad input -> one line, status 2."""
    parser = argparse.ArgumentParser(prog="halluscope-oracle", description=__doc__)
    sub = parser.add_subparsers(dest="step", required=True)
    add_arguments(sub.add_parser("decide", help="decisions for one objects file"))
    pooled = sub.add_parser("pool", help="accuracy over many oracle files")
    pooled.add_argument("--items", type=Path, required=True)
    pooled.add_argument("--out", type=Path, required=True)
    pooled.add_argument("oracle_files", type=Path, nargs="+")
    args = parser.parse_args(argv)
    try:
        if args.step == "decide":
            run_args(args)
        else:
            pool(args.oracle_files, args.items, args.out)
    except (InputError, ValueError, KeyError, FileNotFoundError) as err:
        return input_error_exit("halluscope oracle", err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
