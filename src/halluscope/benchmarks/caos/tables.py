"""Booktabs LaTeX tables of the CAOS paper (Table 1, Table 2, ratio-of-means check).

Tables are rendered with ``pandas.io.formats.style.Styler.to_latex`` so that the numbers are
formatted in one place (fixed decimals, ``--`` for missing values) and the output depends only on
the inputs: no dates, no versions, stable row and column order. Labels are written as LaTeX by
this module (row labels contain math), and every free-text piece (model ids, embedder names) goes
through :func:`latex_escape`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from halluscope.benchmarks.caos.published import PUBLISHED_IDS, PUBLISHED_TABLE1, PUBLISHED_TABLE2  # noqa: F401
from halluscope.io import atomic_write_text
from halluscope.report import POOLED_INSTRUCTIONS, booktabs_latex, embedder_label
from halluscope.report.latex import (
    latex_escape,
    twin_csv,
    twin_record,
)

#: CAOS columns of summary.csv in the order of the paper's tables.
CAOS_COLUMNS: tuple[str, ...] = ("CAOS_T", "CAOS_X", "CAOS_K", "CAOS_TX", "CAOS_XK", "CAOS_avg")

#: Embedder-independent rows of Table 1: (summary.csv column, metric name, LaTeX label).
GENERAL_ROWS: tuple[tuple[str, str, str], ...] = (
    ("precision", "precision", "Precision"),
    ("recall", "recall", "Recall"),
    ("objects_per_caption", "# Objects", r"\# Objects"),
    ("CHAIR_S", "CHAIR_S", r"CHAIR$_S$"),
    ("POPE_F1", "POPE-F1", "POPE-F1"),
)

#: Readings of Table 1's CHAIR_S and precision (``tables.chair_counts``) -> their summary.csv
#: columns (precision, micro precision, CHAIR_S). ``with-rejected-ood``: in-domain objects by
#: the ground truth and out-of-domain objects by the oracle (those it rejected are
#: hallucinations; unverified ones are left out and bounded); ``in-domain``: MSCOCO objects only
#: (the reference CHAIR), which no oracle decision moves.
CHAIR_COUNTS: dict[str, tuple[str, str, str]] = {
    "with-rejected-ood": ("precision", "precision_micro", "CHAIR_S"),
    "in-domain": ("precision_in_domain", "precision_micro_in_domain", "CHAIR_S_mscoco"),
}

#: Summary columns with bounds for unverified out-of-domain objects (summarize.py).
BOUNDED_COLUMNS: tuple[str, ...] = ("precision", "CHAIR_S", *CAOS_COLUMNS)
#: Suffixes of the bound rows in tables and their CSV twins.
BOUND_SUFFIXES: dict[str, str] = {
    "present": " [unverified present]",
    "absent": " [unverified absent]",
}

#: Metric names of the CAOS columns, as the paper prints them.
#: the CAOS metrics that depend on K (the top-k frequent objects): their twin rows name k
K_METRICS: tuple[str, ...] = ("CAOS_K", "CAOS_X/K", "CAOS_avg")


def with_k_setting(records: Sequence[dict], k: int) -> list[dict]:
    """The records with ``setting`` = ``k=<k>`` on every cell that depends on K (the twin's
    reader then knows the k the LaTeX table names in its header)."""
    return [
        {**r, "setting": f"k={k}"} if str(r["metric"]).startswith(K_METRICS) else r for r in records
    ]


def write_table(path: Path, latex: str, records: Sequence[dict], k: int) -> None:
    """Write a LaTeX table to ``path`` and its CSV twin (:func:`with_k_setting` of ``records``)
    beside it as ``.csv``: every table stage writes the pair the same way."""
    atomic_write_text(path, latex)
    atomic_write_text(path.with_suffix(".csv"), twin_csv(with_k_setting(records, k)))


CAOS_METRIC: dict[str, str] = {
    "CAOS_T": "CAOS_T",
    "CAOS_X": "CAOS_X",
    "CAOS_K": "CAOS_K",
    "CAOS_TX": "CAOS_T/X",
    "CAOS_XK": "CAOS_X/K",
    "CAOS_avg": "CAOS_avg",
}

#: The CAOS column of each metric name (the inverse of :data:`CAOS_METRIC`).
CAOS_COLUMN_OF: dict[str, str] = {metric: column for column, metric in CAOS_METRIC.items()}


def caos_subscript(metric: str) -> str:
    r"""LaTeX subscript of a CAOS metric name (``CAOS_T/X`` -> ``T/X``, ``CAOS_avg`` ->
    ``\mathrm{avg}``): one spelling for every table's labels."""
    return metric.removeprefix("CAOS_").replace("avg", r"\mathrm{avg}")


_SIMULATED_NOTE = (
    "Results from simulated LVLMs (model ids \\texttt{sim-*}): they exercise the pipeline and "
    "say nothing about real models. "
)
_PUBLISHED_NOTE = (
    " Columns marked (published) are copied from the CAOS paper (real LVLMs, 2000 MSCOCO "
    "validation images) for comparison only."
)


def caos_label(column: str, embedder: str, k: int | None = None) -> str:
    """LaTeX row label such as ``CAOS$_{K}$--GloVe ($k=3$)``, in the paper's notation."""
    label = f"CAOS$_{{{caos_subscript(CAOS_METRIC[column])}}}$--"
    label += latex_escape(embedder_label(embedder))
    if column == "CAOS_K" and k is not None:
        label += f" ($k={k}$)"
    return label


def summary_rows(summary: pd.DataFrame, instruction_id: str) -> pd.DataFrame:
    """Summary rows of one (pooled) instruction id, indexed by (model, embedder)."""
    selected = summary[summary["instruction_id"].astype(str) == instruction_id]
    return selected.set_index(["model", "embedder"]).sort_index()


def summary_value(rows: pd.DataFrame, model: str, embedders: Sequence[str], column: str) -> float:
    """One number of ``rows``; embedder-independent columns are read from the first embedder
    that has the model (they are the same for every embedder)."""
    for embedder in embedders:
        if (model, embedder) in rows.index and column in rows.columns:
            return float(pd.to_numeric(rows.loc[(model, embedder), column], errors="coerce"))
    return float("nan")


def interval_of(
    rows: pd.DataFrame, model: str, embedders: Sequence[str], column: str
) -> list[float]:
    """``[lo, hi]``: summary.csv's ``<column>_lo`` and ``<column>_hi`` (NaN where absent)."""
    return [summary_value(rows, model, embedders, f"{column}_{end}") for end in ("lo", "hi")]


def published_value(
    published: Mapping[str, Mapping[str, float]] | None, model: str, key: str
) -> float | None:
    """The paper's value of ``key`` for our model id (or the paper's own name), else None."""
    if not published:
        return None
    values = published.get(PUBLISHED_IDS.get(model, model)) or published.get(model) or {}
    return values.get(key)


def has_unverified(summary: pd.DataFrame, instruction_id: str, models: Sequence[str]) -> bool:
    """True when a table's captions mention objects no oracle verified (bounds are then shown)."""
    rows = summary_rows(summary, instruction_id)
    if "n_unverified" not in rows.columns:
        return False
    counts = pd.to_numeric(rows["n_unverified"], errors="coerce").fillna(0)
    return bool((counts[[m in models for m in rows.index.get_level_values(0)]] > 0).any())


def table1_records(
    summary: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    published: Mapping[str, Mapping[str, float]] | None = None,
    *,
    instruction_id: str = "table1",
    precision_recall: str = "per_caption",
    chair_counts: str = "with-rejected-ood",
) -> list[dict]:
    """Table 1 as long-format records (the CSV twin): one per (model, embedding, metric).

    ``precision_recall``: ``per_caption`` (the paper's "average precision": mean over captions)
    or ``micro`` (pooled counts). ``chair_counts`` (:data:`CHAIR_COUNTS`): which objects
    precision and CHAIR_S count, in-domain ones only or also the out-of-domain ones the oracle
    judged. Bound rows (``... [unverified present]`` / ``[... absent]``) follow each affected
    metric when some object was left unverified (the in-domain reading has none: no oracle
    decision moves it).
    """
    if chair_counts not in CHAIR_COUNTS:
        raise ValueError(
            f"chair_counts: expected one of {list(CHAIR_COUNTS)}, got {chair_counts!r}"
        )
    per_caption_precision, micro_precision, chair_s = CHAIR_COUNTS[chair_counts]
    rows = summary_rows(summary, instruction_id)
    bounds = has_unverified(summary, instruction_id, models)
    records: list[dict] = []

    def add(model: str, embedding: str, column: str, metric: str, key: str) -> None:
        """The headline cell, then its bounds when ``column`` has them (not the micro view)."""
        emb = [embedding] if embedding else embedders
        pub = published_value(published, model, key)
        value = summary_value(rows, model, emb, column)
        lo, hi = interval_of(rows, model, emb, column)
        records.append(twin_record(model, embedding, metric, value, pub, lo=lo, hi=hi))
        if bounds and column in BOUNDED_COLUMNS:
            for bound, suffix in BOUND_SUFFIXES.items():
                value = summary_value(rows, model, emb, f"{column}_if_{bound}")
                records.append(twin_record(model, embedding, metric + suffix, value))

    for column, metric, _ in GENERAL_ROWS:
        if column == "POPE_F1" and all(
            pd.isna(summary_value(rows, m, embedders, column)) for m in models
        ):
            continue
        source = column
        if column in ("precision", "recall") and precision_recall == "micro":
            source = f"{column}_micro"
        if column == "precision":
            source = micro_precision if precision_recall == "micro" else per_caption_precision
        elif column == "CHAIR_S":
            source = chair_s
        for model in models:
            add(model, "", source, metric, column)
    for embedder in embedders:
        for column in CAOS_COLUMNS:
            for model in models:
                add(model, embedder, column, CAOS_METRIC[column], f"{embedder}:{column}")
    return records


def table2_records(
    summary: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    published: Mapping[str, Mapping[str, float]] | None = None,
) -> tuple[list[dict], int]:
    """Table 2 as records: CAOS_T, _X, _K averaged over the individual instructions (each
    instruction counts once, unweighted), and T/X, X/K, avg computed from those means, as the
    paper's Table 2 (its ratio cells equal the ratios of its printed means). Pooled rows
    (``table1``, ``all``) are excluded; each cell's interval is summary.csv's
    ``instructions_mean_<column>_lo`` / ``_hi`` of the ``all`` row. Returns the records and the
    number of instructions."""
    single = summary[~summary["instruction_id"].astype(str).isin(POOLED_INSTRUCTIONS)]
    instructions = sorted(
        set(single.loc[single["model"].isin(models), "instruction_id"].astype(str))
    )
    base = ["CAOS_T", "CAOS_X", "CAOS_K"]
    means = single.groupby(["model", "embedder"], sort=True)[base].agg(
        lambda s: pd.to_numeric(s, errors="coerce").mean()
    )
    records = []
    for embedder in embedders:
        values: dict[str, dict[str, float | None]] = {}
        for model in models:
            have = (model, embedder) in means.index
            t, x, k = (float(means.loc[(model, embedder), c]) if have else None for c in base)
            t, x, k = (None if v is None or pd.isna(v) else v for v in (t, x, k))
            values[model] = {
                "CAOS_T": t,
                "CAOS_X": x,
                "CAOS_K": k,
                "CAOS_TX": t / x if t is not None and x else None,
                "CAOS_XK": x / k if x is not None and k else None,
                "CAOS_avg": (t + x + k) / 3 if None not in (t, x, k) else None,
            }
        pooled = summary_rows(summary, "all")
        for column in CAOS_COLUMNS:
            for model in models:
                pub = published_value(published, model, f"{embedder}:{column}")
                lo, hi = interval_of(pooled, model, [embedder], f"instructions_mean_{column}")
                value = values[model][column]
                records.append(
                    twin_record(model, embedder, CAOS_METRIC[column], value, pub, lo=lo, hi=hi)
                )
    return records, len(instructions)


def _metric_label(metric: str, embedding: str, k: int | None) -> str:
    """LaTeX row label of a record's metric. A bound row follows the row of its metric, so it
    is labelled by the bound alone, indented (``unverified present``): the label column stays
    as narrow as the metrics' names."""
    for text in BOUND_SUFFIXES.values():
        if metric.endswith(text):
            return r"\quad " + text.strip(" []")
    general = {name: label for _, name, label in GENERAL_ROWS}
    if metric in general:
        return general[metric]
    return caos_label(CAOS_COLUMN_OF[metric], embedding, k)


def metric_label(embedding: str, metric: str) -> str:
    """LaTeX label of a metric name as the twins spell it (``CAOS_T/X`` -> ``CAOS$_{T/X}$``,
    ``CHAIR_S`` -> ``CHAIR$_S$``, else escaped), then ``--<embedder>`` for an embedding's row:
    the label of the views that name one (embedding, metric) pair per row."""
    text = latex_escape(metric)
    if metric.startswith("CAOS_"):
        text = f"CAOS$_{{{caos_subscript(metric)}}}$"
    elif metric == "CHAIR_S":
        text = "CHAIR$_S$"
    return text + (f"--{latex_escape(embedder_label(embedding))}" if embedding else "")


def table_rows(records: Iterable[Mapping]) -> list[tuple[str, str]]:
    """The (embedding, metric) pairs of ``records`` in first-seen order: a table's rows."""
    return list(dict.fromkeys((r["embedding"], r["metric"]) for r in records))


def block_starts(rows: Sequence[tuple[str, str]]) -> list[int]:
    """The rows (of :func:`table_rows`) where a new embedding's block starts (the ``breaks`` of
    :func:`_render`)."""
    return [i for i, (e, _) in enumerate(rows) if i and e != rows[i - 1][0]]


def model_columns(
    rows: Sequence[tuple[str, str]],
    models: Sequence[str],
    cell: Callable[[str, str, str], object],
) -> pd.DataFrame:
    """One column per model (its name escaped for LaTeX), one row per (embedding, metric) pair
    of ``rows``, each cell ``cell(embedding, metric, model)``."""
    data = {latex_escape(m): [cell(e, metric, m) for e, metric in rows] for m in models}
    return pd.DataFrame(data, index=range(len(rows)))


def records_frame(
    records: Sequence[Mapping], models: Sequence[str], k: int | None
) -> tuple[pd.DataFrame, list[str], list[int]]:
    """Metrics x models frame of records (and published columns where any record has one),
    the row labels and the rows where a new block (a new embedding) starts."""
    order = table_rows(records)
    cell = {(r["embedding"], r["metric"], r["model"]): r for r in records}
    frame = model_columns(order, models, lambda e, x, m: _nan(cell.get((e, x, m), {}).get("value")))
    frame = pd.concat([frame, published_columns(cell, order, models)], axis=1)
    labels = [_metric_label(metric, e, k) for e, metric in order]
    return frame, labels, block_starts(order)


def published_columns(
    cell: Mapping[tuple[str, str, str], Mapping],
    order: Sequence[tuple[str, str]],
    models: Sequence[str],
) -> pd.DataFrame:
    """The "(published)" columns of the rows ``order`` ((embedding, metric) pairs), read from
    ``cell`` ((embedding, metric, model) -> record), for the models with a published value."""
    published = {
        PUBLISHED_IDS.get(m, m): {
            f"{e}|{x}": cell[(e, x, m)]["published"]
            for e, x in order
            if (e, x, m) in cell and cell[(e, x, m)]["published"] is not None
        }
        for m in models
        if any(cell.get((e, x, m), {}).get("published") is not None for e, x in order)
    }
    return _published_frame(published, [f"{e}|{x}" for e, x in order])


def _nan(value: float | None) -> float:
    """A table cell: NaN (printed ``--``) for a missing value."""
    return float("nan") if value is None else float(value)


def _published_frame(
    published: Mapping[str, Mapping[str, float]] | None, keys: Sequence[str]
) -> pd.DataFrame:
    """Columns ``"<model> (published)"`` for the requested row keys (NaN where not published)."""
    columns: dict[str, list[float]] = {}
    for model, values in (published or {}).items():
        header = (
            rf"\begin{{tabular}}[b]{{@{{}}r@{{}}}}{latex_escape(model)}\\(published)\end{{tabular}}"
        )
        columns[header] = [float(values[key]) if key in values else float("nan") for key in keys]
    return pd.DataFrame(columns, index=range(len(keys)))


def _render(
    frame: pd.DataFrame,
    labels: Sequence[str],
    *,
    decimals: int,
    caption: str,
    label: str,
    breaks: Sequence[int] = (),
    columns_name: str = "Model",
) -> str:
    """Render a metrics x models frame as a booktabs ``table`` with caption and label.

    Rows listed in ``breaks`` start a new block (e.g. one embedder's CAOS rows) and get
    ``\addlinespace`` above them, so the reader sees where each block begins.

    A wide table with "(published)" columns beside our models (five models: ten columns of
    numbers) is set on a landscape page (``sidewaystable``): in a text column it would be
    shrunk below 8 pt.
    The document must load booktabs, graphicx and rotating.

    Row and column labels are already LaTeX (escaped here by the callers), so Styler must not
    escape them again; numbers get exactly ``decimals`` decimals and missing ones ``--``.
    """
    frame = frame.copy()
    n_published = sum("(published)" in str(c) for c in frame.columns)
    # A little extra space sets the published columns apart without a vertical rule.
    column_format = "l" + "r" * (frame.shape[1] - n_published)
    if n_published:
        column_format += r"@{\hspace{1.5em}}" + "r" * n_published
    frame.index = pd.Index(list(labels))
    frame.columns = pd.Index([str(c) for c in frame.columns], name=columns_name)
    # Wide tables (e.g. with published columns) get a smaller font so they fit a text column,
    # and a landscape page when the published columns stand beside many models.
    wide = frame.shape[1] > 6
    size, sep = ("footnotesize", "3pt") if wide else ("small", "4pt")
    latex = booktabs_latex(
        frame,
        decimals=decimals,
        caption=caption,
        label=label,
        column_format=column_format,
        size=size,
        tabcolsep=sep,
        environment="sidewaystable" if wide and n_published else "table",
    )
    return _space_groups(latex, len(labels), breaks)


def _space_groups(latex: str, n_rows: int, breaks: Sequence[int]) -> str:
    """Insert ``\\addlinespace`` before the body rows whose index is in ``breaks``."""
    starts = {b for b in breaks if 0 < b < n_rows}
    if not starts:
        return latex
    lines = latex.split("\n")
    first = lines.index("\\midrule") + 1
    out = lines[:first]
    for row, line in enumerate(lines[first : first + n_rows]):
        if row in starts:
            out.append("\\addlinespace")
        out.append(line)
    return "\n".join(out + lines[first + n_rows :])


def table1_latex(
    summary: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    decimals: int = 2,
    simulated: bool = False,
    published: Mapping[str, Mapping[str, float]] | None = None,
    *,
    k: int = 3,
    instruction_id: str = "table1",
    label: str = "tab:caos-table1",
    precision_recall: str = "per_caption",
    chair_counts: str = "with-rejected-ood",
    records: Sequence[Mapping] | None = None,
    synonyms: str = "builtin",
) -> str:
    """Table 1: precision, recall, objects per caption, CHAIR_S, POPE-F1 and the six CAOS scores
    per embedder (rows) for each model (columns), from the pooled ``instruction_id`` rows.

    The POPE-F1 row is left out when no model has a value, rather than printing a row of dashes.
    ``published`` (e.g. :data:`PUBLISHED_TABLE1`) adds "(published)" columns for comparison.
    """
    if records is None:
        records = table1_records(
            summary,
            models,
            embedders,
            published,
            instruction_id=instruction_id,
            precision_recall=precision_recall,
            chair_counts=chair_counts,
        )
    frame, labels, breaks = records_frame(records, models, k)
    names = ", ".join(latex_escape(embedder_label(e)) for e in embedders)
    has_pope = any(r["metric"] == "POPE-F1" for r in records)
    bounds = any(r["metric"].endswith(BOUND_SUFFIXES["absent"]) for r in records)
    per_caption = precision_recall == "per_caption"
    caption = (
        (_SIMULATED_NOTE if simulated else "")
        + ("Average precision, recall" if per_caption else "Pooled (micro) precision, recall")
        + ", number of objects per caption, CHAIR$_S$"
        + (", POPE-F1" if has_pope else "")
        + f" and CAOS scores ({names} embeddings) per model"
        + (", pooled over the Table~1 instructions." if instruction_id == "table1" else ".")
        + (
            " Precision and recall are means over captions of per-caption values."
            if per_caption
            else ""
        )
        + r" \# Objects is the mean number of distinct objects per caption; CHAIR$_S$ the"
        " fraction of captions with a hallucinated object. "
        + chair_counts_sentence(chair_counts, bounds)
        + synonyms_sentence(synonyms)
        + " CAOS$_T$, CAOS$_X$, CAOS$_K$ are"
        " means over captions with a hallucination; CAOS$_{T/X}$, CAOS$_{X/K}$ and"
        r" CAOS$_{\mathrm{avg}}$ are computed from those means, as in the paper."
        + (
            r" Rows marked \emph{unverified present / absent} bound the effect of out-of-domain"
            " objects that no oracle verified (all taken as present / all as hallucinated); the"
            " unmarked rows leave them out."
            if bounds
            else ""
        )
        + (_PUBLISHED_NOTE if any(r["published"] is not None for r in records) else "")
        + (_INTERVAL_NOTE if any(r.get("lo") is not None for r in records) else "")
    )
    return _render(frame, labels, decimals=decimals, caption=caption, label=label, breaks=breaks)


_INTERVAL_NOTE = (
    " The CSV twin gives each number's interval (columns lo, hi; params.yaml's"
    r" \texttt{intervals}, the image resampled)."
)


def synonyms_sentence(synonyms: str) -> str:
    """Which MSCOCO synonym list mapped words to classes when it is not halluscope's own
    (``builtin``, unnamed as before); ``chair/synonyms.txt`` is CHAIR's, as published CHAIR."""
    if synonyms == "builtin":
        return ""
    named = "CHAIR's own synonym list (" if synonyms == "chair/synonyms.txt" else "the list ("
    return rf" Words are mapped to MSCOCO classes by {named}\texttt{{{latex_escape(synonyms)}}})."


def chair_counts_sentence(chair_counts: str, bounds: bool) -> str:
    """Which objects Table 1's precision and CHAIR$_S$ count (``tables.chair_counts``), and what
    the unmarked rows print when some out-of-domain objects went unverified."""
    if chair_counts == "in-domain":
        return (
            "Precision and CHAIR$_S$ count MSCOCO objects only (\\texttt{tables.chair\\_counts: "
            "in-domain}, the reference CHAIR); out-of-domain objects, verified or not, do not "
            "enter them."
        )
    text = (
        "Precision and CHAIR$_S$ count MSCOCO objects by the ground truth and out-of-domain "
        "objects by the oracle, those it rejected as hallucinations (\\texttt{tables.chair\\_"
        "counts: with-rejected-ood}, the reading the paper's printed CHAIR$_S$ fits)."
    )
    if bounds:
        text += (
            " Their unmarked rows count verified objects only (with no oracle, the in-domain "
            "ones: the values of the in-domain reading); their bound rows give the range this "
            "reading takes whatever an oracle would decide."
        )
    return text


def table2_latex(
    summary: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    decimals: int = 2,
    simulated: bool = False,
    published: Mapping[str, Mapping[str, float]] | None = None,
    *,
    k: int = 3,
    label: str = "tab:caos-table2",
) -> str:
    """Table 2: CAOS scores averaged over the individual instructions (see table2_records)."""
    records, n_instructions = table2_records(summary, models, embedders, published)
    frame, labels, breaks = records_frame(records, models, k)
    caption = (
        (_SIMULATED_NOTE if simulated else "")
        + f"Average CAOS scores across {n_instructions} different instructions "
        + "(CAOS$_T$, CAOS$_X$, CAOS$_K$: unweighted means of the per-instruction scores; "
        + "the ratios and the average are computed from those means, as in the paper)."
        + (
            _PUBLISHED_NOTE.replace("validation images)", "validation images, 14 instructions)")
            if any(r["published"] is not None for r in records)
            else ""
        )
        + (_INTERVAL_NOTE if any(r.get("lo") is not None for r in records) else "")
    )
    return _render(frame, labels, decimals=decimals, caption=caption, label=label, breaks=breaks)
