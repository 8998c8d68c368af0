"""CAOS's commands: the stage entry points of its rules (``halluscope stage score``,
``summarize``, ``figure``, ``tables``, ``sensitivity``, ``sensitivity-p``, ``llm-comparison``)
and the hand-check ``halluscope caos`` (:mod:`halluscope.benchmarks.caos.check`).

Thin wrappers: parse the arguments the rules pass and call this package's stage modules. Heavy
imports happen inside the handlers.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from halluscope.benchmarks.caos import check
from halluscope.commands._args import (
    FILES,
    INT_FLAG,
    JSON_FLAG,
    PATH_FLAG,
    PATHS,
    TEXT_FLAG,
    add,
    paired,
)


def add_parser(subparsers: Any) -> None:
    """Register the CAOS stage subcommands and the hand-check ``caos``."""
    add(
        subparsers,
        "stage-score",
        "CAOS and CHAIR-style counts of one model x embedder, for one or more instructions",
        _score,
        ("--objects", PATHS),
        ("--oracle", PATHS),
        ("--items", PATH_FLAG),
        ("--vectors", PATH_FLAG),
        ("--k", INT_FLAG),
        ("--k-max", INT_FLAG),
        ("--frequent", JSON_FLAG),
        ("--model-id", TEXT_FLAG),
        ("--instruction-id", {"required": True, "nargs": "+"}),
        ("--embedder-id", TEXT_FLAG),
        ("--out-captions", PATHS),
        ("--out-objects", PATHS),
    )
    add(
        subparsers,
        "stage-summarize",
        "CAOS summary: the score files of every model, instruction and embedder pooled",
        _summarize,
        ("--table1", JSON_FLAG),
        ("--out-summary", PATH_FLAG),
        ("--out-objects", PATH_FLAG),
        ("--pope", {"type": Path, "nargs": "*", "default": []}),
        ("captions", FILES),
    )
    add(
        subparsers,
        "stage-figure",
        "CAOS figures (each --figure NAME drawn to the --out-stem at the same position)",
        _figure,
        ("--figure", {"required": True, "nargs": "+"}),
        ("--summary", PATH_FLAG),
        ("--objects", PATH_FLAG),
        ("--dpi", INT_FLAG),
        ("--exclude-top", INT_FLAG),
        ("--frequent", JSON_FLAG),
        ("--k", INT_FLAG),
        ("--table1", JSON_FLAG),
        ("--embedders", JSON_FLAG),
        ("--out-stem", PATHS),
    )
    add(
        subparsers,
        "stage-tables",
        "CAOS LaTeX tables",
        _tables,
        ("--summary", PATH_FLAG),
        ("--decimals", INT_FLAG),
        ("--k", INT_FLAG),
        ("--models", JSON_FLAG),
        ("--instructions", JSON_FLAG),
        ("--embedders", JSON_FLAG),
        ("--out-dir", PATH_FLAG),
        ("--published", {"action": "store_true"}),
        ("--setting", {"type": json.loads, "default": {}}),
        ("--precision-recall", {"choices": ["per_caption", "micro"], "default": "per_caption"}),
        (
            "--chair-counts",
            {"choices": ["with-rejected-ood", "in-domain"], "default": "with-rejected-ood"},
        ),
        ("--run", {"default": "demo", "help": "profile name, for LaTeX labels"}),
    )
    add(
        subparsers,
        "stage-sensitivity",
        "CAOS sensitivity table",
        _sensitivity,
        ("--summary", PATH_FLAG),
        ("--objects", PATH_FLAG),
        ("--vectors", JSON_FLAG),
        ("--frequent", JSON_FLAG),
        ("--alternatives", JSON_FLAG),
        ("--k", INT_FLAG),
        ("--table1", JSON_FLAG),
        ("--models", JSON_FLAG),
        ("--embedders", JSON_FLAG),
        ("--decimals", INT_FLAG),
        ("--out-dir", PATH_FLAG),
        ("--run", {"default": "demo", "help": "profile name, for LaTeX labels"}),
    )
    add(
        subparsers,
        "stage-sensitivity-p",
        "Table 1 with unverified out-of-domain objects hallucinated at a per-model rate p "
        "(sensitivity)",
        _sensitivity_p,
        ("--summary", PATH_FLAG),
        ("--objects", JSON_FLAG),
        ("--oracle", JSON_FLAG),
        ("--items", PATH_FLAG),
        ("--vectors", JSON_FLAG),
        ("--frequent", JSON_FLAG),
        ("--k", INT_FLAG),
        ("--k-max", INT_FLAG),
        ("--table1", JSON_FLAG),
        ("--models", JSON_FLAG),
        ("--embedders", JSON_FLAG),
        ("--decimals", INT_FLAG),
        ("--out-dir", PATH_FLAG),
        ("--run", {"default": "demo", "help": "profile name, for LaTeX labels"}),
    )
    add(
        subparsers,
        "stage-llm-comparison",
        "CAOS Table 1 with and without the LLM extractor on the same captions",
        _llm_comparison,
        ("--with-llm", PATH_FLAG),
        ("--without-llm", PATH_FLAG),
        ("--models", JSON_FLAG),
        ("--embedder", TEXT_FLAG),
        ("--decimals", INT_FLAG),
        ("--run", TEXT_FLAG),
        ("--baseline", TEXT_FLAG),
        ("--n-images", TEXT_FLAG),
        ("--out", PATH_FLAG),
        ("objects", FILES),
    )
    check.add_parser(subparsers)


def _score(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos import score

    columns = paired(
        args, "--instruction-id", "--objects", "--oracle", "--out-captions", "--out-objects"
    )
    score.run_many(
        score.ScoreSettings(args.k, args.k_max, args.frequent),
        [
            (
                score.ScoreJob(args.model_id, instruction, args.embedder_id),
                score.ScoreInputs(objects, oracle, args.items, args.vectors),
                out_captions,
                out_objects,
            )
            for instruction, objects, oracle, out_captions, out_objects in columns
        ],
    )


def _summarize(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos import summarize

    settings = summarize.SummarizeSettings(args.table1)
    summarize.run(settings, args.captions, args.out_summary, args.out_objects, args.pope)


def _figure(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos import report

    settings = report.FigureSettings(
        args.dpi, args.exclude_top, args.frequent, args.k, args.table1, args.embedders
    )
    for name, stem in paired(args, "--figure", "--out-stem"):
        report.figure(name, settings, args.summary, args.objects, stem)


def _tables(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos import report

    settings = report.TableSettings(
        args.decimals, args.k, args.models, args.instructions, args.embedders, args.published,
        args.setting, args.precision_recall, args.run, args.chair_counts,
    )  # fmt: skip
    report.tables(settings, args.summary, args.out_dir)


def _sensitivity(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos import report

    settings = report.SensitivitySettings(
        args.frequent, args.alternatives, args.k, args.table1, args.models, args.embedders,
        args.decimals, args.run,
    )  # fmt: skip
    vectors = {name: Path(path) for name, path in args.vectors.items()}
    report.sensitivity(settings, args.summary, args.objects, vectors, args.out_dir)


def _sensitivity_p(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos import sensitivity_p

    settings = sensitivity_p.RateSettings(
        args.models, args.embedders, args.table1, args.k, args.k_max, args.frequent,
        args.decimals, args.run,
    )  # fmt: skip

    def paths(mapping: dict) -> dict:
        return {m: {i: Path(p) for i, p in by.items()} for m, by in mapping.items()}

    sensitivity_p.run(
        settings,
        args.summary,
        paths(args.objects),
        paths(args.oracle),
        args.items,
        {name: Path(path) for name, path in args.vectors.items()},
        args.out_dir,
    )


def _llm_comparison(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos import report

    settings = report.ComparisonSettings(
        args.models, args.embedder, args.decimals, args.run, args.baseline, args.n_images
    )
    report.llm_comparison(settings, args.with_llm, args.without_llm, args.objects, args.out)
