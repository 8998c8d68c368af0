"""How much the choices the CAOS paper leaves open move the Table 1 numbers.

Each alternative is recomputed from the same score files, so the table isolates one choice at a
time against the headline (the setting of Table 1):
* K of CAOS_K: another named order of the frequent MSCOCO objects (``caos.sensitivity``), which
  moves CAOS_K, CAOS_X/K and CAOS_avg (T and X do not depend on K);
* the aggregation of the ratio cells: the mean of per-caption ratios instead of the ratio of the
  pooled means;
* precision and recall pooled over objects (micro) instead of averaged over captions;
* # Objects counting every mention instead of distinct objects.
Records use the CSV-twin layout; the metric name carries the alternative in brackets, e.g.
``CAOS_K [K=coco-images]``, and ``published`` holds the headline value it is compared with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from halluscope.benchmarks.caos.k_order import frequent_objects
from halluscope.benchmarks.caos.tables import (
    _SIMULATED_NOTE,
    _render,
    block_starts,
    latex_escape,
    metric_label,
    model_columns,
    summary_rows,
    summary_value,
    table_rows,
    twin_record,
)
from halluscope.report import caption_then_mean

#: (alternative name, headline column, alternative column) read straight from summary.csv.
SUMMARY_ALTERNATIVES: tuple[tuple[str, str, str, str], ...] = (
    ("precision", "micro", "precision", "precision_micro"),
    ("recall", "micro", "recall", "recall_micro"),
    ("# Objects", "every mention", "objects_per_caption", "mentions_per_caption"),
)
RATIO_ALTERNATIVES: tuple[tuple[str, str], ...] = (
    ("CAOS_T/X", "CAOS_TX"),
    ("CAOS_X/K", "CAOS_XK"),
    ("CAOS_avg", "CAOS_avg"),
)


def unit_vectors(vectors: tuple[list[str], np.ndarray]) -> tuple[dict[str, int], np.ndarray]:
    """(word -> row, rows scaled to length 1): computed once per embedder, then shared by every
    K order the table compares."""
    words, matrix = vectors
    index = {w: i for i, w in enumerate(words)}
    return index, matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def k_similarities(
    names: Sequence[str], unit: tuple[dict[str, int], np.ndarray], k_names: Sequence[str]
) -> dict[str, float]:
    """max cosine of each name with the K set (names without a vector are left out); ``unit``
    from :func:`unit_vectors`."""
    index, unit_matrix = unit
    missing = [n for n in k_names if n not in index]
    if missing:
        raise ValueError(f"frequent objects without a vector: {missing}")
    k_idx = [index[n] for n in k_names]
    out = {}
    for name in dict.fromkeys(names):
        if name in index:
            out[name] = float((unit_matrix[k_idx] @ unit_matrix[index[name]]).max())
    return out


def sensitivity_records(
    summary: pd.DataFrame,
    objects: pd.DataFrame,
    vectors: Mapping[str, tuple[list[str], np.ndarray]],
    *,
    models: Sequence[str],
    embedders: Sequence[str],
    frequent: str | list[str],
    alternatives: Sequence[str],
    k: int,
    instructions: Sequence[str],
) -> list[dict]:
    """Records (value = the alternative, published = the headline) for every alternative."""
    rows = summary_rows(summary, "table1")
    records: list[dict] = []
    for metric, how, head, alt in SUMMARY_ALTERNATIVES:
        for model in models:
            records.append(
                twin_record(
                    model,
                    "",
                    f"{metric} [{how}]",
                    summary_value(rows, model, embedders, alt),
                    summary_value(rows, model, embedders, head),
                )
            )
    table1 = objects[objects["instruction_id"].astype(str).isin(list(instructions))]
    for embedder in embedders:
        for metric, column in RATIO_ALTERNATIVES:
            for model in models:
                records.append(
                    twin_record(
                        model,
                        embedder,
                        f"{metric} [mean of per-caption ratios]",
                        summary_value(rows, model, [embedder], column + "_mor"),
                        summary_value(rows, model, [embedder], column),
                    )
                )
        subset = table1[table1["embedder"] == embedder]
        unit = unit_vectors(vectors[embedder])
        for order in alternatives:
            if order == frequent:
                continue
            k_names = frequent_objects(order)[:k]
            sims = k_similarities(subset["name"].astype(str).tolist(), unit, k_names)
            frame = subset.assign(_sim_k=subset["name"].astype(str).map(sims))
            caos_k = caption_then_mean(frame, "_sim_k")
            for model in models:
                x = summary_value(rows, model, [embedder], "CAOS_X")
                t = summary_value(rows, model, [embedder], "CAOS_T")
                key = (model, embedder)
                kk = float(caos_k.get(key, float("nan")))
                alt = {
                    "CAOS_K": kk,
                    "CAOS_X/K": x / kk if kk > 0 else float("nan"),
                    "CAOS_avg": (t + x + kk) / 3,
                }
                head = {
                    "CAOS_K": summary_value(rows, model, [embedder], "CAOS_K"),
                    "CAOS_X/K": summary_value(rows, model, [embedder], "CAOS_XK"),
                    "CAOS_avg": summary_value(rows, model, [embedder], "CAOS_avg"),
                }
                for metric in ("CAOS_K", "CAOS_X/K", "CAOS_avg"):
                    records.append(
                        twin_record(
                            model, embedder, f"{metric} [K={order}]", alt[metric], head[metric]
                        )
                    )
    return records


def sensitivity_latex(
    records: Sequence[Mapping],
    models: Sequence[str],
    decimals: int,
    simulated: bool,
    label: str = "tab:caos-sensitivity",
) -> str:
    """Rows = alternative, columns = models, cells = ``alternative (change)``."""
    order = table_rows(records)
    cell = {(r["embedding"], r["metric"], r["model"]): r for r in records}

    def text(embedding: str, metric: str, model: str) -> str:
        r = cell.get((embedding, metric, model))
        if not r or r["value"] is None or r["published"] is None:
            return "--"
        delta = r["value"] - r["published"]
        return f"{r['value']:.{decimals}f} ({delta:+.{decimals}f})"

    frame = model_columns(order, models, text)
    labels = []
    for embedding, metric in order:
        name, _, how = metric.partition(" [")
        labels.append(f"{metric_label(embedding, name)}, {latex_escape(how.rstrip(']'))}")
    caption = (
        (_SIMULATED_NOTE if simulated else "")
        + "Sensitivity of Table~1 to the choices the CAOS paper leaves open: each row "
        "recomputes one cell under one alternative (in parentheses: the change against the "
        "headline value of Table~1). K orders: \\texttt{coco-instances} (MSCOCO training "
        "instances: person, car, chair), \\texttt{coco-images} (images whose ground truth has "
        "the class: person, dining table, car), \\texttt{paper-examples} (person, dining table, "
        "chair)."
    )
    return _render(
        frame, labels, decimals=decimals, caption=caption, label=label,
        breaks=block_starts(order),
    )  # fmt: skip
