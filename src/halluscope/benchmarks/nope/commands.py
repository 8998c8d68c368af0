"""NOPE's commands: the stage entry points of its rules (``halluscope stage nope-*``) and the
hand-check ``halluscope nope`` / ``halluscope lexdiv`` (:mod:`halluscope.benchmarks.nope.check`).

Thin wrappers, as in :mod:`halluscope.benchmarks.trihe.commands`: parse the arguments the rules
pass (JSON for structured params, so Snakemake tracks them as ``params:``) and call
:mod:`halluscope.benchmarks.nope.stages` and :mod:`halluscope.benchmarks.nope.report`. Heavy
imports happen inside the handlers.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from halluscope.benchmarks.nope import check
from halluscope.commands._args import ANSWER_ARGS, FILES, I, J, P, add, answer_inputs
from halluscope.io import reports_by_model


def add_parser(subparsers: Any) -> None:
    """Register the NOPE stage subcommands and the hand-checks ``halluscope nope`` / ``lexdiv``."""
    check.add_parser(subparsers)
    add(
        subparsers,
        "stage-nope-generate",
        "NOPE list-then-rewrite for one shard of the items",
        _generate,
        ("--items", P),
        ("--generator", J),
        ("--fallback", {"type": Path, "default": None}),
        ("--cache", P),
        ("--shard", I),
        ("--shards", I),
        ("--out", P),
    )
    add(
        subparsers,
        "stage-nope-questions",
        "NOPE questions: merged shards + other questions",
        _questions,
        ("--items", P),
        ("--generator", J),
        ("--out-questions", P),
        ("--out-report", P),
        ("shards", FILES),
    )
    add(
        subparsers,
        "stage-nope-answers",
        "NOPE answers of one model",
        _answers,
        ("--questions", P),
        *ANSWER_ARGS,
    )
    add(
        subparsers,
        "stage-nope-score",
        "NOPE accuracy, METEOR and NegP accuracy of one model",
        _score,
        ("--answers", P),
        ("--meteor", J),
        ("--out", P),
    )
    add(
        subparsers,
        "stage-nope-lexdiv",
        "MATTR, MTLD and HD-D of the NOPE question sets",
        _lexdiv,
        ("--questions", P),
        ("--out", P),
    )
    add(
        subparsers,
        "stage-nope-table",
        "NOPE LaTeX tables (Table 3 layout and breakdown)",
        _table,
        ("--models", J),
        ("--decimals", I),
        ("--lexdiv", P),
        ("--generation", P),
        ("--out-table", P),
        ("--out-breakdown", P),
        ("scores", FILES),
    )
    add(
        subparsers,
        "stage-nope-figure",
        "NOPE accuracy per question type",
        _figure,
        ("--models", J),
        ("--dpi", I),
        ("--out-stem", P),
        ("scores", FILES),
    )


def _generate(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.nope import stages

    stats = stages.generate_shard(
        args.items, args.generator, args.fallback, args.cache, args.shard, args.shards, args.out
    )
    print(json.dumps(stats, sort_keys=True), file=sys.stderr)


def _questions(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.nope import stages

    stats = stages.questions(
        args.items, args.shards, args.generator, args.out_questions, args.out_report
    )
    print(json.dumps(stats, sort_keys=True), file=sys.stderr)


def _answers(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.nope import stages

    stages.answers(*answer_inputs(args, args.questions), args.out)


def _score(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.nope import stages

    report = stages.score(args.answers, bool(args.meteor), args.out)
    summary = {k: report[k]["accuracy"] for k in ("overall", "negp", "non_negp")}
    print(json.dumps(summary, sort_keys=True), file=sys.stderr)


def _lexdiv(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.nope import stages

    stages.lexdiv(args.questions, args.out)


def _table(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.nope.report import (
        nope_breakdown_frame,
        nope_breakdown_latex,
        nope_frame,
        nope_table_latex,
    )
    from halluscope.benchmarks.nope.stages import read_generation
    from halluscope.io import atomic_write_text, read_json
    from halluscope.report.tables import frame_records, twin_csv

    scores = reports_by_model(args.scores, args.models)
    lexdiv = read_json(args.lexdiv)
    generation = read_generation(args.generation)
    atomic_write_text(
        args.out_table,
        nope_table_latex(scores, args.models, args.decimals, lexdiv=lexdiv, generation=generation),
    )
    atomic_write_text(args.out_breakdown, nope_breakdown_latex(scores, args.models, args.decimals))
    for out, frame in (
        (args.out_table, nope_frame(scores, args.models)),
        (args.out_breakdown, nope_breakdown_frame(scores, args.models)),
    ):
        atomic_write_text(out.with_suffix(".csv"), twin_csv(frame_records(frame, args.models)))


def _figure(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.nope.report import plot_nope_question_types

    scores = reports_by_model(args.scores, args.models)
    plot_nope_question_types(scores, args.models, args.out_stem, dpi=args.dpi)
