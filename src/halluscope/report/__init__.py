"""Reporting: booktabs LaTeX tables and deterministic figures built from the score CSVs.

Kept free of pipeline state so the paper's tables and figures can be regenerated from
``results/scores/{profile}/summary.csv`` and ``objects.csv`` alone. The helpers here are shared
by :mod:`halluscope.benchmarks.caos.tables` and :mod:`halluscope.benchmarks.caos.figures`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

import pandas as pd

#: Pooled ``instruction_id`` values of summary.csv (everything else is one instruction).
POOLED_INSTRUCTIONS: tuple[str, ...] = ("table1", "all")

#: Display names of the embedders (the paper's spelling); unknown ids are shown as they are.
EMBEDDER_LABELS: dict[str, str] = {"glove": "GloVe", "minilm": "MiniLM-L6", "word2vec": "word2vec"}

#: Per-caption grouping of objects.csv: one caption = one (model, embedder, instruction, image).
CAPTION_KEYS: tuple[str, ...] = ("model", "embedder", "instruction_id", "image_id")


#: The fixed model palette: seaborn's ``colorblind`` colours, written out so that a seaborn
#: release cannot change them.
MODEL_PALETTE: tuple[str, ...] = (
    "#0173b2",
    "#de8f05",
    "#029e73",
    "#d55e00",
    "#cc78bc",
    "#ca9161",
    "#fbafe4",
    "#949494",
    "#ece133",
    "#56b4e9",
)

#: Model ids with a reserved palette slot (index into :data:`MODEL_PALETTE`): the simulated
#: LVLMs (the presets of ``halluscope.models.sim``) and the five LVLMs of the CAOS paper (ids of
#: the ``pope-captions`` and ``paper`` profiles; two spellings of one model share its colour).
#: Append new ids at the end; never reorder, or every figure changes colours.
KNOWN_MODEL_COLORS: dict[str, int] = {
    "sim-precise": 0,
    "sim-verbose": 1,
    "sim-frequent": 2,
    "instructblip": 3,
    "instructblip-13b": 3,
    "llava": 4,
    "llava-1.5-13b": 4,
    "mplug-owl": 5,
    "minigpt-4": 6,
    "multimodal-gpt": 7,
    "sim-ood": 8,
}


def _model_color(model: str) -> str:
    """The fixed colour (hex) of one model id, whatever else a figure shows.

    Known ids (:data:`KNOWN_MODEL_COLORS`) have a reserved slot; any other id gets the slot
    picked by the first 8 bytes of the SHA-256 of its UTF-8 spelling, so the colour is the same
    in every figure, run and process (Python's ``hash()`` of a str is salted per process). Two
    unknown ids can share a colour; figures label every model, so they stay readable.
    """
    model = str(model)
    index = KNOWN_MODEL_COLORS.get(model)
    if index is None:
        digest = hashlib.sha256(model.encode("utf-8")).digest()
        index = int.from_bytes(digest[:8], "big") % len(MODEL_PALETTE)
    return MODEL_PALETTE[index]


def model_colors(models: Iterable[str]) -> dict[str, str]:
    """``{model id: hex colour}`` for every figure that colours by model.

    A model's colour depends only on its id (:func:`_model_color`), never on the other models
    of the figure or their order.
    """
    return {str(m): _model_color(m) for m in models}


def embedder_label(embedder: str) -> str:
    """Paper spelling of an embedder id, so tables and figures agree on names."""
    return EMBEDDER_LABELS.get(embedder, embedder)


def is_simulated(models: Iterable[str]) -> bool:
    """True if any model is a simulated LVLM (id ``sim-*``): outputs must then say so."""
    return any(str(m).startswith("sim-") for m in models)


def caption_then_mean(
    df: pd.DataFrame, column: str, by: Sequence[str] = ("model", "embedder")
) -> pd.Series:
    """CAOS aggregation of a per-object column: mean over captions of each caption's object mean.

    This is the paper's aggregation (a caption with many hallucinated objects counts once, as in
    Algorithm 1), not the plain mean over objects. Objects are grouped into captions by
    ``CAPTION_KEYS``; NaN values (e.g. no ground-truth object to compare with) are skipped, and a
    caption whose values are all NaN drops out of the outer mean. Returns a Series indexed by
    ``by`` (a subset of ``CAPTION_KEYS``), sorted, named ``column``.
    """
    by = list(by)
    unknown = [key for key in by if key not in CAPTION_KEYS]
    if unknown:
        raise ValueError(f"caption_then_mean: by={unknown} not in {list(CAPTION_KEYS)}")
    missing = [key for key in [*CAPTION_KEYS, column] if key not in df.columns]
    if missing:
        raise ValueError(f"caption_then_mean: missing columns {missing}")
    values = pd.to_numeric(df[column], errors="coerce")
    frame = df[list(CAPTION_KEYS)].assign(_value=values)
    per_caption = frame.groupby(list(CAPTION_KEYS), sort=True)["_value"].mean()
    result = per_caption.groupby(level=by, sort=True).mean()
    result.name = column
    return result


def booktabs_latex(
    frame: pd.DataFrame,
    *,
    decimals: int,
    caption: str,
    label: str,
    column_format: str,
    size: str = "small",
    tabcolsep: str = "4pt",
    environment: str = "table",
    **options: object,
) -> str:
    """A booktabs ``table`` (caption, label, ``htbp``) of ``frame`` whose labels are LaTeX.

    Numbers get exactly ``decimals`` decimals, missing ones ``--``. The writer picks ``size``
    (the report is 11 pt: ``small`` is 10 pt, ``footnotesize`` 9 pt, ``scriptsize`` 8 pt, the
    smallest a table may be read at) and, for a table too wide for the page at that size,
    ``environment="sidewaystable"`` (a landscape page; needs the rotating package). A tabular
    still wider than the line is shrunk to ``\\linewidth`` (never enlarged; needs graphicx):
    a safety net that tests/test_report_layout.py keeps above 8 pt. ``options`` go to
    ``Styler.to_latex`` (multi-column alignment, sparsity).
    """
    styler = frame.style.format(precision=decimals, na_rep="--")
    styler.set_table_styles(
        [
            {"selector": size, "props": ":;"},
            {"selector": "setlength", "props": rf":{{\tabcolsep}}{{{tabcolsep}}};"},
        ],
        overwrite=True,
    )
    latex = styler.to_latex(
        hrules=True,
        caption=caption,
        label=label,
        position="htbp",
        position_float="centering",
        column_format=column_format,
        **({"environment": environment} if environment != "table" else {}),
        **options,
    )
    latex = latex.replace(
        "\\begin{tabular}",
        "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n"
        "\\begin{tabular}",
        1,
    )
    head, end, tail = latex.rpartition("\\end{tabular}")  # the outer tabular ends last
    return head + end + "%\n}" + tail
