"""LaTeX escaping and the CSV twins of tables, shared by every benchmark's report.

Why one module: every benchmark's table writes a LaTeX file and a long-format CSV twin (one
row per cell, :data:`TWIN_COLUMNS`) that DVC reads as metrics; the twin's float format and the
escaping of free text (model ids such as ``sim_llava``) must be the same in all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

#: CSV twin columns (long format), one row per table cell. ``embedding`` names the embedder a
#: cell depends on, ``setting`` the other settings it depends on (``k=5`` for CAOS_K), so that
#: a twin read without its LaTeX table still says what its numbers are; ``lo`` and ``hi`` the
#: cell's interval at params.yaml's ``intervals`` level, where the table has one
#: (docs/statistics.md).
TWIN_COLUMNS: tuple[str, ...] = (
    "model", "embedding", "metric", "value", "lo", "hi", "published", "setting",
)  # fmt: skip


_LATEX_SPECIALS: dict[str, str] = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """Escape LaTeX special characters in free text (model ids such as ``sim_llava``)."""
    return "".join(_LATEX_SPECIALS.get(char, char) for char in str(text))


def _cell(value: float | None) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def twin_record(
    model, embedding, metric, value, published=None, setting="", lo=None, hi=None
) -> dict:
    return {
        "model": model,
        "embedding": embedding,
        "metric": metric,
        "value": _cell(value),
        "lo": _cell(lo),
        "hi": _cell(hi),
        "published": _cell(published),
        "setting": setting,
    }


def twin_csv(records: Sequence[Mapping]) -> str:
    """The CSV twin of a table: long format, one row per cell, fixed float formatting."""
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(TWIN_COLUMNS)
    for r in records:
        writer.writerow(["" if r.get(c) is None else _format(r[c]) for c in TWIN_COLUMNS])
    return buffer.getvalue()


def plain_text(label: object) -> str:
    """A LaTeX label as plain text for a CSV twin (``Hallu$_{\\mathrm{I}}$`` -> ``Hallu_I``)."""
    import re

    text = str(label)
    text = re.sub(r"\\(?:mathrm|mathcal|text|emph|overline)\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\\(?:mathrm|mathcal|text|emph|overline)\{([^{}]*)\}", r"\1", text)
    text = text.replace("\\%", "%").replace("\\_", "_").replace("\\#", "#").replace("\\&", "&")
    return re.sub(r"[${}]", "", text).strip()


def frame_records(
    frame: pd.DataFrame,
    models: Sequence[str],
    bounds: tuple[pd.DataFrame, pd.DataFrame] | None = None,
) -> list[dict]:
    """Long-format twin records of a table frame whose first index level is the (escaped)
    model id: the other index levels and the column levels, joined by `` / ``, name the metric;
    ``bounds``, two frames shaped as ``frame``, give each cell's ``lo`` and ``hi``."""
    by_label = {latex_escape(m): m for m in models}
    records = []
    for index, row in frame.iterrows():
        keys = index if isinstance(index, tuple) else (index,)
        model = by_label.get(keys[0], plain_text(keys[0]))
        for column, value in row.items():
            parts = [*keys[1:], *(column if isinstance(column, tuple) else (column,))]
            metric = " / ".join(plain_text(p) for p in parts if str(p))
            lo, hi = (None, None) if bounds is None else (b.at[index, column] for b in bounds)
            records.append(twin_record(model, "", metric, value, lo=lo, hi=hi))
    return records


def _format(value: object) -> str:
    """Floats with 6 decimals (stable across platforms' last-bit differences), others as text."""
    return f"{value:.6f}" if isinstance(value, float) else str(value)
