"""PhD's stage commands: ``halluscope stage phd-prompts|-answers|-score|-table|-figure``.

Thin wrappers: parse what ``rules.smk`` passes and call :mod:`halluscope.benchmarks.phd.stages`
and :mod:`halluscope.benchmarks.phd.report`.
"""

from __future__ import annotations

import argparse
from typing import Any

from halluscope.commands._args import ANSWER_ARGS, DATASET, FILES, I, J, P, add, answer_inputs
from halluscope.io import reports_by_model


def add_parser(subparsers: Any) -> None:
    """Register the PhD stage subcommands."""
    add(
        subparsers,
        "stage-phd-prompts",
        "PhD prompts per mode",
        _phd_prompts,
        ("--items", P),
        ("--questions", P),
        ("--modes", J),
        ("--out", P),
    )
    add(
        subparsers,
        "stage-phd-answers",
        "PhD answers of one model",
        _phd_answers,
        ("--prompts", P),
        *ANSWER_ARGS,
    )
    add(
        subparsers,
        "stage-phd-score",
        "PhD Index of one model",
        _phd_score,
        ("--answers", P),
        ("--out", P),
    )
    add(
        subparsers,
        "stage-phd-table",
        "PhD LaTeX table",
        _phd_table,
        ("--models", J),
        ("--modes", J),
        ("--decimals", I),
        ("--dataset", DATASET),
        ("--out", P),
        ("reports", FILES),
    )
    add(
        subparsers,
        "stage-phd-figure",
        "PhD mode x task heatmap",
        _phd_figure,
        ("--models", J),
        ("--modes", J),
        ("--dpi", I),
        ("--out-stem", P),
        ("reports", FILES),
    )


def _canonical_modes(modes: list[str]) -> list[str]:
    from halluscope.benchmarks.phd.data import canonical_mode

    return list(dict.fromkeys(canonical_mode(m) for m in modes))


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
    from halluscope.benchmarks.phd.report import phd_frame, phd_table_latex
    from halluscope.io import atomic_write_text
    from halluscope.report.tables import frame_records, twin_csv

    reports = reports_by_model(args.reports, args.models)
    modes = _canonical_modes(args.modes)
    latex = phd_table_latex(reports, args.models, modes, args.decimals, dataset=args.dataset)
    atomic_write_text(args.out, latex)
    frame = phd_frame(reports, args.models, modes)
    atomic_write_text(args.out.with_suffix(".csv"), twin_csv(frame_records(frame, args.models)))


def _phd_figure(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.phd.report import plot_phd_heatmap

    reports = reports_by_model(args.reports, args.models)
    modes = _canonical_modes(args.modes)
    plot_phd_heatmap(reports, args.models, modes, args.out_stem, dpi=args.dpi)
