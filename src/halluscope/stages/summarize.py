"""Summarize stage: pool per-job score files into ``summary.csv`` and ``objects.csv``.

Definitions (per group of captions):
* ``objects_per_caption`` = mean number of objects in L (every mention: a repeated name counts
  again, an out-of-domain object counts whether the oracle verified it or not);
* ``unique_objects_per_caption`` = mean number of distinct names in L;
* ``precision`` = genuine objects / verified objects (unverified ones left out);
* ``recall`` = GT objects mentioned / GT objects (micro over captions);
* ``CHAIR_S`` = captions with a hallucinated MSCOCO object / captions;
* ``CHAIR_I`` = hallucinated MSCOCO mentions / MSCOCO mentions;
* CAOS: mean over captions with a hallucination of the per-caption values, ``*_rom`` the ratio
  of the means (see ``halluscope.metrics.caos``).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from halluscope.metrics.caos import SCORES, aggregate
from halluscope.stages.csvio import as_float, read_csv, write_csv
from halluscope.stages.score import CAPTION_COLUMNS

SUMMARY_COLUMNS = (
    "model",
    "embedder",
    "instruction_id",
    "n_captions",
    "n_no_hallucination",
    "objects_per_caption",
    "unique_objects_per_caption",
    "precision",
    "recall",
    "CHAIR_S",
    "CHAIR_I",
    *SCORES,
    "CAOS_TX_rom",
    "CAOS_XK_rom",
    "n_unverified",
    "POPE_F1",
)


#: Per-caption counts (stages/score.py) that the summary pools.
COUNT_COLUMNS = tuple(c for c in CAPTION_COLUMNS if c.startswith("n_") and c != "n_scored")


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def summarize_group(rows: list[dict[str, str]]) -> dict:
    """Summary metrics of a group of caption rows (see module docstring)."""
    ints = {c: sum(int(r[c]) for r in rows) for c in COUNT_COLUMNS}
    verified = ints["n_objects"] - ints["n_unverified"]
    caos = aggregate({s: as_float(r[s]) for s in SCORES} for r in rows)
    return {
        "n_captions": len(rows),
        "n_no_hallucination": caos["n_no_hallucination"],
        "objects_per_caption": ints["n_objects"] / len(rows) if rows else None,
        "unique_objects_per_caption": ints["n_unique_objects"] / len(rows) if rows else None,
        "precision": _ratio(verified - ints["n_hallucinated"], verified),
        "recall": _ratio(ints["n_gt_mentioned"], ints["n_gt"]),
        "CHAIR_S": sum(int(r["n_in_domain_hallucinated"]) > 0 for r in rows) / len(rows),
        "CHAIR_I": _ratio(ints["n_in_domain_hallucinated"], ints["n_in_domain"]),
        **{s: caos[s] for s in (*SCORES, "CAOS_TX_rom", "CAOS_XK_rom")},
        "n_unverified": ints["n_unverified"],
        "POPE_F1": None,
    }


def pope_f1_by_model(pope_files: list[Path]) -> dict[str, float]:
    """POPE-F1 per model: the mean F1 over the configured negative-sampling settings.

    Files are ``results/pope/{dataset}/{model}/{setting}.scores.json``.
    """
    from halluscope.io import read_json

    f1s: dict[str, list[float]] = defaultdict(list)
    for path in pope_files:
        f1s[Path(path).parent.name].append(float(read_json(path)["f1"]))
    return {model: sum(v) / len(v) for model, v in f1s.items()}


def run(
    caption_files: list[Path],
    table1: list[str],
    out_summary: Path,
    out_objects: Path,
    pope_files: list[Path] | None = None,
) -> None:
    groups: dict[tuple[str, str, str], list[dict[str, str]]] = defaultdict(list)
    object_rows: list[dict[str, str]] = []
    object_header: list[str] | None = None
    for path in caption_files:
        for row in read_csv(path):
            key = (row["model"], row["embedder"])
            groups[(*key, row["instruction_id"])].append(row)
            groups[(*key, "all")].append(row)
            if row["instruction_id"] in table1:
                groups[(*key, "table1")].append(row)
        obj_path = Path(str(path).replace(".captions.csv", ".objects.csv"))
        rows = read_csv(obj_path)
        if rows:
            object_header = object_header or list(rows[0])
        object_rows.extend(rows)
    pope_f1 = pope_f1_by_model(pope_files or [])
    summary = [
        {
            "model": m,
            "embedder": e,
            "instruction_id": i,
            **summarize_group(rows),
            "POPE_F1": pope_f1.get(m),
        }
        for (m, e, i), rows in sorted(groups.items())
    ]
    write_csv(out_summary, SUMMARY_COLUMNS, summary)
    write_csv(out_objects, object_header or ["model"], object_rows)
