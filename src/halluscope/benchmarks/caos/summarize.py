"""Summarize stage: pool per-job score files into ``summary.csv`` and ``objects.csv``.

Definitions per group of captions, as in the CAOS paper's Table 1 ("Average Precision, Recall,
the number of objects per generated caption"): per-caption values averaged over captions.
* ``objects_per_caption`` = mean number of distinct objects in L (unverified out-of-domain
  objects included); ``mentions_per_caption`` counts every mention (secondary);
* ``precision`` = mean over captions with at least one verified object of genuine / verified
  distinct objects (unverified ones left out); ``precision_micro`` pools the counts instead;
  ``precision_in_domain`` / ``precision_micro_in_domain`` count MSCOCO objects only;
* ``recall`` = mean over captions with at least one GT object of GT objects mentioned / GT
  objects; ``recall_micro`` pools the counts;
* ``CHAIR_S`` = captions with a hallucinated object of L (in-domain by the GT, out-of-domain by
  the oracle) / captions, the paper's "fraction of captions having hallucinated objects";
  ``CHAIR_S_mscoco`` counts MSCOCO objects only (the reference CHAIR). Which pair Table 1
  prints is ``tables.chair_counts``
  (:data:`halluscope.benchmarks.caos.tables.CHAIR_COUNTS`): the paper's printed CHAIR_S lies
  above the in-domain reading (MiniGPT-4: 0.33 against 0.20 on the real captions) and within
  the bounds of the reading with out-of-domain objects;
* ``CHAIR_I`` = hallucinated MSCOCO mentions / MSCOCO mentions (the reference CHAIR, micro);
* CAOS: see :func:`halluscope.benchmarks.caos.metric.aggregate` (T, X, K pooled over captions with a
  hallucination; T/X, X/K and avg from the pooled means; ``*_mor`` the mean of per-caption
  ratios);
* ``*_if_present`` / ``*_if_absent``: precision, CHAIR_S and CAOS with every unverified object
  taken as present / as hallucinated: the two bounds of not having an oracle;
* ``<column>_lo`` / ``<column>_hi``: the interval of each number Table 1 can print, at the
  ``intervals`` settings of params.yaml, the image resampled
  (:mod:`halluscope.benchmarks.caos.intervals`; POPE-F1's from the per-image counts of POPE's
  score files, :mod:`halluscope.benchmarks.pope.intervals`);
* ``instructions_mean_<column>_lo`` / ``_hi`` (on each ``all`` row): the interval of Table 2's
  numbers, CAOS_T, X, K averaged over the single instructions and T/X, X/K, avg of those means,
  the image resampled with its captions of every instruction.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from halluscope.benchmarks.caos.csvio import as_float, read_csv, read_header, write_csv
from halluscope.benchmarks.caos.intervals import BOUND_COLUMNS, TABLE2_BOUNDS, grouped_intervals
from halluscope.benchmarks.caos.metric import MEAN_OF_RATIOS, SCORES, aggregate
from halluscope.benchmarks.caos.score import BOUNDS, CAPTION_COLUMNS
from halluscope.settings import IntervalParams, param
from halluscope.stage_command import stage

if TYPE_CHECKING:
    from halluscope.metrics.intervals import IntervalSettings

#: Columns that have an ``_if_present`` and an ``_if_absent`` bound in summary.csv.
BOUNDED = ("precision", "CHAIR_S", *SCORES)

SUMMARY_COLUMNS = (
    "model",
    "embedder",
    "instruction_id",
    "n_captions",
    "n_no_hallucination",
    "objects_per_caption",
    "mentions_per_caption",
    "precision",
    "precision_micro",
    "precision_in_domain",
    "precision_micro_in_domain",
    "recall",
    "recall_micro",
    "CHAIR_S",
    "CHAIR_S_mscoco",
    "CHAIR_I",
    *SCORES,
    *MEAN_OF_RATIOS,
    *(f"{c}_if_{b}" for b in BOUNDS for c in BOUNDED),
    "n_objects",
    "n_unverified",
    "POPE_F1",
    *BOUND_COLUMNS,
    "POPE_F1_lo",
    "POPE_F1_hi",
    *TABLE2_BOUNDS,
)


#: Per-caption counts (score.py) that the summary pools.
COUNT_COLUMNS = tuple(c for c in CAPTION_COLUMNS if c.startswith("n_") and c != "n_scored")


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _precision(rows: list[dict[str, int]], unverified: str) -> float | None:
    """Mean per-caption precision; unverified objects left out, or counted present / absent."""
    values = []
    for r in rows:
        if unverified == "exclude":
            denominator = r["n_objects"] - r["n_unverified"]
            genuine = denominator - r["n_hallucinated"]
        else:
            denominator = r["n_objects"]
            genuine = denominator - r["n_hallucinated"]
            genuine -= r["n_unverified"] if unverified == "absent" else 0
        if denominator > 0:
            values.append(genuine / denominator)
    return _mean(values)


def summarize_group(rows: list[dict[str, str]]) -> dict:
    """Summary metrics of a group of caption rows (see module docstring)."""
    counts = [{c: int(r[c]) for c in COUNT_COLUMNS} for r in rows]
    ints = {c: sum(r[c] for r in counts) for c in COUNT_COLUMNS}
    verified = ints["n_objects"] - ints["n_unverified"]
    n = len(rows)
    caos = {"": aggregate({s: as_float(r[s]) for s in SCORES} for r in rows)}
    for bound in BOUNDS:
        caos[bound] = aggregate({s: as_float(r[f"{s}_if_{bound}"]) for s in SCORES} for r in rows)
    out = {
        "n_captions": n,
        "n_no_hallucination": caos[""]["n_no_hallucination"],
        "objects_per_caption": ints["n_objects"] / n if n else None,
        "mentions_per_caption": ints["n_mentions"] / n if n else None,
        "precision": _precision(counts, "exclude"),
        "precision_micro": _ratio(verified - ints["n_hallucinated"], verified),
        "precision_in_domain": _mean(
            [
                (r["n_in_domain"] - r["n_in_domain_hallucinated"]) / r["n_in_domain"]
                for r in counts
                if r["n_in_domain"]
            ]
        ),
        "precision_micro_in_domain": _ratio(
            ints["n_in_domain"] - ints["n_in_domain_hallucinated"], ints["n_in_domain"]
        ),
        "recall": _mean([r["n_gt_mentioned"] / r["n_gt"] for r in counts if r["n_gt"]]),
        "recall_micro": _ratio(ints["n_gt_mentioned"], ints["n_gt"]),
        "CHAIR_S": sum(r["n_hallucinated"] > 0 for r in counts) / n if n else None,
        "CHAIR_S_mscoco": sum(r["n_in_domain_hallucinated"] > 0 for r in counts) / n if n else None,
        "CHAIR_I": _ratio(ints["n_in_domain_hallucinated_mentions"], ints["n_in_domain_mentions"]),
        **{s: caos[""][s] for s in (*SCORES, *MEAN_OF_RATIOS)},
        "n_objects": ints["n_objects"],
        "n_unverified": ints["n_unverified"],
        "POPE_F1": None,
    }
    for bound in BOUNDS:
        out[f"precision_if_{bound}"] = _precision(counts, bound)
        extra = (lambda r: r["n_unverified"]) if bound == "absent" else (lambda r: 0)
        out[f"CHAIR_S_if_{bound}"] = (
            sum(r["n_hallucinated"] + extra(r) > 0 for r in counts) / n if n else None
        )
        out.update({f"{s}_if_{bound}": caos[bound][s] for s in SCORES})
    return out


def pope_f1_by_model(
    pope_files: list[Path], intervals: IntervalSettings
) -> dict[str, dict[str, float | None]]:
    """POPE-F1 per model: the mean F1 over the configured negative-sampling settings, and its
    interval (``POPE_F1_lo``, ``POPE_F1_hi``), the images of every setting resampled together.

    Files are ``results/pope/{profile}/{model}/{setting}.scores.json``.
    """
    from halluscope.benchmarks.pope.intervals import mean_f1_interval
    from halluscope.io import read_json

    docs: dict[str, dict[str, dict]] = defaultdict(dict)
    for path in pope_files:
        docs[Path(path).parent.name][Path(path).name.removesuffix(".scores.json")] = read_json(path)
    out = {}
    for model, by_setting in docs.items():
        f1s = [float(doc["f1"]) for doc in by_setting.values()]
        lo, hi = mean_f1_interval(by_setting, intervals)
        out[model] = {"POPE_F1": sum(f1s) / len(f1s), "POPE_F1_lo": lo, "POPE_F1_hi": hi}
    return out


@dataclass(frozen=True)
class SummarizeSettings(IntervalParams):
    """What the summary reads from params: the Table 1 instructions (``tables.table1_instructions``)
    pooled into the ``table1`` rows, and how its intervals are computed (``intervals``)."""

    table1: list[str] = param("tables.table1_instructions")


@stage("summarize")
def run(
    captions: list[Path],
    /,
    *,
    settings: SummarizeSettings,
    out_summary: Path,
    out_objects: Path,
    pope: list[Path] | None = None,
) -> None:
    """CAOS summary: the score files of every model, instruction and embedder pooled.

    The per-job ``*.captions.csv`` (and ``*.objects.csv`` beside each) into ``summary.csv`` and
    ``objects.csv``; POPE's score files, when given, give the POPE-F1 column."""
    table1 = settings.table1
    intervals = settings.interval_settings()
    groups: dict[tuple[str, str, str], list[dict[str, str]]] = defaultdict(list)
    object_rows: list[dict[str, str]] = []
    object_header: list[str] | None = None
    for path in captions:
        for row in read_csv(path):
            key = (row["model"], row["embedder"])
            groups[(*key, row["instruction_id"])].append(row)
            groups[(*key, "all")].append(row)
            if row["instruction_id"] in table1:
                groups[(*key, "table1")].append(row)
        obj_path = Path(str(path).replace(".captions.csv", ".objects.csv"))
        rows = read_csv(obj_path)
        if object_header is None:  # from the first file, rows or not: a run with no
            object_header = read_header(obj_path)  # hallucination still has the columns
        object_rows.extend(rows)
    pope_f1 = pope_f1_by_model(pope or [], intervals)
    # Table 2's bounds (its means over the single instructions) go on each "all" row
    means: dict[tuple[str, ...], list[tuple[str, str, str]]] = defaultdict(list)
    for m, e, i in sorted(groups):
        if i not in ("table1", "all"):
            means[("table2", m, e, "all")].append((m, e, i))
    bounds = grouped_intervals(groups, intervals, means=means)
    summary = [
        {
            "model": m,
            "embedder": e,
            "instruction_id": i,
            **summarize_group(rows),
            **bounds[(m, e, i)],
            **pope_f1.get(m, {}),
            **bounds.get(("table2", m, e, i), {}),
        }
        for (m, e, i), rows in sorted(groups.items())
    ]
    write_csv(out_summary, SUMMARY_COLUMNS, summary)
    write_csv(out_objects, object_header or ["model"], object_rows)
