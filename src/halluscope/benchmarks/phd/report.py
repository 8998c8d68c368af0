"""PhD's table (PhD Index per model x mode by task, plus "All") and heatmap (mode x task, one panel
per model), with the shared rules of :mod:`halluscope.report.benchmarks` (fixed decimals, escaped
text, deterministic figures, simulated models said so)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from halluscope.benchmarks.phd.settings import PhdFigureSettings, PhdTableSettings
from halluscope.report.benchmarks import (
    _finish_figure,
    _sim_note,
    _space_models,
    _to_latex,
    interval_end,
)
from halluscope.report.latex import latex_escape
from halluscope.stage_command import stage

PHD_MODE_LABELS: dict[str, str] = {"base": "base", "iac": "iac (sec)", "icc": "icc", "ccs": "ccs"}
PHD_TASK_LABELS: dict[str, str] = {
    "object_recognition": "Object",
    "attribute_recognition": "Attribute",
    "sentiment_understanding": "Sentiment",
    "positional_reasoning": "Position",
    "counting": "Counting",
}


def phd_frame(
    reports: Mapping[str, Mapping[str, Any]],
    models: Sequence[str],
    modes: Sequence[str],
    tasks: Sequence[str] | None = None,
    end: str | None = None,
) -> pd.DataFrame:
    """(model, mode) x (tasks..., All) PhD Index; missing cells NaN. ``end`` ``"lo"`` or
    ``"hi"``: that end of each cell's interval instead (the score file's ``intervals``)."""
    if tasks is None:
        tasks = phd_tasks(reports)
    if end is not None:
        reports = {m: interval_end(r, end) for m, r in reports.items()}
    index, rows = [], []
    for model in models:
        report = reports.get(model, {})
        for mode in modes:
            cells = report.get("by_mode_task", {}).get(mode, {})
            row = [cells.get(t, {}).get("overall") for t in tasks]
            row.append(report.get("by_mode", {}).get(mode, {}).get("overall"))
            rows.append([float("nan") if v is None else float(v) for v in row])
            index.append((latex_escape(model), latex_escape(PHD_MODE_LABELS.get(mode, mode))))
    columns = [latex_escape(PHD_TASK_LABELS.get(t, t)) for t in tasks] + ["All"]
    return pd.DataFrame(
        rows, index=pd.MultiIndex.from_tuples(index, names=["Model", "Mode"]), columns=columns
    )


def phd_tasks(reports: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The tasks the reports hold: PhD's five in the paper's order, then any other by name."""
    seen = {t for r in reports.values() for t in r.get("by_task", {})}
    return [t for t in PHD_TASK_LABELS if t in seen] + sorted(seen - set(PHD_TASK_LABELS))


def phd_table_latex(
    reports: Mapping[str, Mapping[str, Any]],
    models: Sequence[str],
    modes: Sequence[str],
    decimals: int = 2,
    *,
    label: str | None = None,
    dataset: str = "demo",
) -> str:
    """PhD Index by model x mode (rows) and task (columns); ``reports`` = model -> scores.json.
    The label names the dataset (``tab:<dataset>:phd``): one report holds several profiles'."""
    label = label or f"tab:{dataset}:phd"
    frame = phd_frame(reports, models, modes)
    overall = ", ".join(
        f"{latex_escape(m)} {reports[m]['overall']:.{decimals}f}"
        for m in models
        if reports.get(m, {}).get("overall") is not None
    )
    caption = (
        _sim_note(models, dataset)
        + "PhD Index (harmonic mean of the yes- and no-recall; higher is better, a model that "
        "always answers yes or always no scores 0) per mode and task; ``All'' pools a mode's "
        "tasks. Modes: base (question only), iac (inaccurate context, the paper's sec), icc "
        "(incorrect context), ccs (counter-common-sense items"
        + ("; on the demo images, ccs-style questions" if dataset == "demo" else "")
        + ")."
        + (f" Overall: {overall}." if overall else "")
        + (
            " The CSV twin gives each cell's interval (columns lo, hi; params.yaml's"
            r" \texttt{intervals}, the image resampled)."
            if any(r.get("intervals") for r in reports.values())
            else ""
        )
    )
    latex = _to_latex(
        frame,
        decimals=decimals,
        caption=caption,
        label=label,
        column_format="ll" + "r" * frame.shape[1],
    )
    return _space_models(latex, len(modes), len(models))


def plot_phd_heatmap(
    reports: Mapping[str, Mapping[str, Any]],
    models: Sequence[str],
    modes: Sequence[str],
    stem: str | Path,
    dpi: int = 200,
) -> list[Path]:
    """PhD Index mode x task, one panel per model (shared 0-1 colour scale), PDF + PNG."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from halluscope.report.style import style_context

    frame = phd_frame(reports, models, modes)
    tasks = [c for c in frame.columns if c != "All"]
    with style_context():
        fig, axes = plt.subplots(
            1, len(models), figsize=(3.3 * len(models) + 0.8, 3.4), squeeze=False
        )
        for i, (ax, model) in enumerate(zip(axes[0], models, strict=True)):
            panel = frame.xs(latex_escape(model), level="Model")[tasks]
            panel.index = [PHD_MODE_LABELS.get(m, m) for m in modes]
            sns.heatmap(
                panel.astype(float),
                ax=ax,
                vmin=0.0,
                vmax=1.0,
                cmap="viridis",
                annot=True,
                fmt=".2f",
                annot_kws={"fontsize": "x-small"},
                cbar=i == len(models) - 1,
                cbar_kws={"label": "PhD Index"},
                linewidths=0.5,
                linecolor="white",
            )
            ax.grid(False)
            ax.set_facecolor("0.93")  # cells without items
            ax.set_title(model)
            ax.set_xlabel("")
            ax.tick_params(axis="x", rotation=35)
            for text in ax.get_xticklabels():
                text.set_horizontalalignment("right")
            ax.tick_params(axis="y", rotation=0)
            if i:
                ax.set_yticklabels([])
        title = "PhD Index by mode and task"
        paths = _finish_figure(fig, title, models, stem, dpi)
    return paths


def canonical_modes(modes: Sequence[str]) -> list[str]:
    """The modes in order, aliases mapped to their canonical names, each once."""
    from halluscope.benchmarks.phd.data import canonical_mode

    return list(dict.fromkeys(canonical_mode(m) for m in modes))


@stage("phd-table")
def write_phd_table(reports: list[Path], /, *, settings: PhdTableSettings, out: Path) -> None:
    """PhD LaTeX table (and CSV twin): the PhD Index by model x mode and task."""
    from halluscope.io import reports_by_model
    from halluscope.report.benchmarks import write_table

    models = settings.models
    by_model = reports_by_model(reports, models)
    modes = canonical_modes(settings.modes)
    latex = phd_table_latex(by_model, models, modes, settings.decimals, dataset=settings.run)
    frame = phd_frame(by_model, models, modes)
    bounds = tuple(phd_frame(by_model, models, modes, end=end) for end in ("lo", "hi"))
    write_table(out, latex, frame, models, bounds)


@stage("phd-figure")
def draw_phd_heatmap(
    reports: list[Path], /, *, settings: PhdFigureSettings, out_stem: Path
) -> None:
    """PhD mode x task heatmap, one panel per model (PDF + PNG)."""
    from halluscope.io import reports_by_model

    models = settings.models
    by_model = reports_by_model(reports, models)
    modes = canonical_modes(settings.modes)
    plot_phd_heatmap(by_model, models, modes, out_stem, dpi=settings.dpi)
