"""Tri-HE's commands: the stage entry points of its rules (``halluscope stage trihe-*``) and the
hand-check ``halluscope trihe`` (:mod:`halluscope.benchmarks.trihe.check`).

Thin wrappers: parse the arguments the rules pass (JSON for structured params, so Snakemake
tracks them as ``params:``) and call :mod:`halluscope.benchmarks.trihe.stages` and
:mod:`halluscope.benchmarks.trihe.report`. Heavy imports happen inside the handlers.
"""

from __future__ import annotations

import argparse
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
    """Register the Tri-HE stage subcommands and the hand-check ``halluscope trihe``."""
    add(
        subparsers,
        "stage-trihe-questions",
        "Tri-HE questions (checked against the items)",
        _trihe_questions,
        SETTINGS,
        ("--items", PATH_FLAG),
        ("--out", PATH_FLAG),
    )
    add(
        subparsers,
        "stage-trihe-answers",
        "Tri-HE answers of one model",
        _trihe_answers,
        ("--questions", PATH_FLAG),
        *ANSWER_ARGS,
    )
    add(
        subparsers,
        "stage-trihe-triplets",
        "Tri-HE triplet extraction",
        _trihe_triplets,
        SETTINGS,
        ("--answers", PATH_FLAG),
        ("--cache", PATH_FLAG),
        ("--out", PATH_FLAG),
    )
    add(
        subparsers,
        "stage-trihe-judge",
        "Tri-HE judgements and Hallu_Q / Hallu_I of one model or more (paths paired by position)",
        _trihe_judge,
        SETTINGS,
        ("--items", PATH_FLAG),
        ("--answers", PATHS),
        ("--triplets", PATHS),
        ("--cache", PATH_FLAG),
        ("--out-judgments", PATHS),
        ("--out-scores", PATHS),
    )
    add(
        subparsers,
        "stage-trihe-table",
        "Tri-HE LaTeX table",
        _trihe_table,
        SETTINGS,
        ("--out", PATH_FLAG),
        ("scores", FILES),
    )
    add(
        subparsers,
        "stage-trihe-figure",
        "Tri-HE object vs relation bars",
        _trihe_figure,
        SETTINGS,
        ("--out-stem", PATH_FLAG),
        ("scores", FILES),
    )


def _trihe_questions(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.trihe import stages as trihe

    settings = trihe.QuestionSettings.from_json(args.settings)
    trihe.questions(args.items, settings.questions, args.out)


def _trihe_answers(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.trihe import stages as trihe

    items, questions, settings = answer_inputs(args, args.questions, trihe.TriheAnswerSettings)
    trihe.answers(items, questions, settings, args.out)


def _trihe_triplets(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.trihe import stages as trihe

    settings = trihe.TripletSettings.from_json(args.settings)
    stats = trihe.triplets(args.answers, settings, args.cache, args.out)
    print(json.dumps(stats, sort_keys=True), file=sys.stderr)


def _trihe_judge(args: argparse.Namespace) -> None:
    """Each model's (answers, triplets) judged in turn: one process loads the encoder once."""
    from halluscope.benchmarks.trihe import stages as trihe

    models = paired(args, "--answers", "--triplets", "--out-judgments", "--out-scores")
    settings = trihe.JudgeSettings.from_json(args.settings)
    for answers, triplets, out_judgments, out_scores in models:
        scores = trihe.judge(
            args.items, answers, triplets, settings, args.cache, out_judgments, out_scores
        )
        print(json.dumps(scores["extraction"], sort_keys=True), file=sys.stderr)


def _trihe_table(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.trihe.report import write_trihe_table
    from halluscope.benchmarks.trihe.settings import TableSettings

    write_trihe_table(args.scores, TableSettings.from_json(args.settings), args.out)


def _trihe_figure(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.trihe.report import draw_trihe_bars
    from halluscope.benchmarks.trihe.settings import FigureSettings

    draw_trihe_bars(args.scores, FigureSettings.from_json(args.settings), args.out_stem)
