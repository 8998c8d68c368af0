"""The paired comparisons of a CAOS run (:mod:`halluscope.benchmarks.caos.paired`) as booktabs
LaTeX: the model pairs on the headline numbers, then each model's instruction pairs. Rendered as
the other CAOS tables are (:func:`halluscope.benchmarks.caos.tables._render`); the CSV twin,
with every compared number, is :func:`halluscope.benchmarks.caos.paired.paired_csv`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from halluscope.benchmarks.caos.paired import INSTRUCTIONS, MODELS
from halluscope.benchmarks.caos.tables import (
    _SIMULATED_NOTE,
    GENERAL_ROWS,
    _render,
    caos_subscript,
    metric_label,
)
from halluscope.report import embedder_label
from halluscope.report.latex import latex_escape

#: the columns of the paired table (metric, embedding or "" for every embedder's CAOS_avg): the
#: headline numbers; the CSV twin has every compared number
PAIRED_COLUMNS: tuple[str, ...] = ("precision", "recall", "# Objects", "CHAIR_S", "CHAIR_I")


def _stacked(*lines: str) -> str:
    """A header cell of several lines (right-aligned), as the published columns' headers."""
    return r"\begin{tabular}[b]{@{}r@{}}" + r"\\".join(lines) + r"\end{tabular}"


def _paired_header(embedding: str, metric: str) -> str:
    if not embedding:
        general = {name: label for _, name, label in GENERAL_ROWS} | {"CHAIR_I": "CHAIR$_I$"}
        return general.get(metric) or metric_label("", metric)
    label = f"CAOS$_{{{caos_subscript(metric)}}}$"
    return _stacked(label, latex_escape(embedder_label(embedding)))


def _difference_cell(record: Mapping | None, decimals: int) -> str:
    """``$+0.12^{*}$``: the difference, starred when the data support it; ``--`` if undefined."""
    if record is None or record["difference"] is None:
        return "--"
    text = f"{record['difference']:+.{decimals}f}"
    if float(text) == 0:  # no sign on a difference that rounds to 0
        text = f"{0.0:.{decimals}f}"
    star = "^{*}" if record["supported"] else ""
    return f"${text}{star}$"


def paired_latex(
    records: Sequence[Mapping],
    models: Sequence[str],
    embedders: Sequence[str],
    decimals: int = 2,
    simulated: bool = False,
    *,
    level: float = 0.95,
    run: str = "demo",
) -> str:
    """The paired comparisons (:mod:`halluscope.benchmarks.caos.paired`) as two booktabs tables:
    every model pair (rows) on the headline numbers (columns: :data:`PAIRED_COLUMNS` and each
    embedder's CAOS_avg), the difference starred when supported; then per model its instruction
    pairs, the difference itself when a model has one pair, else how many of its pairs are
    supported. Empty tables (one model, one instruction) are left out."""
    columns = [("", m) for m in PAIRED_COLUMNS] + [(e, "CAOS_avg") for e in embedders]
    headers = [_paired_header(e, m) for e, m in columns]
    percent = f"{100 * level:g}\\%"

    def support(family: str, counted: bool = False) -> str:
        what = "Each cell counts the pairs whose difference" if counted else "$^{*}$: a difference"
        return (
            f"{what} the data support at the {percent} level (swap-permutation p-value, "
            f"Holm-adjusted over the {family}){', of all its pairs' if counted else ''}. "
        )

    twin = (
        f"The CSV twin gives each difference's {percent} interval (the images resampled "
        "jointly), both p-values, and CAOS$_T$, CAOS$_X$, CAOS$_K$, CAOS$_{T/X}$, CAOS$_{X/K}$ "
        "per embedding."
    )
    note = _SIMULATED_NOTE if simulated else ""
    out = []
    by_pair: dict[tuple[str, str], dict[tuple[str, str], Mapping]] = {}
    for r in records:
        if r["comparison"] == MODELS:
            by_pair.setdefault((r["model_a"], r["model_b"]), {})[(r["embedding"], r["metric"])] = r
    if by_pair:
        pooled = next(iter(by_pair.values()))
        pooled = next(iter(pooled.values()))["instructions_a"].replace("+", ", ")
        frame = pd.DataFrame(
            {
                h: [_difference_cell(cells.get(c), decimals) for cells in by_pair.values()]
                for h, c in zip(headers, columns, strict=True)
            }
        )
        labels = [f"{latex_escape(a)} $-$ {latex_escape(b)}" for a, b in by_pair]
        caption = (
            note + "Paired differences between models on the same images, pooled over the "
            f"Table~1 instructions ({latex_escape(pooled)}): model A minus model B, precision "
            "and CHAIR$_S$ in Table~1's reading, CHAIR$_I$ over MSCOCO mentions. "
            + support("model pairs of each number")
            + twin
        )
        out.append(
            _render(frame, labels, decimals=decimals, caption=caption,
                    label=f"tab:{run}:caos-paired", columns_name="A $-$ B")
        )  # fmt: skip
    by_model: dict[str, dict[tuple[str, str], list[Mapping]]] = {}
    for r in records:
        if r["comparison"] == INSTRUCTIONS:
            cells = by_model.setdefault(r["model_a"], {})
            cells.setdefault((r["embedding"], r["metric"]), []).append(r)
    if by_model:
        single = all(len(v) == 1 for cells in by_model.values() for v in cells.values())

        def cell(found: list[Mapping] | None) -> str:
            if not found:
                return "--"
            if single:
                return _difference_cell(found[0], decimals)
            return f"{sum(bool(r['supported']) for r in found)}/{len(found)}"

        names = [m for m in models if m in by_model]
        frame = pd.DataFrame(
            {
                h: [cell(by_model[m].get(c)) for m in names]
                for h, c in zip(headers, columns, strict=True)
            }
        )
        first = next(iter(by_model[names[0]].values()))[0]
        pair = " $-$ ".join(latex_escape(first[f"instructions_{s}"]) for s in "ab")
        what = (
            f"instruction {pair} of each model, on the same images"
            if single
            else "every pair of one model's instructions, on the same images"
        )
        caption = (
            note
            + f"Paired differences between the instructions of each model: {what}. "
            + support("instruction pairs of each model and number", counted=not single)
            + twin
        )
        out.append(
            _render(frame, [latex_escape(m) for m in names], decimals=decimals, caption=caption,
                    label=f"tab:{run}:caos-paired-instructions")
        )  # fmt: skip
    return "\n".join(out) if out else "% no two models or instructions to compare\n"
