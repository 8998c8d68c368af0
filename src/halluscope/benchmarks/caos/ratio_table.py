"""The ratio table (``caos_ratios``): CAOS_T/X, CAOS_X/K and CAOS_avg from the pooled means, as
Tables 1 and 2 compute them, beside the mean over captions of each caption's own ratio, each
with its interval: how much the aggregation moves the numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from halluscope.benchmarks.caos.tables import (
    _INTERVAL_NOTE,
    _SIMULATED_NOTE,
    CAOS_COLUMN_OF,
    CAOS_METRIC,
    _nan,
    _render,
    block_starts,
    caos_label,
    interval_of,
    model_columns,
    summary_rows,
    summary_value,
    table_rows,
)
from halluscope.report.latex import twin_record


def ratio_records(
    summary: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    *,
    instruction_id: str = "table1",
) -> list[dict]:
    """CAOS_T/X, CAOS_X/K and CAOS_avg two ways: from the pooled means (the tables) and as the
    mean over captions of the per-caption values (secondary view, metric suffix
    `` (mean of ratios)``), each with summary.csv's interval."""
    rows = summary_rows(summary, instruction_id)
    records = []
    for embedder in embedders:
        for column in ("CAOS_TX", "CAOS_XK", "CAOS_avg"):
            for suffix, how in (("", ""), ("_mor", " (mean of ratios)")):
                for model in models:
                    value = summary_value(rows, model, [embedder], column + suffix)
                    lo, hi = interval_of(rows, model, [embedder], column + suffix)
                    records.append(
                        twin_record(model, embedder, CAOS_METRIC[column] + how, value, lo=lo, hi=hi)
                    )
    return records


def rom_latex(
    summary: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    decimals: int = 2,
    simulated: bool = False,
    *,
    instruction_id: str = "table1",
    label: str = "tab:caos-ratios",
    records: Sequence[Mapping] | None = None,
) -> str:
    """The ratio cells of Table 1 computed from the pooled means (the paper's tables) beside the
    mean over captions of the per-caption ratios, to show how much the aggregation matters."""
    if records is None:
        records = ratio_records(summary, models, embedders, instruction_id=instruction_id)
    order = table_rows(records)
    cell = {(r["embedding"], r["metric"], r["model"]): r["value"] for r in records}
    frame = model_columns(order, models, lambda e, x, m: _nan(cell.get((e, x, m))))
    labels = []
    for e, metric in order:
        base, _, how = metric.partition(" (")
        labels.append(
            caos_label(CAOS_COLUMN_OF[base], e)
            + (", mean of ratios" if how else ", from the pooled means")
        )
    caption = (
        (_SIMULATED_NOTE if simulated else "")
        + r"CAOS$_{T/X}$, CAOS$_{X/K}$ and CAOS$_{\mathrm{avg}}$ computed from the pooled mean "
        + "scores (the paper's aggregation, used in Tables 1 and 2) and as the mean over "
        + "captions of the per-caption values (secondary view)."
        + (_INTERVAL_NOTE if any(r.get("lo") is not None for r in records) else "")
    )
    breaks = block_starts(order)
    return _render(frame, labels, decimals=decimals, caption=caption, label=label, breaks=breaks)
