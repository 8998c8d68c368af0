"""CAOS's commands: the stage entry points of its rules (``halluscope stage score``,
``summarize``, ``figure``, ``tables``, ``sensitivity``, ``llm-comparison``) and the hand-check
``halluscope caos`` (:mod:`halluscope.benchmarks.caos.check`).

Thin wrappers: parse the arguments the rules pass and call this package's stage modules. Heavy
imports happen inside the handlers.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from halluscope.benchmarks.caos import check
from halluscope.commands._args import FILES, I, J, P, S, add


def add_parser(subparsers: Any) -> None:
    """Register the CAOS stage subcommands and the hand-check ``caos``."""
    add(
        subparsers,
        "stage-score",
        "score stage",
        _score,
        ("--objects", P),
        ("--oracle", P),
        ("--items", P),
        ("--vectors", P),
        ("--k", I),
        ("--k-max", I),
        ("--frequent", J),
        ("--model-id", S),
        ("--instruction-id", S),
        ("--embedder-id", S),
        ("--out-captions", P),
        ("--out-objects", P),
    )
    add(
        subparsers,
        "stage-summarize",
        "pool score files",
        _summarize,
        ("--table1", J),
        ("--out-summary", P),
        ("--out-objects", P),
        ("--pope", {"type": Path, "nargs": "*", "default": []}),
        ("captions", FILES),
    )
    add(
        subparsers,
        "stage-figure",
        "one CAOS figure",
        _caos_report,
        ("--figure", S),
        ("--summary", P),
        ("--objects", P),
        ("--dpi", I),
        ("--exclude-top", I),
        ("--frequent", J),
        ("--k", I),
        ("--table1", J),
        ("--embedders", J),
        ("--out-stem", P),
    )
    add(
        subparsers,
        "stage-tables",
        "CAOS LaTeX tables",
        _caos_report,
        ("--summary", P),
        ("--decimals", I),
        ("--k", I),
        ("--models", J),
        ("--instructions", J),
        ("--embedders", J),
        ("--out-dir", P),
        ("--published", {"action": "store_true"}),
        ("--setting", {"type": json.loads, "default": {}}),
        ("--precision-recall", {"choices": ["per_caption", "micro"], "default": "per_caption"}),
        ("--run", {"default": "demo", "help": "profile name, for LaTeX labels"}),
    )
    add(
        subparsers,
        "stage-sensitivity",
        "CAOS sensitivity table",
        _caos_report,
        ("--summary", P),
        ("--objects", P),
        ("--vectors", J),
        ("--frequent", J),
        ("--alternatives", J),
        ("--k", I),
        ("--table1", J),
        ("--models", J),
        ("--embedders", J),
        ("--decimals", I),
        ("--out-dir", P),
        ("--run", {"default": "demo", "help": "profile name, for LaTeX labels"}),
    )
    add(
        subparsers,
        "stage-llm-comparison",
        "CAOS Table 1 with and without the LLM extractor on the same captions",
        _caos_report,
        ("--with-llm", P),
        ("--without-llm", P),
        ("--models", J),
        ("--embedder", S),
        ("--decimals", I),
        ("--run", S),
        ("--baseline", S),
        ("--n-images", S),
        ("--out", P),
        ("objects", FILES),
    )
    check.add_parser(subparsers)


def _score(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos import score

    score.run(
        score.ScoreSettings(args.k, args.k_max, args.frequent),
        score.ScoreJob(args.model_id, args.instruction_id, args.embedder_id),
        score.ScoreInputs(args.objects, args.oracle, args.items, args.vectors),
        args.out_captions,
        args.out_objects,
    )


def _summarize(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos import summarize

    summarize.run(args.captions, args.table1, args.out_summary, args.out_objects, args.pope)


def _caos_report(args: argparse.Namespace) -> None:
    """``stage-figure``, ``stage-tables``, ``stage-sensitivity``, ``stage-llm-comparison``: the
    same-named function of :mod:`halluscope.benchmarks.caos.report`."""
    from halluscope.benchmarks.caos import report

    getattr(report, args.command.removeprefix("stage-").replace("-", "_"))(args)
