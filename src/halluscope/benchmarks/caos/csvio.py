"""Deterministic CSV for score tables (floats as ``repr``, None as empty)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path

from halluscope.io import InputError, atomic_write_text


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def six_decimals(value: object) -> str:
    """A report twin's cell: floats with 6 decimals, booleans as ``true`` / ``false``."""
    return (
        f"{value:.6f}" if isinstance(value, float) and not isinstance(value, bool) else _cell(value)
    )


def csv_text(columns: Sequence[str], rows: Iterable[dict], cell=_cell) -> str:
    """Rows (dicts) with a fixed column order as CSV text, each value through ``cell``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([cell(row.get(c)) for c in columns])
    return buffer.getvalue()


def write_csv(path: str | Path, columns: Sequence[str], rows: Iterable[dict]) -> None:
    """Write rows (dicts) with a fixed column order, atomically."""
    atomic_write_text(path, csv_text(columns, rows))


def read_csv(path: str | Path) -> list[dict[str, str]]:
    """Read a CSV written by :func:`write_csv` into string dicts."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return list(csv.DictReader(handle))
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None


def read_header(path: str | Path) -> list[str] | None:
    """The column names of a CSV written by :func:`write_csv` (its first line), or None for an
    empty file: a file of no rows still says what its columns are."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return next(csv.reader(handle), None)
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None


def as_float(value: str) -> float | None:
    """Parse a CSV cell written by :func:`write_csv` back into a float (empty -> None)."""
    return float(value) if value != "" else None
