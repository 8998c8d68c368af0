"""``halluscope nope`` (NOPE answer scores) and ``halluscope lexdiv`` (lexical diversity).

Hand-check tools: feed a JSONL of answers or questions, get one JSON file of scores. Every input
problem is reported as ``file:line: what was expected``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from halluscope.hand_check import add_command
from halluscope.hand_check_intervals import add_interval_options
from halluscope.io import InputError, iter_jsonl_numbered

NOPE_FORMATS = (
    '  --answers   JSONL, one answer per line: {"question_id", "is_negp": bool, "reference": '
    'str or [str, ...], "answer": str, "question_type" (optional), "relevance" (optional)}, e.g. '
    "the pipeline's results/nope/<profile>/<model>/answers.jsonl",
    '  --out       JSON written: {"overall", "negp": {"accuracy", "meteor", "negp_accuracy", '
    '"n", "by_question_type", "by_relevance"}, "non_negp": {...}, "definitions", "answers": '
    '[...], "input", "intervals": {"overall": {"accuracy", "meteor", "by_question_type": '
    '{TYPE: {...}}, ...}, "negp": {...}, "non_negp": {...}}, "interval_settings"} (the '
    '"image_id" resampled when every line has one, else the answer: accuracies by Wilson\'s '
    "interval, METEOR by the cluster bootstrap; --no-intervals leaves them out)",
)
"""``halluscope nope`` input and output formats, one ``--help`` line each."""

LEXDIV_FORMATS = (
    '  --questions JSONL, one question per line: {"question": str, ...} (the text field is '
    '--field; records with "valid": false dropped unless --all), e.g. the pipeline\'s '
    "results/nope/<profile>/questions.jsonl; or a .txt file, one question per line",
    '  --out       JSON written: {"overall": {"questions", "mattr", "mtld", "hdd", ...}, '
    '"groups": {FIELD: {value: {...}}}, "input", "field", "dropped_invalid", "text"}',
)
"""``halluscope lexdiv`` input and output formats, one ``--help`` line each."""


def add_parser(subparsers: Any) -> None:
    """Add the ``nope`` and ``lexdiv`` subcommands."""
    nope = add_command(
        subparsers,
        "nope",
        run,
        help_text="NOPE scores (exact match, METEOR, NegP accuracy) of a JSONL of answers",
        description="Score VQA answers the NOPE way: accuracy (exact match after "
        "normalisation), METEOR 1.5 (needs Java; --no-meteor skips it) and NegP accuracy.",
        formats=NOPE_FORMATS,
        example=(
            "  halluscope nope --answers results/nope/demo/sim-precise/answers.jsonl "
            "--out nope.json --no-meteor",
        ),
        inputs={"--answers": "JSONL of answer records"},
    )
    nope.add_argument("--out", type=Path, required=True, help="output JSON")
    nope.add_argument("--no-meteor", action="store_true", help="skip METEOR (no Java needed)")
    nope.add_argument(
        "--no-zero",
        action="store_true",
        help='do not count "zero"/"0" as NegP answers (Table 6 counting answers)',
    )
    nope.add_argument(
        "--no-per-answer", action="store_true", help="leave the per-answer rows out of the output"
    )
    add_interval_options(nope)

    lexdiv = add_command(
        subparsers,
        "lexdiv",
        run_lexdiv,
        help_text="MATTR, MTLD and HD-D of a set of questions (NOPE §4.1)",
        description="Lexical diversity of the questions of a JSONL file (or a .txt file with "
        "one question per line), concatenated in file order.",
        formats=LEXDIV_FORMATS,
        example=(
            "  halluscope lexdiv --questions results/nope/demo/questions.jsonl "
            "--group-by relevance --out lexdiv.json",
        ),
        inputs={"--questions": "JSONL (or .txt) input"},
    )
    lexdiv.add_argument("--out", type=Path, required=True, help="output JSON")
    lexdiv.add_argument("--field", default="question", help="the question text field")
    lexdiv.add_argument(
        "--group-by",
        action="append",
        default=[],
        metavar="FIELD",
        help="also report per value of FIELD (repeatable), e.g. relevance, question_type",
    )
    lexdiv.add_argument(
        "--all",
        action="store_true",
        help='keep records with "valid": false (dropped by default)',
    )
    lexdiv.add_argument("--window", type=int, default=50, help="MATTR window")
    lexdiv.add_argument("--threshold", type=float, default=0.72, help="MTLD factor threshold")
    lexdiv.add_argument("--sample-size", type=int, default=42, help="HD-D sample size")


def _lines(path: Path) -> list[tuple[int, str]]:
    """Non-empty lines with their 1-based numbers; unreadable files become InputError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except UnicodeDecodeError as err:
        raise InputError(f"{path}: not valid UTF-8 (byte {err.start})") from None
    return [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]


def _is_json_object(line: str) -> bool:
    """Whether a text line is a whole JSON object (a JSONL record, not a question)."""
    import json

    if not line.lstrip().startswith("{"):
        return False
    try:
        return isinstance(json.loads(line), dict)
    except json.JSONDecodeError:
        return False


def run(args: argparse.Namespace) -> None:
    """``halluscope nope``: validate every line, score, write the JSON report."""
    import dataclasses

    from halluscope.benchmarks.nope.metric import (
        MeteorUnavailableError,
        score_answers,
        validate_record,
    )
    from halluscope.hand_check import no_records, report, score_text, write_result
    from halluscope.hand_check_intervals import attach, bracket, interval_settings

    settings = interval_settings(args, "image")
    images = []
    records = []
    first_line: dict[Any, int] = {}
    for number, record in iter_jsonl_numbered(args.answers):
        try:
            clean = validate_record(record)
        except ValueError as err:
            raise InputError(f"{args.answers}:{number}: {err}") from None
        qid = clean["question_id"]
        if qid in first_line:
            raise InputError(
                f"{args.answers}:{number}: duplicate question_id {qid!r} (first on line "
                f"{first_line[qid]})"
            )
        first_line[qid] = number
        records.append(record)
        images.append(record.get("image_id"))
    if not records:
        expected = 'one {"question_id", "is_negp", "reference", "answer"} object per line'
        raise no_records("--answers", args.answers, "answer record", expected)
    try:
        result = score_answers(
            records,
            meteor=not args.no_meteor,
            negp_include_zero=not args.no_zero,
            per_answer=True,  # the per-answer rows give the intervals; left out below
        )
    except MeteorUnavailableError as err:
        print(f"halluscope nope: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    result["input"] = str(args.answers)
    if settings is not None:
        named = all(isinstance(i, str | int) and not isinstance(i, bool) for i in images)
        settings = settings if named else dataclasses.replace(settings, unit="answer")
        units = [str(i) for i in images] if named else [str(r["question_id"]) for r in records]
        from halluscope.benchmarks.nope.intervals import nope_intervals

        attach(result, nope_intervals(result["answers"], units, settings), settings)
    if args.no_per_answer:
        result["answers"] = []
    write_result(args.out, result)
    overall, negp = result["overall"], result["negp"]
    meteor = "" if args.no_meteor else f", METEOR {score_text(overall.get('meteor'))}"
    report(
        "nope",
        f"{len(records)} answers ({negp['n']} NegP), accuracy {score_text(overall['accuracy'])}"
        f"{bracket(result.get('intervals', {}).get('overall', {}).get('accuracy'))}"
        f"{meteor}, NegP accuracy {score_text(negp['negp_accuracy'])}",
        args.out,
    )


def _question_texts(args: argparse.Namespace) -> tuple[list[dict[str, Any]], int]:
    """The question records to measure and how many ``valid: false`` ones were dropped."""
    if args.questions.suffix == ".txt":
        lines = _lines(args.questions)
        for number, line in lines:
            if _is_json_object(line):
                raise InputError(
                    f"{args.questions}:{number}: a JSON object in a .txt questions file (read as "
                    "one plain-text question per line, so the JSON text itself would be "
                    f"measured); expected plain text, or name the file .jsonl to read its "
                    f"{args.field!r} field"
                )
        return [{args.field: line.strip()} for _, line in lines], 0
    kept, dropped = [], 0
    for number, record in iter_jsonl_numbered(args.questions):
        text = record.get(args.field)
        if record.get("valid") is False and not args.all:
            dropped += 1
            continue
        if not isinstance(text, str):
            raise InputError(
                f"{args.questions}:{number}: expected a string field {args.field!r}, got {text!r}"
            )
        for key in args.group_by:
            if key not in record:
                raise InputError(f"{args.questions}:{number}: missing group-by field {key!r}")
        kept.append(record)
    return kept, dropped


def run_lexdiv(args: argparse.Namespace) -> None:
    """``halluscope lexdiv``: MATTR/MTLD/HD-D overall and per group, one JSON file."""
    from halluscope.benchmarks.nope.lexical_diversity import lexical_diversity, tokenize
    from halluscope.hand_check import report, score_text, warn, write_result

    check_lexdiv_settings(args)
    records, dropped = _question_texts(args)
    if not records:
        raise InputError(f"--questions: {args.questions}: no questions to measure")
    settings = {"window": args.window, "threshold": args.threshold, "sample_size": args.sample_size}

    def measure(subset: list[dict[str, Any]]) -> dict[str, Any]:
        tokens = [token for record in subset for token in tokenize(record[args.field])]
        return {"questions": len(subset), **lexical_diversity(tokens, **settings)}

    groups: dict[str, dict[str, Any]] = {}
    for key in args.group_by:
        values: dict[str, list[dict[str, Any]]] = {}
        for record in records:
            values.setdefault(str(record[key]), []).append(record)
        groups[key] = {value: measure(values[value]) for value in sorted(values)}
    overall = measure(records)
    write_result(
        args.out,
        {
            "input": str(args.questions),
            "field": args.field,
            "dropped_invalid": dropped,
            "text": "the questions concatenated in file order, LexicalRichness default tokens",
            "overall": overall,
            "groups": groups,
        },
    )
    for name, reason in overall["undefined"].items():
        warn("lexdiv", f"{name} is undefined (null in the output): {reason}")
    report(
        "lexdiv",
        f"{len(records)} questions, {overall['tokens']} tokens, MATTR "
        f"{score_text(overall['mattr'])}, MTLD {score_text(overall['mtld'], 1)}, HD-D "
        f"{score_text(overall['hdd'])}",
        args.out,
    )


def check_lexdiv_settings(args: argparse.Namespace) -> None:
    """The measures' settings, each named by its flag: a window or sample of fewer than one token
    and a threshold outside (0, 1) (NaN included) define no measure."""
    import math

    for flag, value in (("--window", args.window), ("--sample-size", args.sample_size)):
        if value < 1:
            raise InputError(f"{flag}: expected a positive number of tokens, got {value}")
    if not (math.isfinite(args.threshold) and 0 < args.threshold < 1):
        raise InputError(
            f"--threshold: expected a TTR between 0 and 1 (exclusive), got {args.threshold}"
        )
