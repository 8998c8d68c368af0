"""The intervals of POPE's five scores, and of POPE-F1 as the CAOS tables print it (the mean F1
over the negative-sampling settings), the image resampled (docs/statistics.md).

Why the per-image counts go into each score file: the CAOS summary's POPE-F1 averages the F1 of
several settings whose questions ask about the same images, so its interval resamples the images
of all settings together; each setting's file keeps the confusion counts of its images
(``by_image``), which is all that F1 needs, and the summary never reads questions or answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from halluscope.hand_check_intervals import attach, bootstrapped, proportion, share
from halluscope.metrics.intervals import IntervalSettings, UnitTable, bootstrap

#: the per-image confusion counts of ``by_image``, in this order
COUNT_COLUMNS = ("tp", "said_yes", "positives")


def _units(questions: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each question's unit: its image; a question without one is its own unit."""
    return [str(q.get("image", f"question {q.get('question_id', i)}")) for i, q in
            enumerate(questions)]  # fmt: skip


def _f1(prefix: str = "") -> Any:
    precision = share(f"{prefix}tp", f"{prefix}said_yes")
    recall = share(f"{prefix}tp", f"{prefix}positives")

    def stat(t: Mapping[str, np.ndarray]) -> np.ndarray:
        p, r = precision(t), recall(t)
        return np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1.0), 0.0)

    return stat


def _counts(questions: Sequence[Mapping[str, Any]], preds: Sequence[Any]) -> dict[str, list[int]]:
    labels = [q["label"] for q in questions]
    pairs = list(zip(labels, preds, strict=True))
    return {
        "tp": [int(lab == "yes" and p == "yes") for lab, p in pairs],
        "said_yes": [int(p == "yes") for _, p in pairs],
        "positives": [int(lab == "yes") for lab, _ in pairs],
        "correct": [int(p == lab) for lab, p in pairs],
    }


def pope_intervals(
    questions: Sequence[Mapping[str, Any]], preds: Sequence[Any], settings: IntervalSettings
) -> dict[str, Any]:
    """The intervals of the five scores: accuracy and yes ratio are shares of questions (of
    parsed answers), by the closed form; precision, recall and F1 are ratios of confusion
    counts, by the cluster bootstrap (0 where a denominator is 0, as the metric)."""
    units = _units(questions)
    counts = _counts(questions, preds)
    parsed = [(u, int(p == "yes")) for u, p in zip(units, preds, strict=True) if p is not None]
    columns = {c: counts[c] for c in COUNT_COLUMNS}
    statistics = {"precision": share("tp", "said_yes"), "recall": share("tp", "positives")}
    return {
        "accuracy": proportion(units, counts["correct"], settings),
        **bootstrapped(units, columns, {**statistics, "f1": _f1()}, settings),
        "yes_ratio": proportion([u for u, _ in parsed], [y for _, y in parsed], settings),
    }


def by_image(questions: Sequence[Mapping[str, Any]], preds: Sequence[Any]) -> dict[str, Any]:
    """The per-image confusion counts (:data:`COUNT_COLUMNS`) that F1 is a function of."""
    counts = _counts(questions, preds)
    table: dict[str, list[int]] = {}
    for i, unit in enumerate(_units(questions)):
        row = table.setdefault(unit, [0] * len(COUNT_COLUMNS))
        for j, column in enumerate(COUNT_COLUMNS):
            row[j] += counts[column][i]
    return {"columns": list(COUNT_COLUMNS), "counts": table}


def score_document(
    questions: Sequence[Mapping[str, Any]],
    preds: Sequence[Any],
    parser: str,
    settings: IntervalSettings | None,
) -> dict[str, Any]:
    """One setting's score file, the same from the pipeline's stage and ``halluscope pope``:
    the scores, the parser, and with ``settings`` their intervals and the per-image counts."""
    from halluscope.benchmarks.pope.metric import pope_scores

    doc: dict[str, Any] = {
        **pope_scores([q["label"] for q in questions], preds).as_dict(),
        "parser": parser,
    }
    if settings is not None:
        attach(doc, pope_intervals(questions, preds, settings), settings)
        doc["by_image"] = by_image(questions, preds)
    return doc


def mean_f1_interval(
    by_setting: Mapping[str, Mapping[str, Any]], settings: IntervalSettings
) -> tuple[float | None, float | None]:
    """The interval of the mean F1 over settings (one model's score files by setting), the
    images of every setting resampled together; ``(None, None)`` when a file has no counts."""
    if not by_setting or any("by_image" not in doc for doc in by_setting.values()):
        return None, None
    units = sorted({u for doc in by_setting.values() for u in doc["by_image"]["counts"]})
    columns: dict[str, np.ndarray] = {}
    for setting, doc in by_setting.items():
        block = doc["by_image"]
        counts = block["counts"]
        for j, column in enumerate(block["columns"]):
            columns[f"{setting}:{column}"] = np.array(
                [counts[u][j] if u in counts else 0 for u in units], dtype=np.float64
            )
    f1s = [_f1(f"{setting}:") for setting in by_setting]

    def mean_f1(t: Mapping[str, np.ndarray]) -> np.ndarray:
        return sum(f(t) for f in f1s) / len(f1s)

    found = bootstrap(UnitTable(tuple(units), columns), {"f1": mean_f1}, settings)["f1"]
    return found.lo, found.hi
