"""PhD's stage commands: ``halluscope stage phd-prompts|-answers|-score|-table|-figure``.

Thin wrappers: parse what ``rules.smk`` passes and call :mod:`halluscope.benchmarks.phd.stages`
and :mod:`halluscope.benchmarks.phd.report`.
"""

from __future__ import annotations

import argparse
from typing import Any

from halluscope.commands._args import (
    ANSWER_ARGS,
    DATASET,
    FILES,
    INT_FLAG,
    JSON_FLAG,
    PATH_FLAG,
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
        ("--items", PATH_FLAG),
        ("--questions", PATH_FLAG),
        ("--modes", JSON_FLAG),
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
        ("--models", JSON_FLAG),
        ("--modes", JSON_FLAG),
        ("--decimals", INT_FLAG),
        ("--dataset", DATASET),
        ("--out", PATH_FLAG),
        ("reports", FILES),
    )
    add(
        subparsers,
        "stage-phd-figure",
        "PhD mode x task heatmap",
        _phd_figure,
        ("--models", JSON_FLAG),
        ("--modes", JSON_FLAG),
        ("--dpi", INT_FLAG),
        ("--out-stem", PATH_FLAG),
        ("reports", FILES),
    )


def _phd_prompts(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.phd import stages as phd

    phd.prompts(args.items, args.questions, args.modes, args.out)


def _phd_answers(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.phd import stages as phd

    phd.answers(*answer_inputs(args, args.prompts), args.out)


def _phd_score(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.phd import stages as phd

    phd.score(args.answers, args.out)


def _phd_table(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.phd.report import write_phd_table

    write_phd_table(args.reports, args.models, args.modes, args.decimals, args.dataset, args.out)


def _phd_figure(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.phd.report import draw_phd_heatmap

    draw_phd_heatmap(args.reports, args.models, args.modes, args.out_stem, args.dpi)
