"""AMBER's stage commands: ``halluscope stage amber-prompts|-answers|-score|-table``.

Thin wrappers: parse what ``rules.smk`` passes and call :mod:`halluscope.benchmarks.amber.stages`.
"""

from __future__ import annotations

import argparse
from typing import Any

from halluscope.commands._args import (
    ANSWER_ARGS,
    FILES,
    PATH_FLAG,
    SETTINGS,
    add,
    answer_inputs,
)


def add_parser(subparsers: Any) -> None:
    """Register the AMBER stage subcommands."""
    add(
        subparsers,
        "stage-amber-prompts",
        "AMBER generative prompts with their annotations",
        _prompts,
        SETTINGS,
        ("--items", PATH_FLAG),
        ("--out", PATH_FLAG),
    )
    add(subparsers, "stage-amber-answers", "AMBER answers of one model", _answers,
        ("--prompts", PATH_FLAG), *ANSWER_ARGS)  # fmt: skip
    add(
        subparsers,
        "stage-amber-score",
        "AMBER CHAIR / Cover / Hal / Cog of one model",
        _score,
        SETTINGS,
        ("--answers", PATH_FLAG),
        ("--out", PATH_FLAG),
    )
    add(
        subparsers,
        "stage-amber-table",
        "AMBER LaTeX table and CSV twin",
        _table,
        SETTINGS,
        ("--out", PATH_FLAG),
        ("reports", FILES),
    )


def _prompts(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.amber import stages
    from halluscope.benchmarks.amber.settings import PromptSettings

    settings = PromptSettings.from_json(args.settings)
    stages.prompts(args.items, settings.annotations, args.out)


def _answers(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.amber import stages

    stages.answers(*answer_inputs(args, args.prompts), args.out)


def _score(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.amber import stages
    from halluscope.benchmarks.amber.settings import ScoreSettings

    s = ScoreSettings.from_json(args.settings)
    stages.score(
        args.answers, s.annotations, s.relation, s.safe_words, s.similarity, s.threshold, args.out
    )


def _table(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.amber import stages
    from halluscope.benchmarks.amber.settings import TableSettings
    from halluscope.io import reports_by_model

    settings = TableSettings.from_json(args.settings)
    reports = reports_by_model(args.reports, settings.models)
    stages.table(reports, settings.models, settings.run, args.out)
