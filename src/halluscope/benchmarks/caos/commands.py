"""CAOS's commands: the stage entry points of its rules (``halluscope stage score``,
``summarize``, ``figure``, ``tables``, ``sensitivity``, ``sensitivity-p``, ``llm-comparison``)
and the hand-check ``halluscope caos`` (:mod:`halluscope.benchmarks.caos.check`).

Thin wrappers: parse the arguments the rules pass and call this package's stage modules. Heavy
imports happen inside the handlers.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from halluscope.commands._args import FILES, JSON_FLAG, PATH_FLAG, PATHS, SETTINGS, add, paired


def add_parser(subparsers: Any) -> None:
    """Register the CAOS stage subcommands and the hand-check ``caos``."""
    add(
        subparsers,
        "stage-score",
        "CAOS and CHAIR-style counts of one model x embedder, for one or more instructions",
        _score,
        SETTINGS,
        ("--objects", PATHS),
        ("--oracle", PATHS),
        ("--items", PATH_FLAG),
        ("--vectors", PATH_FLAG),
        ("--model-id", {"required": True}),
        ("--out-captions", PATHS),
        ("--out-objects", PATHS),
    )
    add(
        subparsers,
        "stage-summarize",
        "CAOS summary: the score files of every model, instruction and embedder pooled",
        _summarize,
        SETTINGS,
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
        SETTINGS,
        ("--figure", {"required": True, "nargs": "+"}),
        ("--summary", PATH_FLAG),
        ("--objects", PATH_FLAG),
        ("--out-stem", PATHS),
    )
    add(
        subparsers,
        "stage-tables",
        "CAOS LaTeX tables",
        _tables,
        SETTINGS,
        ("--summary", PATH_FLAG),
        ("--out-dir", PATH_FLAG),
    )
    add(
        subparsers,
        "stage-sensitivity",
        "CAOS sensitivity table",
        _sensitivity,
        SETTINGS,
        ("--summary", PATH_FLAG),
        ("--objects", PATH_FLAG),
        ("--vectors", JSON_FLAG),
        ("--out-dir", PATH_FLAG),
    )
    add(
        subparsers,
        "stage-sensitivity-p",
        "Table 1 with unverified out-of-domain objects hallucinated at a per-model rate p "
        "(sensitivity)",
        _sensitivity_p,
        SETTINGS,
        ("--summary", PATH_FLAG),
        ("--objects", JSON_FLAG),
        ("--oracle", JSON_FLAG),
        ("--items", PATH_FLAG),
        ("--vectors", JSON_FLAG),
        ("--out-dir", PATH_FLAG),
    )
    add(
        subparsers,
        "stage-llm-comparison",
        "CAOS Table 1 with and without the LLM extractor on the same captions",
        _llm_comparison,
        SETTINGS,
        ("--with-llm", PATH_FLAG),
        ("--without-llm", PATH_FLAG),
        ("--out", PATH_FLAG),
        ("objects", FILES),
    )


def _score(args: argparse.Namespace) -> None:
    """One model x embedder: the i-th instruction of the settings scores the i-th files."""
    from halluscope.benchmarks.caos import score
    from halluscope.io import InputError

    settings = score.ScoreSettings.from_json(args.settings)
    columns = paired(args, "--objects", "--oracle", "--out-captions", "--out-objects")
    if len(columns) != len(settings.instructions):
        raise InputError(
            f"--objects, --oracle, --out-captions, --out-objects: {len(columns)} files each, "
            f"expected one per instruction of --settings ({len(settings.instructions)})"
        )
    score.run_many(
        settings,
        [
            (
                score.ScoreJob(args.model_id, instruction, settings.embedder),
                score.ScoreInputs(objects, oracle, args.items, args.vectors),
                out_captions,
                out_objects,
            )
            for instruction, (objects, oracle, out_captions, out_objects) in zip(
                settings.instructions, columns, strict=True
            )
        ],
    )


def _summarize(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos import summarize

    settings = summarize.SummarizeSettings.from_json(args.settings)
    summarize.run(settings, args.captions, args.out_summary, args.out_objects, args.pope)


def _figure(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos import report

    settings = report.FigureSettings.from_json(args.settings)
    for name, stem in paired(args, "--figure", "--out-stem"):
        report.figure(name, settings, args.summary, args.objects, stem)


def _tables(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos import report

    report.tables(report.TableSettings.from_json(args.settings), args.summary, args.out_dir)


def _sensitivity(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos import report

    settings = report.SensitivitySettings.from_json(args.settings)
    vectors = {name: Path(path) for name, path in args.vectors.items()}
    report.sensitivity(settings, args.summary, args.objects, vectors, args.out_dir)


def _sensitivity_p(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos import sensitivity_p

    settings = sensitivity_p.RateSettings.from_json(args.settings)

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

    settings = report.ComparisonSettings.from_json(args.settings)
    report.llm_comparison(settings, args.with_llm, args.without_llm, args.objects, args.out)
