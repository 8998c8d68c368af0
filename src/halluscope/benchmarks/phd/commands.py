"""PhD's stage commands: ``halluscope stage phd-prompts|-answers|-score|-table|-figure``.

Thin wrappers: parse what ``rules.smk`` passes and call :mod:`halluscope.benchmarks.phd.stages`
and :mod:`halluscope.benchmarks.phd.report`.
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
    """Register the PhD stage subcommands."""
    add(
        subparsers,
        "stage-phd-prompts",
        "PhD prompts per mode",
        _phd_prompts,
        SETTINGS,
        ("--items", PATH_FLAG),
        ("--out", PATH_FLAG),
    )
    add(
        subparsers,
        "stage-phd-answers",
        "PhD answers of one model",
        _phd_answers,
        ("--prompts", PATH_FLAG),
        *ANSWER_ARGS,
    )
    add(
        subparsers,
        "stage-phd-score",
        "PhD Index of one model",
        _phd_score,
        ("--answers", PATH_FLAG),
        ("--out", PATH_FLAG),
    )
    add(
        subparsers,
        "stage-phd-table",
        "PhD LaTeX table",
        _phd_table,
        SETTINGS,
        ("--out", PATH_FLAG),
        ("reports", FILES),
    )
    add(
        subparsers,
        "stage-phd-figure",
        "PhD mode x task heatmap",
        _phd_figure,
        SETTINGS,
        ("--out-stem", PATH_FLAG),
        ("reports", FILES),
    )


def _phd_prompts(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.phd import stages as phd
    from halluscope.benchmarks.phd.settings import PromptSettings

    settings = PromptSettings.from_json(args.settings)
    phd.prompts(args.items, settings.questions, settings.modes, args.out)


def _phd_answers(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.phd import stages as phd

    phd.answers(*answer_inputs(args, args.prompts), args.out)


def _phd_score(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.phd import stages as phd

    phd.score(args.answers, args.out)


def _phd_table(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.phd.report import write_phd_table
    from halluscope.benchmarks.phd.settings import TableSettings

    write_phd_table(args.reports, TableSettings.from_json(args.settings), args.out)


def _phd_figure(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.phd.report import draw_phd_heatmap
    from halluscope.benchmarks.phd.settings import FigureSettings

    draw_phd_heatmap(args.reports, FigureSettings.from_json(args.settings), args.out_stem)
