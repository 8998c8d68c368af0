"""Table 1 with and without the LLM extractor on the same captions (CAOS paper, Section 3.1).

Why: the paper's object extraction is rule + lexicon + LLM; ``pope-captions`` runs rule + lexicon
only (the LLM on 20,000 captions takes hours on 2 CPU cores). Profile ``pope-captions-llm500``
runs the paper's method on the first 500 images and this table sets its Table 1 beside the
rule + lexicon run of the same 500 images (``tables.compare_with``, profile
``pope-captions-500``): how many objects the LLM adds per caption (and how many of them are
out-of-domain, i.e. unverified without images), and how each column moves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

#: (summary.csv column, Table 1 label); CAOS columns are read for ``embedder``.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("objects_per_caption", "# Objects"),
    ("precision", "precision"),
    ("recall", "recall"),
    ("CHAIR_S", "CHAIR_S"),
    ("CAOS_T", "CAOS_T"),
    ("CAOS_X", "CAOS_X"),
    ("CAOS_K", "CAOS_K"),
    ("CAOS_TX", "CAOS_T/X"),
    ("CAOS_XK", "CAOS_X/K"),
    ("CAOS_avg", "CAOS_avg"),
)
ADDED = ("LLM-added objects / caption", "of which out-of-domain")
SETTINGS = ("rule+lexicon", "rule+lexicon+llm")


def llm_added(object_files: Mapping[str, Sequence[Path]]) -> dict[str, tuple[float, float]]:
    """Per model: (objects the LLM added per caption, out-of-domain ones per caption), from the
    ``source`` of each extracted object (``llm`` = found by the LLM only)."""
    from halluscope.io import read_jsonl

    out = {}
    for model, paths in object_files.items():
        captions = added = ood = 0
        for path in paths:
            for row in read_jsonl(path):
                captions += 1
                llm = [o for o in row["objects"] if o.get("source") == "llm"]
                added += len(llm)
                ood += sum(1 for o in llm if not o.get("in_domain"))
        out[model] = (added / captions, ood / captions) if captions else (0.0, 0.0)
    return out


def _row(summary: pd.DataFrame, model: str, embedder: str) -> pd.Series:
    rows = summary[
        (summary["model"] == model)
        & (summary["embedder"] == embedder)
        & (summary["instruction_id"] == "all")
    ]
    if len(rows) != 1:
        raise ValueError(f"summary: expected one row for {model}/{embedder}/all, got {len(rows)}")
    return rows.iloc[0]


def comparison_records(
    without_llm: pd.DataFrame,
    with_llm: pd.DataFrame,
    added: Mapping[str, tuple[float, float]],
    models: Sequence[str],
    embedder: str,
) -> list[dict[str, Any]]:
    """Long-format records (``model, embedding, metric, value, published``): each Table 1 column
    as ``<metric> [rule+lexicon]`` and ``<metric> [rule+lexicon+llm]``, plus the added counts."""
    from halluscope.report.latex import twin_record

    records = []
    for model in models:
        before, after = _row(without_llm, model, embedder), _row(with_llm, model, embedder)
        for label, value in zip(ADDED, added.get(model, (0.0, 0.0)), strict=True):
            records.append(twin_record(model, "", label, value))
        for column, label in COLUMNS:
            embedding = embedder if column.startswith("CAOS") else ""
            for setting, row in zip(SETTINGS, (before, after), strict=True):
                records.append(twin_record(model, embedding, f"{label} [{setting}]", row[column]))
    return records


def comparison_frame(records: Sequence[Mapping[str, Any]], models: Sequence[str]) -> pd.DataFrame:
    """Rows: the added counts and each Table 1 column; columns: model x (rule+lexicon, +LLM)."""
    from halluscope.report.latex import latex_escape

    values = {(r["model"], r["metric"]): r["value"] for r in records}
    index = [*ADDED, *(label for _, label in COLUMNS)]
    columns = pd.MultiIndex.from_tuples(
        [(latex_escape(m), s) for m in models for s in ("rule+lex.", "+LLM")]
    )
    rows = []
    for label in index:
        row = []
        for model in models:
            if label in ADDED:
                row += [float("nan"), values[(model, label)]]
            else:
                row += [values[(model, f"{label} [{s}]")] for s in SETTINGS]
        rows.append(row)
    return pd.DataFrame(rows, index=[latex_escape(label) for label in index], columns=columns)


def comparison_latex(
    frame: pd.DataFrame, decimals: int, *, run: str, baseline: str, embedder: str, n_images: Any
) -> str:
    from halluscope.report import booktabs_latex

    caption = (
        f"CAOS Table~1 with and without the LLM extractor on the same captions (first {n_images} "
        f"images of \\texttt{{pope-captions}}): rule+lex.\\ = profile \\texttt{{{baseline}}} "
        f"(rule + lexicon), +LLM = profile \\texttt{{{run}}} (rule + lexicon + SmolLM2-135M, the "
        "paper's method with a small local LLM). The first two rows count the objects only the "
        "LLM found, per caption, and how many of them are out-of-domain (unverified here: no "
        f"images). CAOS columns with {embedder}. As in Table~1, unverified out-of-domain objects "
        "are never counted as hallucinations (precision, CHAIR$_S$, CAOS$_T$ and CAOS$_K$ do not "
        "see them) but are part of a caption's earlier objects X, so CAOS$_X$ can move."
    )
    return booktabs_latex(
        frame,
        decimals=decimals,
        caption=caption,
        label=f"tab:llm-comparison-{run}",
        column_format="l" + "r" * frame.shape[1],
        multicol_align="c",
    )
