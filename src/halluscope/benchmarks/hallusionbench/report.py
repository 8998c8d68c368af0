"""HallusionBench's tables (aAcc, fAcc, qAcc, easy and hard qAcc per model, the subset scored
stated; and ours beside the published numbers of the models ``hallusionbench.published``
names) and figure (aAcc per subcategory, one bar per model), with the shared rules of
:mod:`halluscope.report.benchmarks` (fixed decimals, escaped text, deterministic figures,
simulated models said so)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from halluscope.benchmarks.hallusionbench.settings import HbFigureSettings, HbTableSettings
from halluscope.report import is_simulated
from halluscope.report.benchmarks import _finish_figure, _to_latex, interval_end
from halluscope.report.latex import latex_escape
from halluscope.stage_command import stage

#: (score file key, column label): the reference's printed numbers (easy / hard: per pair).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("aAcc", "aAcc"),
    ("fAcc", "fAcc"),
    ("qAcc", "qAcc"),
    ("easy_aAcc", "Easy qAcc"),
    ("hard_aAcc", "Hard qAcc"),
)


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)


def hb_frame(reports: Mapping[str, Mapping[str, Any]], models: Sequence[str]) -> pd.DataFrame:
    """model x (aAcc, fAcc, qAcc, easy, hard) in percent; a number the subset cannot have (fAcc
    of the text-only questions, which have no figure) NaN."""
    rows = [[_number(reports[m].get(key)) for key, _ in COLUMNS] for m in models]
    index = pd.Index([latex_escape(m) for m in models], name="Model")
    return pd.DataFrame(rows, index=index, columns=[label for _, label in COLUMNS])


def subset_text(reports: Mapping[str, Mapping[str, Any]], models: Sequence[str]) -> str:
    """The subset the models' numbers cover (``178 of 1129 questions``), or each model's."""
    subsets = {str(reports[m]["subset"]) for m in models}
    if len(subsets) == 1:
        return subsets.pop().replace("1129", "1,129")
    return "; ".join(f"{m}: {reports[m]['subset']}" for m in models).replace("1129", "1,129")


def hb_table_latex(
    reports: Mapping[str, Mapping[str, Any]],
    models: Sequence[str],
    decimals: int = 2,
    *,
    dataset: str = "demo",
) -> str:
    """aAcc, fAcc, qAcc per model (``reports``: model -> scores.json), the subset scored and the
    judge in the caption."""
    frame = hb_frame(reports, models)
    judges = sorted({str(reports[m]["judge"]).split(":")[0] for m in models})
    uncertain = ", ".join(f"{latex_escape(m)} {reports[m]['n_uncertain']}" for m in models)
    note = ""
    if is_simulated(models):
        note = (
            "Results from simulated LVLMs (model ids \\texttt{sim-*}), which answer from the "
            "truth with their preset's yes-bias and miss rate: they exercise the pipeline and say "
            "nothing about real models. "
        )
    caption = (
        note
        + f"HallusionBench on {latex_escape(subset_text(reports, models))} (percent; higher is "
        "better): aAcc per question, fAcc per figure (all its questions right), qAcc per "
        "question pair (right on every figure of its set), easy / hard qAcc over the original / "
        "edited figures, as the reference computes them; an uncertain answer to a question "
        "without a figure counts as correct. ``--'': the subset has none (the text-only "
        f"questions have no figure). Judge: {latex_escape(', '.join(judges))}. Uncertain "
        f"answers: {uncertain}."
        + (
            " The CSV twin gives each number's interval (columns lo, hi; params.yaml's"
            r" \texttt{intervals}, the question set resampled)."
            if any(reports[m].get("intervals") for m in models)
            else ""
        )
    )
    return _to_latex(
        frame,
        decimals=decimals,
        caption=caption,
        label=f"tab:{dataset}:hallusionbench",
        column_format="l" + "r" * frame.shape[1],
    )


def published_frame(
    reports: Mapping[str, Mapping[str, Any]], models: Sequence[str]
) -> pd.DataFrame:
    """(model, row) x (aAcc, fAcc, qAcc, easy, hard): ours, then per published row of the
    model's leaderboard entry (score file ``leaderboard``) its numbers and ours minus them; a
    number a side lacks (leaderboard.json has no easy / hard; fAcc of text-only answers) NaN."""
    rows, index = [], []
    for m in models:
        label = latex_escape(m)
        rows.append([_number(reports[m].get(key)) for key, _ in COLUMNS])
        index.append((label, "ours"))
        board = reports[m].get("leaderboard") or {}
        for entry in board.get("published", []):
            how = latex_escape(entry.get("evaluation") or "leaderboard.json")
            name = latex_escape(str(entry["model"]))
            rows.append([_number(entry.get(key)) for key, _ in COLUMNS])
            index.append((label, f"published {name}, {how}"))
            difference = entry.get("difference", {})
            rows.append([_number(difference.get(key)) for key, _ in COLUMNS])
            index.append((label, f"ours $-$ published {name}, {how}"))
    return pd.DataFrame(
        rows,
        index=pd.MultiIndex.from_tuples(index, names=["Model", ""]),
        columns=[label for _, label in COLUMNS],
    )


def published_latex(
    reports: Mapping[str, Mapping[str, Any]],
    models: Sequence[str],
    decimals: int = 2,
    *,
    dataset: str = "demo",
) -> str:
    """Ours beside the published numbers, the subset each side covers and the judges stated,
    and, when ours cover a subset, that the two are not comparable one to one."""
    frame = published_frame(reports, models)
    judges = sorted({str(reports[m]["judge"]).split(":")[0] for m in models})
    without = [m for m in models if not reports[m].get("leaderboard")]
    subset = [m for m in models if reports[m]["n_scored"] != reports[m]["n_questions"]]
    note = ""
    if is_simulated(models):
        note = (
            "Results from simulated LVLMs (model ids \\texttt{sim-*}): they exercise the "
            "pipeline and have no published numbers. "
        )
    note += (
        f"HallusionBench: ours (on {latex_escape(subset_text(reports, models))}, judge "
        f"{latex_escape(', '.join(judges))}) beside the published numbers of the model "
        "\\texttt{hallusionbench.published} names for each (percent; tianyi-lab/HallusionBench "
        "at 744007c: its README's table and leaderboard.json). The published numbers are over "
        "all 1,129 questions, judged by GPT-4 (GPT Eval) or by hand (Human Eval). "
    )
    if subset:
        note += (
            "Ours cover a subset of the questions with another judge, so the two are not "
            "comparable one to one: the rows are set side by side to show how far apart they "
            "are, not as a measured difference between models, judges or runs. "
        )
    if without:
        note += f"No published numbers named for: {latex_escape(', '.join(without))}. "
    note += "``--'': a number the side does not have."
    return _to_latex(
        frame,
        decimals=decimals,
        caption=note,
        label=f"tab:{dataset}:hallusionbench-published",
        column_format="ll" + "r" * frame.shape[1],
    )


def subcategories(reports: Mapping[str, Mapping[str, Any]], models: Sequence[str]) -> list[str]:
    """The ``<category>/<subcategory>`` splits any model was scored on, sorted."""
    return sorted({s for m in models for s in reports[m].get("splits", {}) if "/" in s})


def _error_bars(
    report: Mapping[str, Any], groups: Sequence[str], heights: Sequence[float]
) -> dict[str, Any]:
    """``bar``'s ``yerr`` from each split's aAcc interval (the score file's ``intervals``), none
    when the file has no intervals; a bar without an interval gets no whisker."""
    import numpy as np

    splits = (report.get("intervals") or {}).get("splits")
    if not splits:
        return {}
    low, high = [], []
    for group, height in zip(groups, heights, strict=True):
        interval = splits.get(group, {}).get("aAcc") or {}
        lo, hi = interval.get("lo"), interval.get("hi")
        low.append(np.nan if lo is None else max(height - lo, 0.0))
        high.append(np.nan if hi is None else max(hi - height, 0.0))
    return {"yerr": np.array([low, high]), "error_kw": {"elinewidth": 0.6, "capsize": 1.5}}


def _level(reports: Mapping[str, Mapping[str, Any]], models: Sequence[str]) -> float | None:
    """The level of the intervals the whiskers draw (None: no score file has intervals)."""
    for m in models:
        level = ((reports[m].get("intervals") or {}).get("aAcc") or {}).get("level")
        if level is not None:
            return float(level)
    return None


def plot_hb_bars(
    reports: Mapping[str, Mapping[str, Any]],
    models: Sequence[str],
    stem: str | Path,
    dpi: int = 200,
) -> list[Path]:
    """aAcc per subcategory (and overall), one bar per model with its interval, PDF + PNG."""
    import matplotlib.pyplot as plt
    import numpy as np

    from halluscope.report.style import style_context

    groups = ["Overall", *subcategories(reports, models)]
    x = np.arange(len(groups))
    width = 0.8 / max(len(models), 1)
    with style_context():
        fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(groups) + 2.0), 3.6))
        for i, model in enumerate(models):
            splits = reports[model].get("splits", {})
            heights = [_number(splits.get(g, {}).get("aAcc")) for g in groups]
            offset = (i - (len(models) - 1) / 2) * width
            bars = ax.bar(x + offset, heights, width, label=model, **_error_bars(
                reports[model], groups, heights))  # fmt: skip
            for bar, height in zip(bars, heights, strict=True):  # at the base: clear of whiskers
                if not np.isnan(height):
                    ax.text(bar.get_x() + bar.get_width() / 2, 1.5, f"{height:.0f}",
                            ha="center", va="bottom", fontsize="xx-small")  # fmt: skip
        ax.set_xticks(x)
        ax.set_xticklabels(groups, rotation=20, ha="right")
        ax.set_ylabel("aAcc (%)")
        ax.set_ylim(0, 125)
        ax.set_yticks(range(0, 101, 20))
        ax.legend(frameon=False, loc="upper center", ncol=len(models), fontsize="x-small")
        subset = subset_text(reports, models)
        level = _level(reports, models)
        whiskers = f", {level:.0%} intervals" if level else ""
        title = f"HallusionBench aAcc by subcategory{whiskers} ({subset})"
        paths = _finish_figure(fig, title, models, stem, dpi, sep="\n")
    return paths


@stage("hallusionbench-table")
def write_hb_table(reports: list[Path], /, *, settings: HbTableSettings, out: Path) -> None:
    """HallusionBench LaTeX table (and CSV twin): aAcc, fAcc, qAcc per model."""
    from halluscope.io import reports_by_model
    from halluscope.report.benchmarks import write_table

    models = settings.models
    by_model = reports_by_model(reports, models)
    latex = hb_table_latex(by_model, models, settings.decimals, dataset=settings.run)
    lo, hi = ({m: interval_end(r, end) for m, r in by_model.items()} for end in ("lo", "hi"))
    bounds = (hb_frame(lo, models), hb_frame(hi, models))
    write_table(out, latex, hb_frame(by_model, models), models, bounds)


@stage("hallusionbench-published")
def write_published_table(reports: list[Path], /, *, settings: HbTableSettings, out: Path) -> None:
    """HallusionBench LaTeX table (and CSV twin): ours beside the published numbers."""
    from halluscope.io import reports_by_model
    from halluscope.report.benchmarks import write_table

    models = settings.models
    by_model = reports_by_model(reports, models)
    latex = published_latex(by_model, models, settings.decimals, dataset=settings.run)
    write_table(out, latex, published_frame(by_model, models), models)


@stage("hallusionbench-figure")
def draw_hb_bars(reports: list[Path], /, *, settings: HbFigureSettings, out_stem: Path) -> None:
    """HallusionBench aAcc per subcategory, one bar per model (PDF + PNG)."""
    from halluscope.io import reports_by_model

    models = settings.models
    plot_hb_bars(reports_by_model(reports, models), models, out_stem, dpi=settings.dpi)
