"""Tri-HE's table and figure, with the shared rules of :mod:`halluscope.report.benchmarks` (fixed
decimals, escaped text, deterministic figures, simulated models said so).

- :func:`trihe_table_latex`: Tri-HE's Table 2 layout, models x Hallu_I / Hallu_Q (percent, lower
  is better): the first judge with Overall, Object and Relation (as the paper's LLM-judge
  columns), every further judge with Overall (as the paper's NLI-judge columns).
- :func:`plot_trihe_bars`: object vs relation Hallu_I and Hallu_Q per model (first judge).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from halluscope.benchmarks.trihe.settings import TriheFigureSettings, TriheTableSettings
from halluscope.report.benchmarks import _finish_figure, _sim_note, _to_latex, interval_end
from halluscope.report.latex import latex_escape
from halluscope.stage_command import stage

JUDGE_LABELS: dict[str, str] = {
    "slots": "Slot-similarity judge",
    "similarity": "Similarity (``NLI'') judge",
    "nli": "NLI judge",
    "llm": "LLM judge",
}
_HALLU = {"i": r"Hallu$_{\mathrm{I}}\downarrow$", "q": r"Hallu$_{\mathrm{Q}}\downarrow$"}


def trihe_frame(
    scores: Mapping[str, Mapping[str, Any]],
    models: Sequence[str],
    judges: Sequence[str],
    end: str | None = None,
) -> pd.DataFrame:
    """Models x (judge, part, metric) of percentages, in Table 2's column order. ``end`` ``"lo"``
    or ``"hi"``: that end of each rate's interval instead (the score file's ``intervals``; the
    injected columns, counts of what a simulated model did, have none)."""
    columns: list[tuple[str, str, str]] = []
    keys: list[tuple[str, str]] = []
    for position, judge in enumerate(judges):
        parts = ("overall", "object", "relation") if position == 0 else ("overall",)
        for part in parts:
            for level in ("i", "q"):
                columns.append(
                    (latex_escape(JUDGE_LABELS.get(judge, judge)), part.title(), _HALLU[level])
                )
                keys.append((judge, f"hallu_{level}" if part == "overall" else f"{part}_{level}"))
    rows = []
    for model in models:
        rates = scores.get(model, {}).get("judges", {})
        row = []
        if end is not None:
            rates = {judge: interval_end(found, end) for judge, found in rates.items()}
        for judge, key in keys:
            value = rates.get(judge, {}).get(key)
            row.append(float("nan") if value is None else float(value))
        rows.append(row)
    injected = [scores.get(m, {}).get("injected") for m in models]
    if models and all(injected):  # simulated models: what they injected, next to what was found
        for part in ("overall", "object", "relation"):
            columns.append(("Injected", part.title(), r"\% triplets"))
        for row, inj in zip(rows, injected, strict=True):
            n = inj["triplets"]
            obj, rel = inj["object_errors"], inj["relation_errors"]
            row += [
                100.0 * x / n if n and end is None else float("nan") for x in (obj + rel, obj, rel)
            ]
    frame = pd.DataFrame(
        rows,
        index=pd.Index([latex_escape(m) for m in models]),
        columns=pd.MultiIndex.from_tuples(columns),
    )
    return frame


def trihe_table_latex(
    scores: Mapping[str, Mapping[str, Any]],
    models: Sequence[str],
    judges: Sequence[str],
    decimals: int = 2,
    *,
    mitigation: str = "none",
    label: str | None = None,
    dataset: str = "demo",
) -> str:
    """Tri-HE Table 2 (see the module docstring); ``scores`` = model -> scores.json content.
    The label names the dataset (``tab:<dataset>:trihe``): one report holds several profiles'."""
    label = label or f"tab:{dataset}:trihe"
    frame = trihe_frame(scores, models, judges)
    first = JUDGE_LABELS.get(judges[0], judges[0])
    others = ", ".join(JUDGE_LABELS.get(j, j) for j in judges[1:])
    caption = (
        _sim_note(models, dataset)
        + "Tri-HE hallucination rates (\\%, lower is better): Hallu$_{\\mathrm{I}}$ averages "
        "over images, Hallu$_{\\mathrm{Q}}$ over questions, the share of an answer's triplets "
        f"judged hallucinated. {latex_escape(first)}: overall, object and relation "
        "hallucinations (split by the paper's definitions)"
        + (f"; {latex_escape(others)}: overall." if others else ".")
        + (" Answers use the triplet-description mitigation." if mitigation == "describe" else "")
        + (
            " Injected: the share of the simulated answers' triplets given a wrong object or "
            "relation (pooled over triplets, while Hallu$_{\\mathrm{Q}}$ averages per question)."
            if "Injected" in frame.columns.get_level_values(0)
            else ""
        )
        + (
            " The CSV twin gives each rate's interval (columns lo, hi; params.yaml's"
            r" \texttt{intervals}, the image resampled)."
            if any(
                (scores.get(m, {}).get("judges", {}).get(j) or {}).get("intervals")
                for m in models
                for j in judges
            )
            else ""
        )
    )
    column_format = "l" + "r" * frame.shape[1]
    return _to_latex(
        frame, decimals=decimals, caption=caption, label=label, column_format=column_format
    )


def plot_trihe_bars(
    scores: Mapping[str, Mapping[str, Any]],
    models: Sequence[str],
    judge: str,
    stem: str | Path,
    dpi: int = 200,
) -> list[Path]:
    """Object vs relation Hallu_I and Hallu_Q per model (one judge), PDF + PNG."""
    import matplotlib.pyplot as plt
    import numpy as np

    from halluscope.report.style import style_context

    parts = (("object", "Object", "#0173b2"), ("relation", "Relation", "#de8f05"))
    width = 0.38
    x = np.arange(len(models))
    with style_context():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.6), sharey=True)
        top = 1.0
        for ax, level in zip(axes, ("i", "q"), strict=True):
            for offset, (part, name, colour) in zip((-0.5, 0.5), parts, strict=True):
                values = [
                    scores.get(m, {}).get("judges", {}).get(judge, {}).get(f"{part}_{level}")
                    for m in models
                ]
                heights = [float("nan") if v is None else float(v) for v in values]
                bars = ax.bar(x + offset * width, heights, width, label=name, color=colour)
                ax.bar_label(bars, fmt="%.1f", fontsize="x-small", padding=1)
                top = max([top, *[h for h in heights if h == h]])
            ax.set_xticks(x)
            ax.set_xticklabels(models, rotation=15, ha="right")
            ax.set_title(_HALLU[level].replace(r"\downarrow", "") + " (%)")
        axes[0].set_ylabel("hallucinated triplets (%)")
        axes[0].set_ylim(0, top * 1.2)
        axes[1].legend(frameon=False, loc="upper right")
        title = f"Tri-HE object vs relation hallucination ({JUDGE_LABELS.get(judge, judge)})"
        title = title.replace("``", '"').replace("''", '"')
        paths = _finish_figure(fig, title, models, stem, dpi, sep="\n")
    return paths


@stage("trihe-table")
def write_trihe_table(scores: list[Path], /, *, settings: TriheTableSettings, out: Path) -> None:
    """Tri-HE LaTeX table (and CSV twin): Hallu_I / Hallu_Q per model and judge."""
    from halluscope.io import reports_by_model
    from halluscope.report.benchmarks import write_table

    models, judges = settings.models, settings.judges
    by_model = reports_by_model(scores, models)
    latex = trihe_table_latex(
        by_model, models, judges, settings.decimals, mitigation=settings.mitigation,
        dataset=settings.run,
    )  # fmt: skip
    bounds = (
        trihe_frame(by_model, models, judges, "lo"),
        trihe_frame(by_model, models, judges, "hi"),
    )
    write_table(out, latex, trihe_frame(by_model, models, judges), models, bounds)


@stage("trihe-figure")
def draw_trihe_bars(
    scores: list[Path], /, *, settings: TriheFigureSettings, out_stem: Path
) -> None:
    """Tri-HE object vs relation hallucination bars of one judge (PDF + PNG)."""
    from halluscope.io import reports_by_model

    models = settings.models
    by_model = reports_by_model(scores, models)
    plot_trihe_bars(by_model, models, settings.judge, out_stem, dpi=settings.dpi)
