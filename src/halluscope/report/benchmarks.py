"""The helpers every benchmark's tables (booktabs LaTeX) and figures (deterministic PDF/PNG)
share: the packages' report modules (:mod:`halluscope.benchmarks.nope.report`,
:mod:`halluscope.benchmarks.trihe.report`, :mod:`halluscope.benchmarks.phd.report`) use them.

Same rules as the CAOS tables and figures (:mod:`halluscope.benchmarks.caos.tables`,
:mod:`halluscope.benchmarks.caos.figures`): tables go through ``Styler.to_latex`` (fixed
decimals, ``--`` for missing values, no dates), free text is escaped, figures are drawn in
:func:`~halluscope.report.style.style_context` and written by
:func:`~halluscope.report.style.savefig`, and every output made from simulated LVLMs
(``sim-*``) says so (:func:`_sim_note`, :func:`_finish_figure`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from halluscope.report import booktabs_latex, is_simulated
from halluscope.report.latex import latex_escape

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


# ------------------------------------------------------------------------------------- tables


def _space_models(latex: str, n_modes: int, n_models: int) -> str:
    """``\\addlinespace`` between the models' row blocks (PhD's and NOPE's tables)."""
    lines = latex.split("\n")
    first = lines.index("\\midrule") + 1
    out = lines[:first]
    for row, line in enumerate(lines[first : first + n_modes * n_models]):
        if row and row % n_modes == 0:
            out.append("\\addlinespace")
        out.append(line)
    return "\n".join(out + lines[first + n_modes * n_models :])


# ------------------------------------------------------------------------------------ figures


def _finish_figure(
    fig: Any, title: str, models: Sequence[str], stem: str | Path, dpi: int, sep: str = " "
) -> list[Path]:
    """Title (marked when the models are simulated), layout, deterministic save, close."""
    import matplotlib.pyplot as plt

    from halluscope.report.style import savefig

    if is_simulated(models):
        title += sep + "(simulated LVLMs)"
    fig.suptitle(title, fontweight="bold")
    fig.tight_layout()
    paths = savefig(fig, stem, dpi=dpi)
    plt.close(fig)
    return paths


def interval_end(report: Mapping[str, Any], end: str) -> dict[str, Any]:
    """A score file's ``intervals`` tree read as a score file of one end (``"lo"`` or ``"hi"``)
    of each interval: the same keys, so a table's frame function builds the bounds' frames."""

    def pick(node: Any) -> Any:
        if isinstance(node, Mapping) and "lo" in node and "hi" in node:
            return node[end]
        return {k: pick(v) for k, v in node.items()} if isinstance(node, Mapping) else node

    return pick(report.get("intervals") or {})


def write_table(
    out: Path,
    latex: str,
    frame: pd.DataFrame,
    models: Sequence[str],
    bounds: tuple[pd.DataFrame, pd.DataFrame] | None = None,
) -> None:
    """A benchmark table: its LaTeX at ``out`` and its CSV twin beside it (the numbers that DVC's
    metrics JSON and Snakemake's report read), with each cell's interval from ``bounds`` (the
    frames of its low and high ends, shaped as ``frame``) when given."""
    from halluscope.io import atomic_write_text
    from halluscope.report.latex import frame_records, twin_csv

    atomic_write_text(out, latex)
    records = frame_records(frame, list(models), bounds)
    atomic_write_text(out.with_suffix(".csv"), twin_csv(records))
