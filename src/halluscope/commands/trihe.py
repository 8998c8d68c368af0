"""``halluscope trihe``: Hallu_Q / Hallu_I from per-triplet judgements (JSONL).

Each line: ``{"image_id", "question_id", "judgments": ["yes"|"no"|"null", ...],
"errors": ["object"|"relation"|null, ...]}``, one line per (image, question) with one entry per
triplet extracted from the model's answer. ``"yes"`` = supported by the references, ``"no"`` =
hallucinated, ``"null"`` = unparseable judge reply (JSON ``null`` is read as ``"null"``).
``errors`` names the hallucinated part of a ``"no"`` (null otherwise); leave the key out on
every line when the judge gives no attribution (then the object/relation rates are null).
Definitions: :mod:`halluscope.metrics.trihe`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from halluscope.io import InputError


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "trihe", help="Tri-HE Hallu_Q / Hallu_I (overall, object, relation) from judgements"
    )
    parser.add_argument("--judgments", type=Path, required=True, help="judgements JSONL")
    parser.add_argument("--out", type=Path, required=True, help="output JSON")
    parser.add_argument(
        "--unattributed",
        choices=("relation", "none"),
        default="relation",
        help="what a 'no' without attribution counts as (released code: relation)",
    )
    parser.set_defaults(func=run)


_EXPECTED = (
    'expected {"image_id", "question_id", "judgments": ["yes"|"no"|"null", ...], '
    '"errors": ["object"|"relation"|null, ...]}'
)


def read_judgments(path: Path) -> list[Any]:
    """Read and check the JSONL file; every error names the file and the line."""
    from halluscope.io import iter_jsonl
    from halluscope.metrics.trihe import QuestionJudgments

    out: list[QuestionJudgments] = []
    seen: dict[tuple[str, str], int] = {}
    with_errors: list[bool] = []
    for number, rec in enumerate(iter_jsonl(path), start=1):
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
    from halluscope.io import write_json
    from halluscope.metrics.trihe import hallucination_rates

    questions = read_judgments(args.judgments)
    if not questions:
        raise InputError(f"{args.judgments}: no judgement line; {_EXPECTED}")
    write_json(args.out, hallucination_rates(questions, unattributed=args.unattributed))
