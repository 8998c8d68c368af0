"""AMBER's stage commands: ``halluscope stage amber-prompts|-answers|-score|-table``.

Thin wrappers: parse what ``rules.smk`` passes and call :mod:`halluscope.benchmarks.amber.stages`.
"""

from __future__ import annotations

import argparse
from typing import Any

from halluscope.commands._args import (
    ANSWER_ARGS,
    FILES,
    JSON_FLAG,
    PATH_FLAG,
    TEXT_FLAG,
    add,
    answer_inputs,
)

FLOAT = {"type": float, "required": True}


def add_parser(subparsers: Any) -> None:
    """Register the AMBER stage subcommands."""
    add(
        subparsers,
        "stage-amber-prompts",
        "AMBER generative prompts with their annotations",
        _prompts,
        ("--items", PATH_FLAG),
        ("--annotations", PATH_FLAG),
        ("--out", PATH_FLAG),
    )
    add(subparsers, "stage-amber-answers", "AMBER answers of one model", _answers,
        ("--prompts", PATH_FLAG), *ANSWER_ARGS)  # fmt: skip
    add(
        subparsers,
        "stage-amber-score",
        "AMBER CHAIR / Cover / Hal / Cog of one model",
        _score,
        ("--answers", PATH_FLAG),
        ("--annotations", PATH_FLAG),
        ("--relation", PATH_FLAG),
        ("--safe-words", PATH_FLAG),
        ("--similarity", TEXT_FLAG),
        ("--threshold", FLOAT),
        ("--out", PATH_FLAG),
    )
    add(
        subparsers,
        "stage-amber-table",
        "AMBER LaTeX table and CSV twin",
        _table,
        ("--models", JSON_FLAG),
        ("--dataset", TEXT_FLAG),
        ("--out", PATH_FLAG),
        ("reports", FILES),
    )


def _prompts(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.amber import stages

    stages.prompts(args.items, args.annotations, args.out)


def _answers(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.amber import stages

    stages.answers(*answer_inputs(args, args.prompts), args.out)


def _score(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.amber import stages

    stages.score(
        args.answers,
        args.annotations,
        args.relation,
        args.safe_words,
        args.similarity,
        args.threshold,
        args.out,
    )


def _table(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.amber import stages
    from halluscope.io import reports_by_model

    stages.table(reports_by_model(args.reports, args.models), args.models, args.dataset, args.out)
