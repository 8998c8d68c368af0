"""POPE's commands: the stage entry points of its rules (``halluscope stage pope-*``) and the
hand-checks ``halluscope pope`` / ``pope-build`` (:mod:`halluscope.benchmarks.pope.check`).

Thin wrappers: parse the arguments the rules pass and call
:mod:`halluscope.benchmarks.pope.stages`. Heavy imports happen inside the handlers.
"""

from __future__ import annotations

import argparse
from typing import Any

from halluscope.benchmarks.pope import check
from halluscope.commands._args import (
    ANSWER_ARGS,
    INT_FLAG,
    PATH_FLAG,
    TEXT_FLAG,
    add,
    answer_inputs,
)


def add_parser(subparsers: Any) -> None:
    """Register the POPE stage subcommands and the hand-checks ``pope`` and ``pope-build``."""
    add(
        subparsers,
        "stage-pope-questions",
        "POPE questions of one setting from the items",
        _pope_questions,
        ("--items", PATH_FLAG),
        ("--setting", TEXT_FLAG),
        ("--n", INT_FLAG),
        ("--seed", INT_FLAG),
        ("--typo", {"action": "store_true"}),
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
        ("--questions", PATH_FLAG),
        ("--answers", PATH_FLAG),
        ("--parser", TEXT_FLAG),
        ("--out", PATH_FLAG),
    )
    check.add_parser(subparsers)


def _pope_questions(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.pope import stages

    settings = stages.QuestionSettings(args.setting, args.n, args.seed, args.typo)
    stages.questions(settings, args.items, args.out)


def _pope_answers(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.pope import stages

    stages.answers(*answer_inputs(args, args.questions), args.out)


def _pope_score(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.pope import stages

    stages.score(args.questions, args.answers, args.parser, args.out)
