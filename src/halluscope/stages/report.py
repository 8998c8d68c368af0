"""Report stages: CAOS figures, LaTeX tables and the assembly of ``results/tables``."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from halluscope.io import InputError, atomic_write_bytes, atomic_write_text
from halluscope.stages.embed import frequent_objects

FIGURES = ("caos_radar", "caos_ksweep", "caos_subsets", "caos_instructions")


def _read(path: Path):
    import pandas as pd

    if not path.exists():
        raise InputError(f"{path}: file not found")
    return pd.read_csv(path, keep_default_na=True)


def figure(args: argparse.Namespace) -> None:
    """One figure by name (PDF + PNG with fixed metadata)."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["savefig.dpi"] = args.dpi
    from halluscope.report import figures

    summary = _read(args.summary)
    models = list(dict.fromkeys(summary["model"]))
    embedders = list(args.embedders)
    stem = str(args.out_stem)
    if args.figure == "caos_radar":
        figures.plot_radar(summary, models, embedders, stem)
    elif args.figure == "caos_instructions":
        figures.plot_instructions(summary, models, embedders, stem)
    elif args.figure in ("caos_ksweep", "caos_subsets"):
        objects = _read(args.objects)
        if args.figure == "caos_ksweep":
            figures.plot_ksweep(
                objects, models, embedders, stem, instructions=args.table1, highlight_k=args.k
            )
        else:
            top = frequent_objects(args.frequent)[: args.exclude_top]
            figures.plot_subsets(
                objects, models, embedders, stem, top_names=top, k=args.k, instructions=args.table1
            )
    else:
        raise InputError(f"unknown figure {args.figure!r}; valid: {', '.join(FIGURES)}")


def tables(args: argparse.Namespace) -> None:
    """CAOS Table 1, Table 2 and the ratio table."""
    from halluscope.report import is_simulated
    from halluscope.report.tables import rom_latex, table1_latex, table2_latex

    summary = _read(args.summary)
    models = list(args.models)
    embedders = list(args.embedders)
    sim = is_simulated(models)
    out = Path(args.out_dir)
    atomic_write_text(
        out / "caos_table1.tex",
        table1_latex(summary, models, embedders, args.decimals, sim, k=args.k),
    )
    atomic_write_text(
        out / "caos_table2.tex",
        table2_latex(summary, models, embedders, args.decimals, sim, k=args.k),
    )
    atomic_write_text(
        out / "caos_ratios.tex", rom_latex(summary, models, embedders, args.decimals, sim)
    )


def assemble(args: argparse.Namespace) -> None:
    """Copy every benchmark's tables into ``results/tables`` (one rule owns that folder)."""
    out = Path(args.out_dir)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for table in args.tables:
        atomic_write_bytes(tmp / Path(table).name, Path(table).read_bytes())
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
