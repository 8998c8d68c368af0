"""``halluscope phd``: PhD Index per mode x task from model answers (JSONL).

Each line: ``{"id", "mode": "base"|"iac"|"icc"|"ccs" ("sec" = iac), "task", "label":
"yes"|"no", "answer": str}``. Definitions and the answer parser:
:mod:`halluscope.benchmarks.phd.metric`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from halluscope.hand_check import add_command
from halluscope.hand_check_intervals import add_interval_options
from halluscope.io import InputError

_EXPECTED = (
    'expected {"id", "mode": "base"|"iac"|"icc"|"ccs", "task", "label": "yes"|"no", "answer": str}'
)


FORMATS = (
    '  --responses JSONL, one answer per line: {"id", "mode": "base"|"iac"|"icc"|"ccs" '
    '("sec" = iac), "task", "label": "yes"|"no", "answer": str} (other keys ignored), e.g. the '
    "pipeline's results/phd/<profile>/<model>/answers.jsonl",
    '  --out       JSON written: {"overall" (the PhD Index), "recall_yes", "recall_no", '
    '"yes_ratio", "n", "n_yes", "n_no", "unparsed", "by_mode", "by_task", "by_mode_task", '
    '"mean_over_modes", "parser", "intervals": {"overall", "recall_yes", "recall_no", '
    '"yes_ratio", "by_mode": {MODE: {...}}, "by_task", "by_mode_task": {"lo", "hi", "level", '
    '"method", "unit", "n_units"}}, "interval_settings"} (the "image_id" resampled when every '
    "line has one, else the answer: recalls and yes ratio by Wilson's interval, the PhD Index "
    "by the cluster bootstrap; --no-intervals leaves them out)",
)
"""The input and output formats, one ``--help`` line each (long lines are not wrapped)."""


def add_parser(subparsers: Any) -> None:
    parser = add_command(
        subparsers,
        "phd",
        run,
        help_text="PhD Index (per mode x task) from answers",
        description="PhD Index (harmonic mean of the yes and no recalls) of yes/no answers, "
        "overall, per mode, per task and per mode x task; answers are parsed as the pipeline "
        "parses them.",
        formats=FORMATS,
        example=(
            "  halluscope phd --responses results/phd/demo/sim-precise/answers.jsonl "
            "--out phd.json",
        ),
        inputs={"--responses": "answers JSONL"},
    )
    parser.add_argument("--out", type=Path, required=True, help="output JSON")
    add_interval_options(parser)


def read_units(path: Path) -> tuple[str, list[str]]:
    """The unit of each answer line for the intervals: its ``image_id`` when every line has one
    (the yes and the no question of an image, in every mode, move together), else the answer."""
    from halluscope.io import iter_jsonl

    images = [rec.get("image_id") for rec in iter_jsonl(path)]
    if images and all(isinstance(i, str | int) and not isinstance(i, bool) for i in images):
        return "image", [str(i) for i in images]
    return "answer", [str(rec["id"]) for rec in iter_jsonl(path)]


def read_answers(path: Path) -> list[Any]:
    """Read and check the answers; every error names the file and the line."""
    from halluscope.benchmarks.phd.data import canonical_mode
    from halluscope.benchmarks.phd.metric import PhdAnswer
    from halluscope.io import iter_jsonl

    out = []
    seen: dict[str, int] = {}
    for number, rec in enumerate(iter_jsonl(path), start=1):
        where = f"{path}:{number}"
        missing = [k for k in ("id", "mode", "task", "label", "answer") if k not in rec]
        if missing:
            raise InputError(f"{where}: missing {', '.join(missing)}; {_EXPECTED}")
        if not isinstance(rec["id"], str | int) or isinstance(rec["id"], bool):
            raise InputError(f"{where}: id must be a string or an integer")
        key = str(rec["id"])
        if key in seen:
            raise InputError(f"{where}: id {key!r} already on line {seen[key]}")
        seen[key] = number
        try:
            mode = canonical_mode(rec["mode"]) if isinstance(rec["mode"], str) else None
        except ValueError as err:
            raise InputError(f"{where}: {err}") from None
        if mode is None:
            raise InputError(f"{where}: mode must be a string; {_EXPECTED}")
        if not isinstance(rec["task"], str) or not rec["task"]:
            raise InputError(f"{where}: task must be a non-empty string")
        if rec["label"] not in ("yes", "no"):
            raise InputError(f"{where}: label must be 'yes' or 'no', got {rec['label']!r}")
        if not isinstance(rec["answer"], str):
            raise InputError(f"{where}: answer must be a string, got {rec['answer']!r}")
        out.append(PhdAnswer(key, mode, rec["task"], rec["label"], rec["answer"]))
    return out


def run(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.phd.metric import phd_report
    from halluscope.hand_check import no_records, report, score_text, warn, write_result
    from halluscope.hand_check_intervals import attach, bracket, interval_settings

    answers = read_answers(args.responses)
    if not answers:
        expected = "one per line: " + _EXPECTED.removeprefix("expected ")
        raise no_records("--responses", args.responses, "answer line", expected)
    result = phd_report(answers)
    if not args.no_intervals:
        unit, units = read_units(args.responses)
        settings = interval_settings(args, unit)
        from halluscope.benchmarks.phd.intervals import phd_intervals

        attach(result, phd_intervals(answers, units, settings), settings)
    write_result(args.out, result)
    if result["overall"] is None:
        missing = "yes" if result["recall_yes"] is None else "no"
        warn("phd", f"no answer has label {missing!r}: the PhD Index is undefined (null)")
    report(
        "phd",
        f"{len(answers)} answers ({result['unparsed']} unparsed), PhD Index "
        f"{score_text(result['overall'])}{bracket(result.get('intervals', {}).get('overall'))}, "
        f"yes recall {score_text(result['recall_yes'])}, "
        f"no recall {score_text(result['recall_no'])}",
        args.out,
    )
