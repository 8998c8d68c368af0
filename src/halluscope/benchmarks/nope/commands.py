"""NOPE's commands: the stage entry points of its rules (``halluscope stage nope-*``) and the
hand-check ``halluscope nope`` / ``halluscope lexdiv`` (:mod:`halluscope.benchmarks.nope.check`).

Thin wrappers, as in :mod:`halluscope.benchmarks.trihe.commands`: parse the arguments the rules
pass (JSON for structured params, so Snakemake tracks them as ``params:``) and call
:mod:`halluscope.benchmarks.nope.stages` and :mod:`halluscope.benchmarks.nope.report`. Heavy
imports happen inside the handlers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any

from halluscope.commands._args import (
    ANSWER_ARGS,
    FILES,
    PATH_FLAG,
    PATHS,
    SETTINGS,
    add,
    answer_inputs,
    paired,
)


def add_parser(subparsers: Any) -> None:
    """Register the NOPE stage subcommands and the hand-checks ``halluscope nope`` / ``lexdiv``."""
    add(
        subparsers,
        "stage-nope-generate",
        "NOPE list-then-rewrite for one shard of the items",
        _generate,
        SETTINGS,
        ("--items", PATH_FLAG),
        ("--cache", PATH_FLAG),
        ("--shard", {"type": int, "required": True}),
        ("--out", PATH_FLAG),
    )
    add(
        subparsers,
        "stage-nope-questions",
        "NOPE questions: merged shards + other questions",
        _questions,
        SETTINGS,
        ("--items", PATH_FLAG),
        ("--out-questions", PATH_FLAG),
        ("--out-report", PATH_FLAG),
        ("shards", FILES),
    )
    add(
        subparsers,
        "stage-nope-answers",
        "NOPE answers of one model",
        _answers,
        ("--questions", PATH_FLAG),
        *ANSWER_ARGS,
    )
    add(
        subparsers,
        "stage-nope-score",
        "NOPE accuracy, METEOR and NegP accuracy of one model or more (paths paired by position)",
        _score,
        SETTINGS,
        ("--answers", PATHS),
        ("--out", PATHS),
    )
    add(
        subparsers,
        "stage-nope-lexdiv",
        "MATTR, MTLD and HD-D of the NOPE question sets",
        _lexdiv,
        ("--questions", PATH_FLAG),
        ("--out", PATH_FLAG),
    )
    add(
        subparsers,
        "stage-nope-table",
        "NOPE LaTeX tables (Table 3 layout and breakdown)",
        _table,
        SETTINGS,
        ("--lexdiv", PATH_FLAG),
        ("--generation", PATH_FLAG),
        ("--out-table", PATH_FLAG),
        ("--out-breakdown", PATH_FLAG),
        ("scores", FILES),
    )
    add(
        subparsers,
        "stage-nope-figure",
        "NOPE accuracy per question type",
        _figure,
        SETTINGS,
        ("--out-stem", PATH_FLAG),
        ("scores", FILES),
    )


def _generate(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.nope import stages

    settings = stages.GeneratorSettings.from_json(args.settings)
    stats = stages.generate_shard(args.items, settings, args.cache, args.shard, args.out)
    print(json.dumps(stats, sort_keys=True), file=sys.stderr)


def _questions(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.nope import stages

    settings = stages.GeneratorSettings.from_json(args.settings)
    stats = stages.questions(args.items, args.shards, settings, args.out_questions, args.out_report)
    print(json.dumps(stats, sort_keys=True), file=sys.stderr)


def _answers(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.nope import stages

    stages.answers(*answer_inputs(args, args.questions), args.out)


def _score(args: argparse.Namespace) -> None:
    """Each model's answers scored in turn by one METEOR process (its JVM starts once)."""
    from halluscope.benchmarks.nope import stages
    from halluscope.benchmarks.nope.metric import MeteorScorer
    from halluscope.benchmarks.nope.settings import ScoreSettings

    meteor_on = ScoreSettings.from_json(args.settings).meteor
    models = paired(args, "--answers", "--out")
    with MeteorScorer() if meteor_on else contextlib.nullcontext(False) as meteor:
        for answers, out in models:
            report = stages.score(answers, meteor, out)
            summary = {k: report[k]["accuracy"] for k in ("overall", "negp", "non_negp")}
            print(json.dumps(summary, sort_keys=True), file=sys.stderr)


def _lexdiv(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.nope import stages

    stages.lexdiv(args.questions, args.out)


def _table(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.nope.report import write_nope_tables
    from halluscope.benchmarks.nope.settings import TableSettings

    settings = TableSettings.from_json(args.settings)
    write_nope_tables(
        args.scores, settings.models, settings.decimals, args.lexdiv, args.generation,
        args.out_table, args.out_breakdown,
    )  # fmt: skip


def _figure(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.nope.report import draw_nope_question_types
    from halluscope.benchmarks.nope.settings import FigureSettings

    settings = FigureSettings.from_json(args.settings)
    draw_nope_question_types(args.scores, settings.models, args.out_stem, settings.dpi)
