"""POPE's commands: the stage entry points of its rules (``halluscope stage pope-*``) and the
hand-checks ``halluscope pope`` / ``pope-build`` (:mod:`halluscope.benchmarks.pope.check`).

Thin wrappers: parse the arguments the rules pass and call
:mod:`halluscope.benchmarks.pope.stages`. Heavy imports happen inside the handlers.
"""

from __future__ import annotations

import argparse
from typing import Any

from halluscope.commands._args import ANSWER_ARGS, PATH_FLAG, SETTINGS, add, answer_inputs


def add_parser(subparsers: Any) -> None:
    """Register the POPE stage subcommands and the hand-checks ``pope`` and ``pope-build``."""
    add(
        subparsers,
        "stage-pope-questions",
        "POPE questions of one setting from the items",
        _pope_questions,
        SETTINGS,
        ("--items", PATH_FLAG),
        ("--out", PATH_FLAG),
    )
    add(
        subparsers,
        "stage-pope-answers",
        "POPE answers of one model",
        _pope_answers,
        ("--questions", PATH_FLAG),
        *ANSWER_ARGS,
    )
    add(
        subparsers,
        "stage-pope-score",
        "POPE accuracy, precision, recall, F1 and yes ratio of one model",
        _pope_score,
        SETTINGS,
        ("--questions", PATH_FLAG),
        ("--answers", PATH_FLAG),
        ("--out", PATH_FLAG),
    )


def _pope_questions(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.pope import stages

    settings = stages.QuestionSettings.from_json(args.settings)
    stages.questions(settings, args.items, args.out)


def _pope_answers(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.pope import stages

    stages.answers(*answer_inputs(args, args.questions), args.out)


def _pope_score(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.pope import stages

    settings = stages.ScoreSettings.from_json(args.settings)
    stages.score(args.questions, args.answers, settings, args.out)
