"""Figures 3-6 of the CAOS paper, rendered deterministically (same inputs -> same bytes).

Every figure is drawn inside :func:`halluscope.report.style.style_context` and written by
:func:`~halluscope.report.style.savefig` (no dates or versions in the files); strip-plot jitter
is random, so points are placed at fixed offsets instead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from halluscope.benchmarks.caos.figure_data import figure_data_csv, write_figure_data  # noqa: E402, F401
from halluscope.benchmarks.caos.tables import CAOS_METRIC, summary_rows, summary_value  # noqa: E402
from halluscope.report import (  # noqa: E402
    POOLED_INSTRUCTIONS,
    caption_then_mean,
    embedder_label,
    is_simulated,
    model_colors,
)
from halluscope.report.style import savefig, style_context  # noqa: E402

if TYPE_CHECKING:
    from halluscope.metrics.intervals import IntervalSettings

#: Axis and title names of the CAOS columns (``CAOS$_{T/X}$``; ``avg`` in plain mathtext).
_CAOS_MATH: dict[str, str] = {
    column: f"CAOS$_{{{metric.removeprefix('CAOS_')}}}$" for column, metric in CAOS_METRIC.items()
}


def _labels(models: Sequence[str], model_labels: Mapping[str, str] | None) -> dict[str, str]:
    return {m: (model_labels or {}).get(m, m) for m in models}


def _title(text: str, models: Sequence[str]) -> str:
    return f"{text} (simulated LVLMs)" if is_simulated(models) else text


def _select(
    objects: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    instructions: Sequence[str] | None,
) -> pd.DataFrame:
    keep = objects["model"].isin(models) & objects["embedder"].isin(embedders)
    if instructions is not None:
        keep &= objects["instruction_id"].astype(str).isin(list(instructions))
    return objects[keep]


def _model_legend(fig: Figure, handles: Sequence[Any], names: Sequence[str]) -> None:
    """One model legend right of all panels (Figures 4 and 5), so no panel is covered."""
    fig.legend(
        handles,
        names,
        loc="center left",
        bbox_to_anchor=(1.0, 0.5),
        frameon=False,
        title="Model",
    )


def _finish(fig: Figure, stem: str | Path) -> list[Path]:
    paths = savefig(fig, stem)
    plt.close(fig)
    return paths


def _radar_axes(
    rows: pd.DataFrame, models: Sequence[str], embedders: Sequence[str]
) -> list[tuple[str, str, str, str | None, float, float]]:
    """The radar's axes: (tick label, plain name, summary column, embedder or None for any,
    scale, offset), so that value = offset + scale * the summary value."""
    axes_spec: list[tuple[str, str, str, str | None, float, float]] = [
        ("Precision", "precision", "precision", None, 1.0, 0.0),
        ("Recall", "recall", "recall", None, 1.0, 0.0),
        ("# Objects / 5", "objects_per_caption / 5", "objects_per_caption", None, 0.2, 0.0),
        ("1 − CHAIR$_S$", "1 - CHAIR_S", "CHAIR_S", None, -1.0, 1.0),
    ]
    pope = [summary_value(rows, m, embedders, "POPE_F1") for m in models]
    if not all(math.isnan(v) for v in pope):
        axes_spec.append(("POPE-F1", "POPE_F1", "POPE_F1", None, 1.0, 0.0))
    for embedder in embedders:
        name = embedder_label(embedder)
        # the paper doubles CAOS_avg so that its axis spans about as much as the others
        for column, tick, plain, scale in (
            ("CAOS_TX", "", "", 1.0),
            ("CAOS_XK", "", "", 1.0),
            ("CAOS_avg", "2 × ", "2 x ", 2.0),
        ):
            label = f"{tick}{_CAOS_MATH[column]}\n({name})"
            axes_spec.append((label, f"{plain}{column} ({name})", column, embedder, scale, 0.0))
    return axes_spec


def radar_frame(
    summary: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    *,
    instruction_id: str = "table1",
) -> pd.DataFrame:
    """The numbers behind Figure 3, one row per (model, axis) in plotting order.

    Long format: model, axis (plain name), metric (summary column), embedder (empty for the
    embedder-independent axes), value (as plotted: ``offset + scale * summary value``), lo and
    hi (the value's interval from summary.csv's ``<column>_lo`` / ``_hi``, as plotted; empty
    where summary.csv has none).
    """
    rows = summary_rows(summary, instruction_id)
    records = []
    for model in models:
        for _label, axis, column, emb, scale, offset in _radar_axes(rows, models, embedders):
            chosen = [emb] if emb else embedders
            value = offset + scale * summary_value(rows, model, chosen, column)
            ends = [offset + scale * summary_value(rows, model, chosen, f"{column}_{end}")
                    for end in ("lo", "hi")]  # fmt: skip
            lo, hi = sorted(ends) if np.isfinite(ends).all() else (math.nan, math.nan)
            records.append(
                {
                    "model": model,
                    "axis": axis,
                    "metric": column,
                    "embedder": emb or "",
                    "value": value,
                    "lo": lo,
                    "hi": hi,
                }
            )
    return pd.DataFrame(
        records, columns=["model", "axis", "metric", "embedder", "value", "lo", "hi"]
    )


def plot_radar(
    summary: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    stem: str | Path,
    *,
    instruction_id: str = "table1",
    model_labels: Mapping[str, str] | None = None,
    frame: pd.DataFrame | None = None,
) -> list[Path]:
    """Figure 3: one polygon per model over the 'comparable' axes (all larger-is-better).

    Axes: precision, recall, objects per caption / 5, 1 - CHAIR_S, POPE-F1 (only if some model
    has it), and per embedder CAOS_{T/X}, CAOS_{X/K}, 2 x CAOS_avg; the scalings are the paper's,
    so all axes share roughly the [0, 1] range. CAOS_T/X/K alone are left out, as in the paper.
    A radial bar at each vertex spans its interval (the frame's ``lo``, ``hi``). ``frame``: the
    :func:`radar_frame` of these arguments (computed when None), the numbers drawn.
    """
    axes_spec = _radar_axes(summary_rows(summary, instruction_id), models, embedders)
    if frame is None:
        frame = radar_frame(summary, models, embedders, instruction_id=instruction_id)
    angles = np.linspace(0.0, 2.0 * np.pi, len(axes_spec), endpoint=False)
    closed = np.append(angles, angles[0])
    palette = model_colors(models)
    labels = _labels(models, model_labels)
    top = 1.0
    with style_context():
        fig = plt.figure(figsize=(7.5, 6.5))
        ax = fig.add_subplot(projection="polar")
        ax.set_theta_offset(np.pi / 2)
        ax.set_theta_direction(-1)
        for model in models:
            values = frame.loc[frame["model"] == model, "value"].to_numpy(dtype=float)
            if np.isfinite(values).any():
                top = max(top, float(np.nanmax(values)))
            ring = np.append(values, values[0])
            ax.plot(
                closed,
                ring,
                color=palette[model],
                linewidth=1.8,
                marker="o",
                markersize=3.5,
                label=labels[model],
            )
            ax.fill(closed, np.nan_to_num(ring), color=palette[model], alpha=0.08)
            if {"lo", "hi"} <= set(frame.columns):
                own = frame.loc[frame["model"] == model]
                lo, hi = (own[end].to_numpy(dtype=float) for end in ("lo", "hi"))
                drawn = np.isfinite(lo) & np.isfinite(hi)
                if drawn.any():
                    top = max(top, float(np.nanmax(hi)))
                ax.vlines(angles[drawn], lo[drawn], hi[drawn], color=palette[model],
                          linewidth=2.4, alpha=0.55)  # fmt: skip
        ax.set_xticks(angles)
        ax.set_xticklabels([spec[0] for spec in axes_spec])
        ax.tick_params(axis="x", pad=6)
        for text, angle in zip(ax.get_xticklabels(), angles, strict=True):
            # Clockwise from the top: labels on the right start at the spoke, left ones end there.
            side = math.sin(angle)
            text.set_horizontalalignment(
                "left" if side > 0.1 else "right" if side < -0.1 else "center"
            )
        ax.set_ylim(0.0, math.ceil(top * 5.0) / 5.0)
        ax.yaxis.set_major_locator(MaxNLocator(nbins=5, prune="lower"))
        ax.tick_params(axis="y", labelsize="small", labelcolor="0.4")
        ax.set_rlabel_position(180.0 / len(axes_spec))  # between the first two axes
        ax.legend(loc="upper left", bbox_to_anchor=(1.08, 1.05), frameon=False, title="Model")
        ax.set_title(_title("Hallucination metrics per model", models), pad=40)
        return _finish(fig, stem)


def ksweep_frame(
    objects: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    ks: Sequence[int] = tuple(range(1, 11)),
    instructions: Sequence[str] | None = None,
    intervals: IntervalSettings | None = None,
) -> pd.DataFrame:
    """CAOS_K for each k (columns ``sim_K{k}`` of objects.csv), CAOS-aggregated per caption.

    Long format: model, embedder, k, CAOS_K, and with ``intervals`` lo and hi (each value's
    interval, the image resampled:
    :func:`~halluscope.benchmarks.caos.intervals.caption_mean_intervals`).
    Exposed so tests and notebooks can check the numbers behind Figure 4.
    """
    from halluscope.benchmarks.caos.intervals import caption_mean_intervals

    selected = _select(objects, models, embedders, instructions)
    parts = []
    for k in ks:
        series = caption_then_mean(selected, f"sim_K{k}")
        parts.append(series.rename("CAOS_K").reset_index().assign(k=int(k)))
    frame = (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame(columns=["model", "embedder", "CAOS_K", "k"])
    )
    frame = frame[["model", "embedder", "k", "CAOS_K"]]
    if intervals is None or frame.empty:
        return frame
    found = caption_mean_intervals(selected, [f"sim_K{k}" for k in ks], intervals)
    return _with_bounds(frame, found, [f"sim_K{k}" for k in frame["k"]])


def plot_ksweep(
    objects: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    stem: str | Path,
    *,
    ks: Sequence[int] = tuple(range(1, 11)),
    instructions: Sequence[str] | None = None,
    highlight_k: int | None = 3,
    model_labels: Mapping[str, str] | None = None,
    frame: pd.DataFrame | None = None,
) -> list[Path]:
    """Figure 4: CAOS_K against k (one panel per embedder, one line per model).

    Where the curves flatten shows how many of the most frequent training objects attract the
    hallucinations; ``highlight_k`` marks the k used in the tables; a band around each line is its
    interval (the frame's ``lo``, ``hi``, when it has them). ``instructions`` restricts the
    objects (e.g. to the Table 1 instructions); None keeps all rows. ``frame``: the
    :func:`ksweep_frame` of these arguments (computed when None), the numbers drawn.
    """
    if frame is None:
        frame = ksweep_frame(objects, models, embedders, ks, instructions)
    palette = model_colors(models)
    labels = _labels(models, model_labels)
    with style_context():
        fig, axes = plt.subplots(
            1, len(embedders), figsize=(4.6 * len(embedders), 3.8), sharey=True, squeeze=False
        )
        for ax, embedder in zip(axes[0], embedders, strict=True):
            for model in models:
                line = frame[
                    (frame["model"] == model) & (frame["embedder"] == embedder)
                ].sort_values("k")
                ax.plot(
                    line["k"],
                    line["CAOS_K"],
                    marker="o",
                    markersize=4,
                    linewidth=1.6,
                    color=palette[model],
                    label=labels[model],
                )
                if {"lo", "hi"} <= set(line.columns):
                    ax.fill_between(line["k"].to_numpy(dtype=float),
                                    line["lo"].to_numpy(dtype=float),
                                    line["hi"].to_numpy(dtype=float),
                                    color=palette[model], alpha=0.12, linewidth=0)  # fmt: skip
            if highlight_k is not None:
                ax.axvline(highlight_k, color="0.5", linestyle="--", linewidth=1.0)
            ax.set_xticks(list(ks))
            ax.set_xlabel("$k$ (most frequent MSCOCO objects)")
            ax.set_title(embedder_label(embedder))
        axes[0][0].set_ylabel(_CAOS_MATH["CAOS_K"])
        handles, names = axes[0][0].get_legend_handles_labels()
        _model_legend(fig, handles, names)
        fig.suptitle(_title("CAOS$_{K}$ for k = 1…10", models))
        fig.tight_layout()
        return _finish(fig, stem)


def _with_bounds(frame: pd.DataFrame, found: Mapping, columns: Sequence[str]) -> pd.DataFrame:
    """``frame`` with ``lo``, ``hi``: each row's (model, embedder) bounds of its ``columns``
    entry in ``found`` (:func:`~halluscope.benchmarks.caos.intervals.caption_mean_intervals`)."""
    rows = zip(frame["model"], frame["embedder"], columns, strict=True)
    ends = [found.get((str(m), str(e)), {}).get(c, (None, None)) for m, e, c in rows]
    nan = math.nan
    return frame.assign(lo=[nan if a is None else a for a, _ in ends],
                        hi=[nan if b is None else b for _, b in ends])  # fmt: skip


def subset_names(n_top: int = 3) -> list[str]:
    """Names of the Figure 5 subsets, in plotting order."""
    return ["All", "In-domain (MSCOCO)", "Out-of-domain", f"Without top-{n_top}"]


def subsets_frame(
    objects: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    top_names: Sequence[str],
    *,
    k: int = 3,
    instructions: Sequence[str] | None = None,
    intervals: IntervalSettings | None = None,
) -> pd.DataFrame:
    """CAOS_T, CAOS_X, CAOS_K (k=``k``) on subsets of the hallucinated objects.

    Subsets: all; in-domain (MSCOCO) only; out-of-domain only; all but the ``top_names`` (the
    most frequent MSCOCO objects). Each subset is re-aggregated per caption, so a caption whose
    hallucinations all fall outside the subset drops out. Long format: model, embedder, subset,
    metric, value, and with ``intervals`` lo and hi (the image resampled, as Figure 4's band).
    """
    from halluscope.benchmarks.caos.intervals import caption_mean_intervals

    selected = _select(objects, models, embedders, instructions)
    in_domain = _as_bool(selected["in_domain"])
    top = {str(name).lower() for name in top_names}
    without_top = ~selected["name"].astype(str).str.lower().isin(top)
    everything = pd.Series(True, index=selected.index)
    masks = [everything, in_domain, ~in_domain, without_top]
    subsets = {
        name: selected[mask] for name, mask in zip(subset_names(len(top_names)), masks, strict=True)
    }
    parts = []
    scores = (("CAOS_T", "sim_T"), ("CAOS_X", "sim_X"), ("CAOS_K", f"sim_K{k}"))
    for subset, frame in subsets.items():
        found = {}
        if intervals is not None and not frame.empty:
            found = caption_mean_intervals(frame, [c for _, c in scores], intervals)
        for metric, column in scores:
            part = caption_then_mean(frame, column).rename("value").reset_index()
            part = part.assign(subset=subset, metric=metric)
            if intervals is not None:
                part = _with_bounds(part, found, [column] * len(part))
            parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    extra = ["lo", "hi"] if intervals is not None else []
    return out[["model", "embedder", "subset", "metric", "value", *extra]]


def _subset_label(subset: str) -> str:
    """Two-line tick labels, so the four subset names fit without rotation."""
    if subset.startswith("In-domain"):
        return "In-domain\n(MSCOCO)"
    return subset.replace("Out-of-domain", "Out-of-\ndomain").replace("Without ", "Without\n")


def _as_bool(values: pd.Series) -> pd.Series:
    """objects.csv writes in_domain as true/false; accept booleans and common spellings."""
    if values.dtype == bool:
        return values
    return values.astype(str).str.strip().str.lower().isin({"true", "1", "yes"})


def plot_subsets(
    objects: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    stem: str | Path,
    *,
    top_names: Sequence[str],
    k: int = 3,
    instructions: Sequence[str] | None = None,
    model_labels: Mapping[str, str] | None = None,
    frame: pd.DataFrame | None = None,
) -> list[Path]:
    """Figure 5: CAOS_T/X/K per subset of hallucinated objects (rows: embedders, columns: scores).

    Shows whether out-of-domain hallucinations relate to the image (T, X) and whether the frequent
    objects (K) drive the in-domain ones; the without-top-k bars test how much the few most
    frequent objects alone explain; a whisker on each bar is its interval (the frame's ``lo``,
    ``hi``, when it has them). ``frame``: the :func:`subsets_frame` of these arguments
    (computed when None), the numbers drawn.
    """
    if frame is None:
        frame = subsets_frame(objects, models, embedders, top_names, k=k, instructions=instructions)
    frame = frame.assign(model=frame["model"].map(_labels(models, model_labels)))
    labels = _labels(models, model_labels)
    palette = {labels[m]: colour for m, colour in model_colors(models).items()}
    frame = frame.assign(subset=frame["subset"].map(_subset_label))
    # Fixed order, so an empty subset (e.g. no out-of-domain object) shows as a gap, not a shift.
    order = [_subset_label(name) for name in subset_names(len(top_names))]
    metrics = ["CAOS_T", "CAOS_X", "CAOS_K"]
    with style_context():
        fig, axes = plt.subplots(
            len(embedders), 3, figsize=(13.0, 3.6 * len(embedders)), sharey=True, squeeze=False
        )
        for row, embedder in enumerate(embedders):
            for col, metric in enumerate(metrics):
                ax = axes[row][col]
                data = frame[(frame["embedder"] == embedder) & (frame["metric"] == metric)]
                sns.barplot(
                    data=data,
                    x="subset",
                    y="value",
                    hue="model",
                    order=order,
                    hue_order=[labels[m] for m in models],
                    palette=palette,
                    errorbar=None,
                    saturation=1.0,
                    ax=ax,
                    legend=(row == 0 and col == 0),
                )
                _bar_whiskers(ax, data, order, [labels[m] for m in models])
                title = _CAOS_MATH[metric] + (f" ($k={k}$)" if metric == "CAOS_K" else "")
                ax.set_title(f"{title} – {embedder_label(embedder)}")
                ax.set_xlabel("")
                ax.set_ylabel("score" if col == 0 else "")
        legend = axes[0][0].get_legend()
        if legend is not None:
            handles, names = axes[0][0].get_legend_handles_labels()
            legend.remove()
            _model_legend(fig, handles, names)
        fig.suptitle(_title("CAOS scores on subsets of hallucinated objects", models))
        fig.tight_layout()
        return _finish(fig, stem)


def _bar_whiskers(ax: Any, data: pd.DataFrame, order: Sequence[str], hues: Sequence[str]) -> None:
    """Each bar's interval (``lo``, ``hi``) as a whisker at the bar's centre: seaborn's dodged
    bars share 0.8 of a category's width, split evenly between the hues."""
    if not {"lo", "hi"} <= set(data.columns):
        return
    width, hues = 0.8 / len(hues), list(hues)
    for _, row in data[data["subset"].isin(order) & data["model"].isin(hues)].iterrows():
        if np.isfinite([row["lo"], row["hi"]]).all():
            x = order.index(row["subset"]) - 0.4 + width * (hues.index(row["model"]) + 0.5)
            ax.vlines(x, row["lo"], row["hi"], color="0.15", linewidth=0.9, zorder=3)


def _boxes(ax: Any, panel: pd.DataFrame, order: Sequence[str], palette: Mapping[str, Any]) -> None:
    """Box per model at x = 0..n-1 (seaborn's categorical positions), drawn with matplotlib
    directly: seaborn 0.13's boxplot passes ``vert=``, deprecated in Matplotlib 3.11."""
    for x, name in enumerate(order):
        values = panel.loc[panel["model"] == name, "value"].dropna().to_numpy()
        if values.size == 0:
            continue
        parts = ax.boxplot(
            [values],
            positions=[x],
            widths=0.55,
            showfliers=False,
            patch_artist=True,
            medianprops={"color": "0.15", "linewidth": 1.2},
            whiskerprops={"color": "0.6", "linestyle": ":"},  # the solid whiskers are intervals
            capprops={"color": "0.6"},
            boxprops={"edgecolor": "0.3"},
        )
        for box in parts["boxes"]:
            box.set_facecolor(palette[name])
            box.set_alpha(0.45)


def _instruction_points(ax: Any, panel: pd.DataFrame, order: Sequence[str], metric: str) -> None:
    """Each instruction's value at ``model position + its offset``, instructions in a fixed
    order across the 0.6 of the slot, with the interval as a whisker when the panel has it."""
    names = sorted(panel["instruction_id"].astype(str).unique())
    offsets = dict(zip(names, np.linspace(-0.3, 0.3, len(names)) if len(names) > 1 else [0.0],
                       strict=True))  # fmt: skip
    for x, name in enumerate(order):
        rows = panel[panel["model"] == name]
        at = x + rows["instruction_id"].astype(str).map(offsets).to_numpy(dtype=float)
        value = rows["value"].to_numpy(dtype=float)
        if {f"{metric}_lo", f"{metric}_hi"} <= set(rows.columns):
            lo, hi = (rows[f"{metric}_{end}"].to_numpy(dtype=float) for end in ("lo", "hi"))
            drawn = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(value)
            ax.vlines(at[drawn], lo[drawn], hi[drawn], color="0.15", linewidth=0.8, zorder=3)
        ax.scatter(at, value, s=12, color="0.2", zorder=4, linewidth=0)


def instructions_frame(
    summary: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    metrics: Sequence[str] = ("CAOS_T", "CAOS_X", "CAOS_K"),
) -> pd.DataFrame:
    """The numbers behind Figure 6: one row per (model, embedder, single instruction).

    Pooled rows (``table1``, ``all``) are left out; values are numeric (NaN where summary.csv has
    none). Columns: model, embedder, instruction_id, then ``metrics``, then each metric's
    interval ``<metric>_lo``, ``<metric>_hi`` where summary.csv has them; rows in summary.csv
    order.
    """
    single = summary[
        ~summary["instruction_id"].astype(str).isin(POOLED_INSTRUCTIONS)
        & summary["model"].isin(models)
        & summary["embedder"].isin(embedders)
    ]
    frame = single[["model", "embedder", "instruction_id"]].assign(
        instruction_id=single["instruction_id"].astype(str)
    )
    for metric in metrics:
        frame[metric] = pd.to_numeric(single[metric], errors="coerce")
    for metric in metrics:
        for end in ("lo", "hi"):
            if f"{metric}_{end}" in single.columns:
                frame[f"{metric}_{end}"] = pd.to_numeric(single[f"{metric}_{end}"], errors="coerce")
    return frame.reset_index(drop=True)


def plot_instructions(
    summary: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    stem: str | Path,
    *,
    metrics: Sequence[str] = ("CAOS_T", "CAOS_X", "CAOS_K"),
    model_labels: Mapping[str, str] | None = None,
    frame: pd.DataFrame | None = None,
) -> list[Path]:
    """Figure 6: spread of per-instruction CAOS scores (box + points), the mean in red.

    One point per individual instruction (pooled rows are excluded), at a fixed offset in
    instruction order (the same for every model, so a reader can follow one instruction across
    models; no random jitter, so the output is deterministic), with a whisker spanning its
    interval: whether instructions differ by more than the sampling noise of the images.
    ``frame``: the :func:`instructions_frame` of these arguments (computed when None), the
    numbers drawn.
    """
    single = instructions_frame(summary, models, embedders, metrics) if frame is None else frame
    labels = _labels(models, model_labels)
    order = [labels[m] for m in models]
    palette = {labels[m]: colour for m, colour in model_colors(models).items()}
    data = single.assign(model=single["model"].map(labels))
    with style_context():
        fig, axes = plt.subplots(
            len(embedders),
            len(metrics),
            figsize=(max(3.2, 1.3 * len(models)) * len(metrics), 3.4 * len(embedders)),
            sharey=True,
            squeeze=False,
        )
        for row, embedder in enumerate(embedders):
            for col, metric in enumerate(metrics):
                ax = axes[row][col]
                panel = data[data["embedder"] == embedder].assign(value=lambda d, m=metric: d[m])
                _boxes(ax, panel, order, palette)
                _instruction_points(ax, panel, order, metric)
                means = panel.groupby("model", sort=False)["value"].mean().reindex(order)
                ax.scatter(
                    range(len(order)),
                    means.to_numpy(),
                    marker="D",
                    s=36,
                    color="red",
                    edgecolor="white",
                    linewidth=0.6,
                    zorder=5,
                    label="mean" if (row, col) == (0, 0) else None,
                )
                ax.set_xticks(range(len(order)), order)  # ax.boxplot replaced the names
                ax.set_xlim(-0.5, len(order) - 0.5)
                ax.set_title(f"{_CAOS_MATH[metric]} – {embedder_label(embedder)}")
                ax.set_xlabel("")
                ax.set_ylabel("score over instructions" if col == 0 else "")
                if len(order) > 3:
                    ax.tick_params(axis="x", labelrotation=20)
        handles, names = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, names, loc="upper right", frameon=False)
        n_instr = single["instruction_id"].nunique()
        fig.suptitle(_title(f"CAOS scores across {n_instr} instructions, means in red", models))
        fig.tight_layout()
        return _finish(fig, stem)
