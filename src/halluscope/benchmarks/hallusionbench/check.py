"""``halluscope hallusionbench``: aAcc, fAcc and qAcc of one model's HallusionBench answers.

The answers are records in the format of the upstream ``HallusionBench_result_sample.json``
(the question's five ids and ``model_prediction``, the model's free-text answer), a JSON array
or JSON lines; any subset of the 1,129 questions. They are joined to ``HallusionBench.json``
(the registered file, or ``--questions``), judged by rule (:mod:`.judge`) and scored as the
reference does (:mod:`.metric`, :mod:`.analysis`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from halluscope.hand_check import add_command

FORMATS = (
    '  --answers   JSON array or JSONL of {"category": "VD"|"VS", "subcategory", "set_id", '
    '"figure_id", "question_id", "model_prediction": "<answer>"} (HallusionBench_result_'
    "sample.json's records; other keys ignored)",
    "  --questions HallusionBench.json (default: the registered "
    "hallusionbench/HallusionBench.json)",
    '  --out       JSON written: {"aAcc", "fAcc", "qAcc", "easy_aAcc", "hard_aAcc" (percent, '
    'as the reference prints them), "n_scored", "n_questions", "n_uncertain", "splits", '
    '"per_figure", "failure_analysis", ...}',
)
"""The input and output formats, one ``--help`` line each (long lines are not wrapped)."""


def add_parser(subparsers: Any) -> None:
    parser = add_command(
        subparsers,
        "hallusionbench",
        run,
        help_text="HallusionBench aAcc / fAcc / qAcc of free-text answers (rule-based judge)",
        description="HallusionBench accuracy per question (aAcc), per figure (fAcc) and per "
        "question pair (qAcc) of a model's yes/no answers, judged by VLMEvalKit's yes/no rule "
        "and aggregated as the reference's utils.py does; the subset scored is stated.",
        formats=FORMATS,
        example=(
            "  halluscope hallusionbench \\",
            "      --answers ../shared/data/hallusionbench/HallusionBench_result_sample.json \\",
            "      --out hallusionbench.json",
        ),
        inputs={"--answers": "answers: JSON array or JSONL, model_prediction per question"},
        optional_inputs=("--questions",),
    )
    parser.add_argument(
        "--questions",
        type=Path,
        default=None,
        help="HallusionBench.json (default: the registered hallusionbench/HallusionBench.json)",
    )
    parser.add_argument("--out", type=Path, required=True, help="output JSON")


def run(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.hallusionbench.questions import load_answers, load_questions
    from halluscope.benchmarks.hallusionbench.scoring import result
    from halluscope.benchmarks.hallusionbench.sources import QUESTIONS
    from halluscope.data.fetch import resolve_input
    from halluscope.hand_check import report, score_text, warn, write_result

    questions = load_questions(args.questions or resolve_input(QUESTIONS))
    answers = load_answers(args.answers, questions)
    doc = result(answers, len(questions))
    write_result(args.out, doc)
    if doc["n_stale_visual_input"]:
        warn(
            "hallusionbench",
            f"{doc['n_stale_visual_input']} answer records give another visual_input than "
            "HallusionBench.json; the question file's is used (easy / hard split)",
        )
    if doc["n_uncertain"] == doc["n_scored"]:
        warn("hallusionbench", "no answer says yes or no: every answer is uncertain")
    report(
        "hallusionbench",
        f"{doc['subset']}, aAcc {score_text(doc['aAcc'], 2)}%, fAcc "
        f"{score_text(doc['fAcc'], 2)}%, qAcc {score_text(doc['qAcc'], 2)}%, "
        f"{doc['n_uncertain']} uncertain",
        args.out,
    )
