"""The numbers behind each figure as CSV (for DVC plots and readers of the figures)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from halluscope.io import atomic_write_bytes


def figure_data_csv(frame: pd.DataFrame, models: Sequence[str], embedders: Sequence[str]) -> str:
    """The numbers behind a figure as CSV text (for DVC plots and readers of the figure): rows in
    the order of ``models`` and ``embedders`` (the figure's legend and panel order), then of the
    frame's ``k`` / ``instruction_id``, else as the frame has them; floats at full precision,
    empty for NaN, ``\\n`` line ends."""
    order = {"model": list(models), "embedder": ["", *embedders]}

    def key(column: pd.Series) -> pd.Series:
        if column.name in order:
            ranks = {value: rank for rank, value in enumerate(order[column.name])}
            return column.map(lambda v: ranks.get(v, len(ranks)))
        return column

    keys = [c for c in ("model", "embedder", "k", "instruction_id") if c in frame.columns]
    ordered = frame.sort_values(keys, key=key, kind="stable") if keys else frame
    return ordered.to_csv(index=False, lineterminator="\n")


def write_figure_data(
    frame: pd.DataFrame, stem: str | Path, models: Sequence[str], embedders: Sequence[str]
) -> Path:
    """Write :func:`figure_data_csv` to ``{stem}.csv`` atomically; returns the path."""
    path = Path(f"{stem}.csv")
    atomic_write_bytes(path, figure_data_csv(frame, models, embedders).encode("utf-8"))
    return path
