"""``halluscope trihe``: Hallu_Q / Hallu_I from per-triplet judgements (JSONL).

Each line: ``{"image_id", "question_id", "judgments": ["yes"|"no"|"null", ...],
"errors": ["object"|"relation"|null, ...]}``, one line per (image, question) with one entry per
triplet extracted from the model's answer. ``"yes"`` = supported by the references, ``"no"`` =
hallucinated, ``"null"`` = unparseable judge reply (JSON ``null`` is read as ``"null"``).
``errors`` names the hallucinated part of a ``"no"`` (null otherwise); leave the key out on
every line when the judge gives no attribution (then the object/relation rates are null).

The pipeline's own ``results/trihe/<profile>/<model>/judgments.jsonl`` nests one such entry per
judge (``{"image_id", "question_id", "triplets", "judges": {NAME: {"judgments", "errors",
"scores"}}}``): ``--judge NAME`` picks one, and gives the Hallu_Q / Hallu_I of that judge in the
model's ``scores.json``. Definitions: :mod:`halluscope.benchmarks.trihe.metric`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from halluscope.hand_check import add_command
from halluscope.hand_check_intervals import add_interval_options
from halluscope.io import InputError

FORMATS = (
    '  --judgments JSONL, one line per (image, question): {"image_id", "question_id", '
    '"judgments": ["yes"|"no"|"null", ...], "errors": ["object"|"relation"|null, ...]} '
    '("errors" on every line or on none); or the pipeline\'s nested '
    'results/trihe/<profile>/<model>/judgments.jsonl ({"image_id", "question_id", "triplets", '
    '"judges": {NAME: {"judgments", "errors", "scores"}}}) with --judge NAME',
    '  --out       JSON written: {"hallu_q", "hallu_i", "object_q", "object_i", "relation_q", '
    '"relation_i" (percent), "n_scored", "n_triplets", "n_hallucinated", "n_null", ..., '
    '"intervals": {"hallu_q", ...: {"lo", "hi", "level", "method", "unit", "n_units"}}, '
    '"interval_settings"} (the image resampled, its questions together; the cluster bootstrap, '
    "in percent; --no-intervals leaves them out)",
)
"""The input and output formats, one ``--help`` line each (long lines are not wrapped)."""


def add_parser(subparsers: Any) -> None:
    parser = add_command(
        subparsers,
        "trihe",
        run,
        help_text="Tri-HE Hallu_Q / Hallu_I (overall, object, relation) from judgements",
        description="Tri-HE hallucination rates of judged triplets: Hallu_Q (per question) and "
        "Hallu_I (per image), overall and split into object and relation hallucination.",
        formats=FORMATS,
        example=(
            "  halluscope trihe --judgments results/trihe/demo/sim-precise/judgments.jsonl \\",
            "      --judge slots --out trihe.json",
        ),
        inputs={"--judgments": "judgements JSONL"},
    )
    parser.add_argument(
        "--judge",
        default=None,
        metavar="NAME",
        help="the judge to score in the pipeline's nested judgments.jsonl (e.g. slots)",
    )
    parser.add_argument("--out", type=Path, required=True, help="output JSON")
    parser.add_argument(
        "--unattributed",
        choices=("relation", "none"),
        default="relation",
        help="what a 'no' without attribution counts as (released code: relation)",
    )
    add_interval_options(parser)


_EXPECTED = (
    'expected {"image_id", "question_id", "judgments": ["yes"|"no"|"null", ...], '
    '"errors": ["object"|"relation"|null, ...]}'
)


def _judges_found(path: Path, records: list[Any]) -> list[str]:
    """The judge names of a nested (pipeline) judgments file, in order of first appearance;
    checks that every line is nested and every ``judges`` value is an object of objects."""
    found: dict[str, None] = {}
    for number, rec in enumerate(records, start=1):
        where = f"{path}:{number}"
        if "judges" not in rec:
            raise InputError(
                f"{where}: no 'judges' key, but line 1 has one; expected every line nested "
                '({"image_id", "question_id", "judges": {NAME: {"judgments", "errors"}}}) '
                "or none"
            )
        judges = rec["judges"]
        if not isinstance(judges, dict) or not all(isinstance(v, dict) for v in judges.values()):
            raise InputError(
                f"{where}: 'judges' must map judge names to "
                '{"judgments": [...], "errors": [...]}'
            )
        found.update(dict.fromkeys(judges))
    return list(found)


def _select_judge(path: Path, records: list[Any], judge: str | None) -> list[Any]:
    """Flat records of one judge from a nested (pipeline) file; flat files as they are."""
    nested = bool(records) and "judges" in records[0]
    if not nested:
        if judge is not None:
            raise InputError(
                f"{path}: --judge {judge} given, but the lines have no 'judges' key (flat "
                "judgements of one judge); leave --judge out"
            )
        return records
    found = _judges_found(path, records)
    if judge is None:
        raise InputError(
            f"{path}: nested judgements of {len(found)} judge(s): {', '.join(found)}; "
            "choose one with --judge NAME"
        )
    if judge not in found:
        raise InputError(f"{path}: no judge {judge!r}; judges found: {', '.join(found)}")
    flat = []
    for number, rec in enumerate(records, start=1):
        if judge not in rec["judges"]:
            raise InputError(
                f"{path}:{number}: no judge {judge!r} on this line "
                f"(judges here: {', '.join(rec['judges']) or 'none'})"
            )
        entry = rec["judges"][judge]
        flat.append(
            {
                **{k: v for k, v in rec.items() if k in ("image_id", "question_id")},
                **{k: entry[k] for k in ("judgments", "errors") if k in entry},
            }
        )
    return flat


def read_judgments(path: Path, judge: str | None = None) -> list[Any]:
    """Read and check the JSONL file; every error names the file and the line. ``judge``: the
    judge to read from the pipeline's nested ``judgments.jsonl`` (required for that format)."""
    from halluscope.benchmarks.trihe.metric import QuestionJudgments
    from halluscope.hand_check import no_records
    from halluscope.io import iter_jsonl

    out: list[QuestionJudgments] = []
    seen: dict[tuple[str, str], int] = {}
    with_errors: list[bool] = []
    records = list(iter_jsonl(path))
    if not records:
        expected = "one line per question: " + _EXPECTED.removeprefix("expected ")
        raise no_records("--judgments", path, "judgement line", expected)
    records = _select_judge(path, records, judge)
    for number, rec in enumerate(records, start=1):
        where = f"{path}:{number}"
        missing = [k for k in ("image_id", "question_id", "judgments") if k not in rec]
        if missing:
            raise InputError(f"{where}: missing {', '.join(missing)}; {_EXPECTED}")
        image_id, question_id = rec["image_id"], rec["question_id"]
        for name, value in (("image_id", image_id), ("question_id", question_id)):
            if not isinstance(value, str | int) or isinstance(value, bool):
                raise InputError(f"{where}: {name} must be a string or an integer")
        key = (str(image_id), str(question_id))
        if key in seen:
            raise InputError(
                f"{where}: image {key[0]!r} question {key[1]!r} already on line {seen[key]}"
            )
        seen[key] = number
        judgments = rec["judgments"]
        if not isinstance(judgments, list):
            raise InputError(f"{where}: judgments must be a list; {_EXPECTED}")
        judgments = ["null" if j is None else j for j in judgments]
        errors = rec.get("errors")
        if errors is not None and not isinstance(errors, list):
            raise InputError(f"{where}: errors must be a list; {_EXPECTED}")
        if errors is not None and len(errors) != len(judgments):
            raise InputError(
                f"{where}: {len(judgments)} judgments but {len(errors)} errors; "
                "expected one errors entry per judgment"
            )
        with_errors.append("errors" in rec)
        if len(set(with_errors)) > 1:
            raise InputError(
                f"{where}: 'errors' is given on some lines and missing on others; "
                "give it on every line or on none"
            )
        try:
            out.append(
                QuestionJudgments(
                    str(image_id),
                    question_id,
                    tuple(judgments),
                    tuple(errors) if errors is not None else None,
                )
            )
        except (ValueError, TypeError) as err:
            raise InputError(f"{where}: {err}") from None
    return out


def run(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.trihe.intervals import trihe_intervals
    from halluscope.benchmarks.trihe.metric import hallucination_rates
    from halluscope.hand_check import report, score_text, warn, write_result
    from halluscope.hand_check_intervals import attach, bracket, interval_settings

    settings = interval_settings(args, "image")
    questions = read_judgments(args.judgments, args.judge)
    rates = hallucination_rates(questions, unattributed=args.unattributed)
    if settings is not None:
        attach(rates, trihe_intervals(questions, rates, args.unattributed, settings), settings)
    write_result(args.out, rates)
    if rates["hallu_q"] is None:
        warn("trihe", "no question has a judged triplet: Hallu_Q and Hallu_I are undefined (null)")
    elif rates["n_null"] == rates["n_triplets"]:
        warn(
            "trihe", "every judgement is null (no judge reply parsed): counted as not hallucinated"
        )
    judge = f" (judge {args.judge})" if args.judge else ""
    report(
        "trihe",
        f"{len(questions)} questions{judge}, {rates['n_triplets']} triplets, Hallu_Q "
        f"{score_text(rates['hallu_q'], 1)}%{bracket(rates.get('intervals', {}).get('hallu_q'), 1)}"
        f", Hallu_I {score_text(rates['hallu_i'], 1)}%",
        args.out,
    )
