"""The headline metrics: per model, the few numbers a reader compares first (CHAIR_S, CAOS_avg
of the first embedder, POPE F1, NOPE NegP accuracy, Tri-HE Hallu_I, PhD index, and those a benchmark
folder declares in its ``headlines.py``), every one a fraction in [0, 1].

They are picked from the tables' CSV twins, never computed again, and written one small JSON per
model (``metrics/<profile>/<model>.json``, kept in git beside ``results/``): DVC shows one row per
file, so ``dvc metrics show`` is a table of models x headline numbers that fits a terminal, and
``dvc exp show`` has a handful of columns per model instead of every table cell. DVC prefixes a
metric's column with its file (``metrics/demo/sim-precise.json:CAOS_avg_glove``, 45 characters),
so one CAOS column per model, not one per embedder, is what keeps ``dvc exp show --only-changed``
after a CAOS experiment within 200 columns; every embedder's CAOS_avg is in
``results/metrics/<profile>.json`` and the tables.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Headline:
    """One headline number: the table (CSV twin stem) and the metric label it is read from."""

    #: its key in the model's file (the column of `dvc metrics show`); ``{}`` takes the
    #: pattern's group (the PhD mode) or, with ``first_embedding``, the embedder
    name: str
    table: str
    #: a regular expression the twin's ``metric`` matches whole; per model the
    #: first matching row of the table wins, so the table's order says which judge or mode
    pattern: str
    #: the value of the table's first embedder (CAOS: ``embed.embedders``' first), named by it
    first_embedding: bool = False
    #: the table prints a percentage (as its paper does); the headline is its fraction, so that
    #: every headline number is a fraction in [0, 1] beside the others
    percent: bool = False


#: A table or metric a profile does not produce is left out of its files.
HEADLINES: tuple[Headline, ...] = (
    Headline("CHAIR_S", "caos_table1", r"CHAIR_S"),
    Headline("CAOS_avg_{}", "caos_table1", r"CAOS_avg", first_embedding=True),
    Headline("POPE_F1", "caos_table1", r"POPE-F1"),
    Headline("NOPE_NegP", "nope_table", r"NegP questions\b.* / NegP Acc\.", percent=True),
    # the table's first judge is its main one (trihe.judges)
    Headline("TriHE_HalluI", "trihe_table", r".* / Overall / Hallu_I\b.*", percent=True),
    # the table's first mode (the demo's base; a profile of one mode, that mode)
    Headline("PhD_{}", "phd_table", r"(\w+)\b[^/]* / All"),
)


def all_headlines() -> tuple[Headline, ...]:
    """:data:`HEADLINES` plus every benchmark's ``HEADLINES`` (its ``headlines`` part)."""
    from halluscope.benchmarks import import_plugins

    return HEADLINES + tuple(h for m in import_plugins("headlines") for h in m.HEADLINES)


def read_twins(paths: Iterable[Path]) -> dict[str, list[dict[str, str]]]:
    """Table stem -> the rows of its CSV twin, in file order; a CSV that is not a twin (its
    header not :data:`~halluscope.report.latex.TWIN_COLUMNS`: the rank-agreement table) left
    out."""
    import csv

    from halluscope.report.latex import TWIN_COLUMNS

    twins: dict[str, list[dict[str, str]]] = {}
    for path in paths:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            if tuple(reader.fieldnames or ()) == TWIN_COLUMNS:
                twins.setdefault(path.stem, []).extend(reader)
    return twins


def headline_metrics(
    tables: Mapping[str, Sequence[Mapping[str, str]]], field: str = "value"
) -> dict[str, dict]:
    """``{model: {name: value}}`` from the twins' rows (table stem -> rows in file order, with
    ``model, embedding, metric, value``). A cell with no value gives no headline; models with
    none are left out. ``field`` ``"lo"`` or ``"hi"``: that end of the same cells' intervals
    (a cell without one gives none)."""
    out: dict[str, dict] = {}
    for head in all_headlines():
        seen: set[str] = set()
        for row in tables.get(head.table, ()):
            match = re.fullmatch(head.pattern, row["metric"])
            if not match or bool(row["embedding"]) != head.first_embedding:
                continue
            if row["model"] in seen:
                continue
            seen.add(row["model"])
            if row["value"] == "" or row[field] == "":
                continue
            groups = (row["embedding"],) if head.first_embedding else match.groups()
            value = round(float(row[field]) / (100 if head.percent else 1), 6)
            out.setdefault(row["model"], {})[head.name.format(*groups)] = value
    return out


def model_filename(model: str) -> str:
    """The model's file name in the headline folder (an id such as ``org/name`` has no ``/``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model).lstrip(".") + ".json"
