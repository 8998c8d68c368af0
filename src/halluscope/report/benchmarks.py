"""NOPE tables (booktabs LaTeX) and figures (deterministic PDF/PNG); the helpers every
benchmark's tables and figures share (Tri-HE's: :mod:`halluscope.benchmarks.trihe.report`, PhD's:
:mod:`halluscope.benchmarks.phd.report`).

Same rules as :mod:`halluscope.report.tables` and :mod:`halluscope.report.figures`: tables go
through ``Styler.to_latex`` (fixed decimals, ``--`` for missing values, no dates), free text is
escaped, figures are drawn in :func:`~halluscope.report.figures.style_context` and written by
:func:`~halluscope.report.figures.savefig`, and every output made from simulated LVLMs
(``sim-*``) says so.

- :func:`nope_table_latex`: NOPE's Table 3 layout, models x (NegP questions: accuracy, METEOR,
  NegP accuracy | other questions: accuracy, METEOR), percent.
- :func:`nope_breakdown_latex`: accuracy and NegP accuracy on the NegP questions by question type
  and object-scene relevance (the paper's Figures 9 and 10 as a table).
- :func:`plot_nope_question_types`: accuracy per question type per model, NegP and other
  questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from halluscope.report import booktabs_latex, is_simulated, model_colors
from halluscope.report.tables import latex_escape

NOPE_TYPES: tuple[str, ...] = ("color", "object", "location", "counting", "person")
"""NOPE §6.2's question types, in the paper's order."""
NOPE_RELEVANCE_LABELS: dict[str, str] = {
    "closely_related": "Closely",
    "loosely_related": "Loosely",
    "unrelated": "Unrelated",
}
#: What the simulated models answered, per dataset, for the table captions.
DATASET_NOTES: dict[str, str] = {
    "demo": "on the demo images",
    "trihe-gqa": (
        "on Tri-HE's released questions and scene graphs (GQA images; the simulated models answer "
        "from each question's reference triplets with injected errors, not from pixels)"
    ),
    "phd-ccs": (
        "on PhD's released counter-common-sense questions (the simulated models answer from the "
        "yes/no labels with their configured biases, not from pixels)"
    ),
}


def _sim_note(models: Sequence[str], dataset: str = "demo") -> str:
    """The caption's warning that the numbers come from test instruments, and on what data."""
    if not is_simulated(models):
        return ""
    where = DATASET_NOTES.get(dataset, f"on dataset {latex_escape(dataset)}")
    return (
        f"Results from simulated LVLMs (model ids \\texttt{{sim-*}}) {where}: they exercise "
        "the pipeline and say nothing about real models. "
    )


def _to_latex(
    frame: pd.DataFrame, *, decimals: int, caption: str, label: str, column_format: str
) -> str:
    return booktabs_latex(
        frame,
        decimals=decimals,
        caption=caption,
        label=label,
        column_format=column_format,
        multicol_align="c",
        multirow_align="naive",
        sparse_index=True,
        sparse_columns=True,
    )


# ---------------------------------------------------------------------------------------- PhD


def _space_models(latex: str, n_modes: int, n_models: int) -> str:
    """``\\addlinespace`` between the models' row blocks."""
    lines = latex.split("\n")
    first = lines.index("\\midrule") + 1
    out = lines[:first]
    for row, line in enumerate(lines[first : first + n_modes * n_models]):
        if row and row % n_modes == 0:
            out.append("\\addlinespace")
        out.append(line)
    return "\n".join(out + lines[first + n_modes * n_models :])


# --------------------------------------------------------------------------------------- NOPE


def _pct(value: Any) -> float:
    return float("nan") if value is None else 100.0 * float(value)


def nope_frame(scores: Mapping[str, Mapping[str, Any]], models: Sequence[str]) -> pd.DataFrame:
    """Models x (question set, metric) in percent: NOPE Table 3's columns."""
    negp = r"NegP questions ($\mathcal{A}_{\mathrm{NegP}}$)"
    other = r"Other questions ($\mathcal{A}_{\overline{\mathrm{NegP}}}$)"
    columns = [
        (negp, "Acc.", "negp", "accuracy"),
        (negp, "METEOR", "negp", "meteor"),
        (negp, "NegP Acc.", "negp", "negp_accuracy"),
        (other, "Acc.", "non_negp", "accuracy"),
        (other, "METEOR", "non_negp", "meteor"),
    ]
    rows = [
        [_pct(scores.get(m, {}).get(section, {}).get(key)) for _, _, section, key in columns]
        for m in models
    ]
    return pd.DataFrame(
        rows,
        index=pd.Index([latex_escape(m) for m in models]),
        columns=pd.MultiIndex.from_tuples([(group, name) for group, name, _, _ in columns]),
    )


def _lexdiv_note(lexdiv: Mapping[str, Any] | None) -> str:
    block = (lexdiv or {}).get("negp") or {}
    values = [block.get(k) for k in ("mattr", "mtld", "hdd")]
    if any(v is None for v in values):
        return ""
    mattr, mtld, hdd = values
    return (
        f" Lexical diversity of the NegP questions: MATTR {mattr:.3f}, MTLD {mtld:.1f}, "
        f"HD-D {hdd:.3f}."
    )


def _generation_note(generation: Mapping[str, Any] | None) -> str:
    final = (generation or {}).get("final") or {}
    if not final:
        return ""
    fallback = final.get("fallback", 0)
    prompt = (generation or {}).get("prompt")
    note = (
        f" {final.get('questions', 0)} NegP questions generated by list-then-rewrite from the "
        f"captions: {final.get('llm', 0)} listed and paraphrased by the LLM"
        + (f" ({latex_escape(prompt)} prompt)" if prompt else "")
    )
    if fallback:
        note += f", {fallback} template questions about fallback objects (same validation)"
    others = ((generation or {}).get("others") or {}).get("questions")
    note += "." + (f" {others} other questions ask about annotated objects." if others else "")
    return note


def nope_table_latex(
    scores: Mapping[str, Mapping[str, Any]],
    models: Sequence[str],
    decimals: int = 2,
    *,
    lexdiv: Mapping[str, Any] | None = None,
    generation: Mapping[str, Any] | None = None,
    label: str = "tab:nope",
) -> str:
    """NOPE Table 3 layout (see the module docstring); ``scores`` = model -> scores.json."""
    frame = nope_frame(scores, models)
    caption = (
        _sim_note(models)
        + "NOPE (Table 3 layout), in \\%: exact-match accuracy after VQA answer normalisation, "
        "METEOR 1.5 (mean of per-answer scores) and, for questions whose answer is a negative "
        "indefinite pronoun (NegP), NegP accuracy (the answer is a NegP)."
        + _generation_note(generation)
        + _lexdiv_note(lexdiv)
    )
    return _to_latex(
        frame,
        decimals=decimals,
        caption=caption,
        label=label,
        column_format="l" + "r" * frame.shape[1],
    )


def nope_breakdown_frame(
    scores: Mapping[str, Mapping[str, Any]], models: Sequence[str]
) -> pd.DataFrame:
    """(model, metric) x (question type..., relevance...) on the NegP questions, in percent."""
    seen = {t for s in scores.values() for t in s.get("negp", {}).get("by_question_type", {})}
    types = [t for t in NOPE_TYPES if t in seen] + sorted(seen - set(NOPE_TYPES))
    seen_rel = {r for s in scores.values() for r in s.get("negp", {}).get("by_relevance", {})}
    relevances = [r for r in NOPE_RELEVANCE_LABELS if r in seen_rel]
    relevances += sorted(seen_rel - set(NOPE_RELEVANCE_LABELS))
    columns = [("Question type", latex_escape(t)) for t in types]
    columns += [
        ("Object-scene relevance", latex_escape(NOPE_RELEVANCE_LABELS.get(r, r)))
        for r in relevances
    ]
    index, rows = [], []
    for model in models:
        negp = scores.get(model, {}).get("negp", {})
        for metric, name in (("accuracy", "Acc."), ("negp_accuracy", "NegP Acc.")):
            row = [_pct(negp.get("by_question_type", {}).get(t, {}).get(metric)) for t in types]
            row += [_pct(negp.get("by_relevance", {}).get(r, {}).get(metric)) for r in relevances]
            rows.append(row)
            index.append((latex_escape(model), name))
    return pd.DataFrame(
        rows,
        index=pd.MultiIndex.from_tuples(index, names=["Model", "Metric"]),
        columns=pd.MultiIndex.from_tuples(columns),
    )


def nope_breakdown_latex(
    scores: Mapping[str, Mapping[str, Any]],
    models: Sequence[str],
    decimals: int = 2,
    *,
    label: str = "tab:nope-breakdown",
) -> str:
    """Accuracy and NegP accuracy on NegP questions by question type and relevance."""
    frame = nope_breakdown_frame(scores, models)
    # "Section", not \S: pdfTeX's font expansion (microtype) fails on \S in a long caption.
    caption = (
        _sim_note(models)
        + "NOPE NegP questions by question type (NOPE Section 6.2) and by object-scene "
        "relevance of the absent object (the descriptor it was listed under, Section 3.4): "
        "exact-match accuracy and NegP accuracy, in \\%."
    )
    latex = _to_latex(
        frame,
        decimals=decimals,
        caption=caption,
        label=label,
        column_format="ll" + "r" * frame.shape[1],
    )
    return _space_models(latex, 2, len(models))


# ------------------------------------------------------------------------------------ figures


def _finish_figure(
    fig: Any, title: str, models: Sequence[str], stem: str | Path, dpi: int, sep: str = " "
) -> list[Path]:
    """Title (marked when the models are simulated), layout, deterministic save, close."""
    import matplotlib.pyplot as plt

    from halluscope.report.figures import savefig

    if is_simulated(models):
        title += sep + "(simulated LVLMs)"
    fig.suptitle(title, fontweight="bold")
    fig.tight_layout()
    paths = savefig(fig, stem, dpi=dpi)
    plt.close(fig)
    return paths


def plot_nope_question_types(
    scores: Mapping[str, Mapping[str, Any]],
    models: Sequence[str],
    stem: str | Path,
    dpi: int = 200,
) -> list[Path]:
    """Exact-match accuracy per question type per model: NegP and other questions, PDF + PNG."""
    import matplotlib.pyplot as plt
    import numpy as np

    from halluscope.report.figures import style_context

    panels = (("negp", "NegP questions (NOPE)"), ("non_negp", "Other questions"))
    palette = model_colors(models)
    with style_context():
        fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.6), sharey=True)
        for ax, (section, title) in zip(axes, panels, strict=True):
            seen = {
                t for s in scores.values() for t in s.get(section, {}).get("by_question_type", {})
            }
            types = [t for t in NOPE_TYPES if t in seen] + sorted(seen - set(NOPE_TYPES))
            x = np.arange(len(types))
            width = 0.8 / max(len(models), 1)
            for i, model in enumerate(models):
                groups = scores.get(model, {}).get(section, {}).get("by_question_type", {})
                heights = [_pct(groups.get(t, {}).get("accuracy")) for t in types]
                offset = (i - (len(models) - 1) / 2) * width
                bars = ax.bar(x + offset, heights, width, label=model, color=palette[model])
                ax.bar_label(bars, fmt="%.0f", fontsize="xx-small", padding=1)
            counts = [
                max(
                    (s.get(section, {}).get("by_question_type", {}).get(t, {}).get("n") or 0)
                    for s in scores.values()
                )
                for t in types
            ]
            ax.set_xticks(x)
            ax.set_xticklabels([f"{t}\n(n={n})" for t, n in zip(types, counts, strict=True)])
            ax.set_title(title)
            ax.set_ylim(0, 110)
        axes[0].set_ylabel("exact-match accuracy (%)")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            ncol=max(len(models), 1),
            frameon=False,
            fontsize="small",
        )
        title = "NOPE accuracy per question type"
        paths = _finish_figure(fig, title, models, stem, dpi)
    return paths
