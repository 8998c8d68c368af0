"""Booktabs LaTeX tables of the CAOS paper (Table 1, Table 2, ratio-of-means check).

Tables are rendered with ``pandas.io.formats.style.Styler.to_latex`` so that the numbers are
formatted in one place (fixed decimals, ``--`` for missing values) and the output depends only on
the inputs: no dates, no versions, stable row and column order. Labels are written as LaTeX by
this module (row labels contain math), and every free-text piece (model ids, embedder names) goes
through :func:`latex_escape`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from halluscope.report import POOLED_INSTRUCTIONS, booktabs_latex, embedder_label

#: CAOS columns of summary.csv in the order of the paper's tables.
CAOS_COLUMNS: tuple[str, ...] = ("CAOS_T", "CAOS_X", "CAOS_K", "CAOS_TX", "CAOS_XK", "CAOS_avg")

#: Embedder-independent rows of Table 1 (summary.csv column -> LaTeX label).
GENERAL_ROWS: tuple[tuple[str, str], ...] = (
    ("precision", "Precision"),
    ("recall", "Recall"),
    ("objects_per_caption", r"\# Objects"),
    ("unique_objects_per_caption", r"\# Objects (distinct)"),
    ("CHAIR_S", r"CHAIR$_S$"),
    ("POPE_F1", "POPE-F1"),
)

_CAOS_SUBSCRIPTS: dict[str, str] = {
    "CAOS_T": "T",
    "CAOS_X": "X",
    "CAOS_K": "K",
    "CAOS_TX": "T/X",
    "CAOS_XK": "X/K",
    "CAOS_avg": r"\mathrm{avg}",
}

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

# Values of the CAOS paper (real LVLMs, 2000 MSCOCO val images), for "(published)" columns.
# Keys: summary.csv column names for the general rows, "{embedder}:{CAOS column}" for CAOS rows.
_P1_MODELS = ("InstructBLIP", "LLaVA", "mPLUG-Owl", "MiniGPT-4", "Multimodal-GPT")
_P1_ROWS: dict[str, tuple[float, ...]] = {
    "precision": (0.98, 0.85, 0.79, 0.92, 0.88),
    "recall": (0.62, 0.85, 0.74, 0.78, 0.67),
    "objects_per_caption": (2.22, 4.97, 4.49, 4.91, 3.26),
    "CHAIR_S": (0.04, 0.51, 0.56, 0.33, 0.32),
    "POPE_F1": (0.84, 0.68, 0.67, 0.74, 0.67),
    "glove:CAOS_T": (0.30, 0.38, 0.37, 0.40, 0.40),
    "glove:CAOS_X": (0.32, 0.41, 0.41, 0.45, 0.42),
    "glove:CAOS_K": (0.52, 0.50, 0.51, 0.47, 0.47),
    "glove:CAOS_TX": (0.94, 0.93, 0.90, 0.89, 0.95),
    "glove:CAOS_XK": (0.62, 0.82, 0.80, 0.96, 0.89),
    "glove:CAOS_avg": (0.38, 0.43, 0.43, 0.44, 0.43),
    "minilm:CAOS_T": (0.26, 0.40, 0.37, 0.35, 0.42),
    "minilm:CAOS_X": (0.27, 0.43, 0.40, 0.40, 0.45),
    "minilm:CAOS_K": (0.52, 0.54, 0.53, 0.45, 0.51),
    "minilm:CAOS_TX": (0.96, 0.93, 0.92, 0.88, 0.93),
    "minilm:CAOS_XK": (0.52, 0.80, 0.75, 0.89, 0.88),
    "minilm:CAOS_avg": (0.35, 0.46, 0.43, 0.40, 0.46),
}
_P2_MODELS = ("LLaVA", "mPLUG-Owl", "MiniGPT-4")
_P2_ROWS: dict[str, tuple[float, ...]] = {
    "glove:CAOS_T": (0.39, 0.40, 0.39),
    "glove:CAOS_X": (0.42, 0.43, 0.45),
    "glove:CAOS_K": (0.47, 0.50, 0.46),
    "glove:CAOS_TX": (0.93, 0.93, 0.87),
    "glove:CAOS_XK": (0.89, 0.86, 0.98),
    "glove:CAOS_avg": (0.43, 0.44, 0.43),
    "minilm:CAOS_T": (0.39, 0.40, 0.37),
    "minilm:CAOS_X": (0.41, 0.43, 0.43),
    "minilm:CAOS_K": (0.49, 0.52, 0.46),
    "minilm:CAOS_TX": (0.95, 0.93, 0.86),
    "minilm:CAOS_XK": (0.84, 0.83, 0.93),
    "minilm:CAOS_avg": (0.43, 0.45, 0.42),
}

#: Table 1 of the CAOS paper: {model: {row key: value}} (pass as ``published`` to table1_latex).
PUBLISHED_TABLE1: dict[str, dict[str, float]] = {
    model: {key: values[i] for key, values in _P1_ROWS.items()}
    for i, model in enumerate(_P1_MODELS)
}
#: Table 2 of the CAOS paper (means over 14 instructions), same layout as PUBLISHED_TABLE1.
PUBLISHED_TABLE2: dict[str, dict[str, float]] = {
    model: {key: values[i] for key, values in _P2_ROWS.items()}
    for i, model in enumerate(_P2_MODELS)
}

_SIMULATED_NOTE = (
    "Results from simulated LVLMs (model ids \\texttt{sim-*}): they exercise the pipeline and "
    "say nothing about real models. "
)
_PUBLISHED_NOTE = (
    " Columns marked (published) are copied from the CAOS paper (real LVLMs, 2000 MSCOCO "
    "validation images) for comparison only."
)


def latex_escape(text: str) -> str:
    """Escape LaTeX special characters in free text (model ids such as ``sim_llava``)."""
    return "".join(_LATEX_SPECIALS.get(char, char) for char in str(text))


def caos_label(column: str, embedder: str, k: int | None = None) -> str:
    """LaTeX row label such as ``CAOS$_{K}$--GloVe ($k=3$)``, in the paper's notation."""
    label = f"CAOS$_{{{_CAOS_SUBSCRIPTS[column]}}}$--{latex_escape(embedder_label(embedder))}"
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
) -> str:
    """Render a metrics x models frame as a booktabs ``table`` with caption and label.

    Rows listed in ``breaks`` start a new block (e.g. one embedder's CAOS rows) and get
    ``\addlinespace`` above them, so the reader sees where each block begins.

    The document must load booktabs and graphicx (a too-wide tabular is shrunk to the text width).

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
    frame.columns = pd.Index([str(c) for c in frame.columns], name="Model")
    # Wide tables (e.g. with published columns) get a smaller font so they fit a text column.
    size, sep = ("footnotesize", "3pt") if frame.shape[1] > 6 else ("small", "4pt")
    latex = booktabs_latex(
        frame,
        decimals=decimals,
        caption=caption,
        label=label,
        column_format=column_format,
        size=size,
        tabcolsep=sep,
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


def _model_columns(models: Sequence[str]) -> list[str]:
    return [latex_escape(m) for m in models]


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
) -> str:
    """Table 1: precision, recall, objects per caption, CHAIR_S, POPE-F1 and the six CAOS scores
    per embedder (rows) for each model (columns), from the pooled ``instruction_id`` rows.

    The POPE-F1 row is left out when no model has a value, rather than printing a row of dashes.
    ``published`` (e.g. :data:`PUBLISHED_TABLE1`) adds "(published)" columns for comparison.
    """
    rows = summary_rows(summary, instruction_id)
    keys: list[str] = []
    labels: list[str] = []
    data: dict[str, list[float]] = {m: [] for m in models}
    for column, text in GENERAL_ROWS:
        values = [summary_value(rows, m, embedders, column) for m in models]
        if column == "POPE_F1" and all(pd.isna(v) for v in values):
            continue
        keys.append(column)
        labels.append(text)
        for model, value in zip(models, values, strict=True):
            data[model].append(value)
    n_general = len(keys)
    for embedder in embedders:
        for column in CAOS_COLUMNS:
            keys.append(f"{embedder}:{column}")
            labels.append(caos_label(column, embedder, k))
            for model in models:
                data[model].append(summary_value(rows, model, [embedder], column))
    frame = pd.DataFrame(data, index=range(len(keys)))
    frame.columns = _model_columns(models)
    frame = pd.concat([frame, _published_frame(published, keys)], axis=1)
    names = ", ".join(latex_escape(embedder_label(e)) for e in embedders)
    has_pope = "POPE_F1" in keys
    caption = (
        (_SIMULATED_NOTE if simulated else "")
        + "Average precision, recall, number of objects per caption, CHAIR$_S$"
        + (", POPE-F1" if has_pope else "")
        + f" and CAOS scores ({names} embeddings) per model"
        + (", pooled over the Table~1 instructions." if instruction_id == "table1" else ".")
        + r" \# Objects counts every object mention of a caption's list (a repeated name again;"
        " out-of-domain objects whether verified or not); distinct counts each name once."
        + (_PUBLISHED_NOTE if published else "")
    )
    return _render(
        frame,
        labels,
        decimals=decimals,
        caption=caption,
        label=label,
        breaks=[n_general + len(CAOS_COLUMNS) * j for j in range(len(embedders))],
    )


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
    """Table 2: CAOS scores averaged over the individual instructions (i01..i14).

    Each instruction's row of summary.csv is one CAOS value per (model, embedder); the table shows
    their unweighted mean, as in the paper, so each instruction counts once whatever its number of
    hallucinating captions. Pooled rows (``table1``, ``all``) are excluded.
    """
    single = summary[~summary["instruction_id"].astype(str).isin(POOLED_INSTRUCTIONS)]
    instructions = sorted(
        set(single.loc[single["model"].isin(models), "instruction_id"].astype(str))
    )
    means = single.groupby(["model", "embedder"], sort=True)[list(CAOS_COLUMNS)].agg(
        lambda s: pd.to_numeric(s, errors="coerce").mean()
    )
    keys: list[str] = []
    labels: list[str] = []
    data: dict[str, list[float]] = {m: [] for m in models}
    for embedder in embedders:
        for column in CAOS_COLUMNS:
            keys.append(f"{embedder}:{column}")
            labels.append(caos_label(column, embedder, k))
            for model in models:
                present = (model, embedder) in means.index
                data[model].append(
                    float(means.loc[(model, embedder), column]) if present else float("nan")
                )
    frame = pd.DataFrame(data, index=range(len(keys)))
    frame.columns = _model_columns(models)
    frame = pd.concat([frame, _published_frame(published, keys)], axis=1)
    caption = (
        (_SIMULATED_NOTE if simulated else "")
        + f"Average CAOS scores across {len(instructions)} different instructions "
        + "(unweighted mean of the per-instruction scores)."
        + (
            _PUBLISHED_NOTE.replace("validation images)", "validation images, 14 instructions)")
            if published
            else ""
        )
    )
    return _render(
        frame,
        labels,
        decimals=decimals,
        caption=caption,
        label=label,
        breaks=[len(CAOS_COLUMNS) * j for j in range(len(embedders))],
    )


def rom_latex(
    summary: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    decimals: int = 2,
    simulated: bool = False,
    *,
    instruction_id: str = "table1",
    label: str = "tab:caos-ratios",
) -> str:
    """CAOS_{T/X} and CAOS_{X/K} as mean of per-caption ratios (the paper's aggregation, used in
    Table 1) next to the ratio of the mean scores, to show how much the choice matters: the two
    differ whenever per-caption denominators vary, and the mean of ratios is not CAOS_T/CAOS_X.
    """
    rows = summary_rows(summary, instruction_id)
    labels: list[str] = []
    data: dict[str, list[float]] = {m: [] for m in models}
    for embedder in embedders:
        name = latex_escape(embedder_label(embedder))
        for column, sub in (("CAOS_TX", "T/X"), ("CAOS_XK", "X/K")):
            for suffix, how in (("", "mean of ratios"), ("_rom", "ratio of means")):
                labels.append(f"CAOS$_{{{sub}}}$--{name}, {how}")
                for model in models:
                    data[model].append(summary_value(rows, model, [embedder], column + suffix))
    frame = pd.DataFrame(data, index=range(len(labels)))
    frame.columns = _model_columns(models)
    caption = (
        (_SIMULATED_NOTE if simulated else "")
        + "CAOS$_{T/X}$ and CAOS$_{X/K}$ computed as the mean over captions of per-caption ratios "
        + "(the aggregation of the CAOS paper, used in the other tables) and as the ratio of "
        + "the mean CAOS scores."
    )
    return _render(
        frame,
        labels,
        decimals=decimals,
        caption=caption,
        label=label,
        breaks=[4 * j for j in range(len(embedders))],
    )
