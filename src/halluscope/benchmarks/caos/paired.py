"""Paired comparisons of one CAOS run: every pair of its models, every pair of one model's
instructions; per headline number, the difference, its paired interval and a p-value.

Why paired. Two models, or two instructions of one model, captioned the same images, and much of
the variation between images is shared: a cluttered image makes every caption of it likelier to
hallucinate. Two separate intervals that overlap say little (the shared variation is in both);
the difference statistic(A) - statistic(B), recomputed on joint resamples of the images, has the
shared part removed (``docs/statistics.md``, "Paired comparisons").

Why the image. As for the summary's intervals (:mod:`halluscope.benchmarks.caos.intervals`, whose
per-caption columns and statistics this module reuses, so each side's estimate is the summary's
number), the unit drawn is the image: every caption of an image, of either side and under every
pooled instruction, moves with it. Model pairs are compared on the pooled Table 1 instructions
(the rows Table 1 prints), on the images both have.

Why these numbers. The numbers Table 1 prints (precision and recall in its reading, objects per
caption, CHAIR_S in its reading, the six CAOS numbers per embedder) and CHAIR_I; POPE-F1 is not
per caption and stays out. The interval is the cluster bootstrap's (BCa), the p-value the swap
permutation test (each image's two aggregates swapped with probability 1/2: exact under the
null that the two sides are exchangeable on every image, for any statistic, at any n), both
from :func:`halluscope.metrics.intervals.paired_differences`; the bootstrap for CHAIR_S too (a
difference of two proportions has no closed form here).

Why Holm within a family. A family is one question asked of the data: "which models differ in
CHAIR_S?" (every model pair; one metric, one embedder) or "which of model m's instructions
differ in CHAIR_S?" (every instruction pair of m; one metric, one embedder). Holm's step-down
adjustment keeps the chance of any false "supported" within a family at most 1 - level, whatever
the dependence between its pairs; ``supported`` is ``p_holm < 1 - level``. Intervals are per
pair, not adjusted: an interval can exclude 0 while the pair is not supported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from halluscope.benchmarks.caos.csvio import csv_text, six_decimals
from halluscope.benchmarks.caos.intervals import STATISTICS, _columns, _share
from halluscope.benchmarks.caos.tables import CAOS_COLUMNS, CAOS_METRIC, CHAIR_COUNTS
from halluscope.metrics.intervals import (
    IntervalSettings,
    PairedDifference,
    UnitTable,
    holm,
    paired_differences,
)

#: the two kinds of comparison (the CSV's ``comparison``)
MODELS = "models"
INSTRUCTIONS = "instructions"

#: CHAIR_S in either reading, as a share of captions (the summary's PROPORTIONS, bootstrapped)
_CHAIR_S = {
    "CHAIR_S": _share("any_hallucinated", "one"),
    "CHAIR_S_mscoco": _share("any_mscoco_hallucinated", "one"),
}

#: the CSV's columns, one row per (pair, embedding, metric)
COLUMNS = (
    "comparison",
    "model_a",
    "instructions_a",
    "model_b",
    "instructions_b",
    "embedding",
    "metric",
    "value_a",
    "value_b",
    "difference",
    "lo",
    "hi",
    "level",
    "p_value",
    "p_holm",
    "family_size",
    "supported",
    "n_images",
)

#: the metrics' names (as Table 1's twin spells them) in table order; CHAIR_I beside CHAIR_S
GENERAL_METRICS = ("precision", "recall", "# Objects", "CHAIR_S", "CHAIR_I")


def general_columns(precision_recall: str, chair_counts: str) -> dict[str, str]:
    """Metric name -> the summary column it is in Table 1's reading (``tables.precision_recall``,
    ``tables.chair_counts``, as :func:`halluscope.benchmarks.caos.tables.table1_records`)."""
    per_caption, micro, chair_s = CHAIR_COUNTS[chair_counts]
    is_micro = precision_recall == "micro"
    return {
        "precision": micro if is_micro else per_caption,
        "recall": "recall_micro" if is_micro else "recall",
        "# Objects": "objects_per_caption",
        "CHAIR_S": chair_s,
        "CHAIR_I": "CHAIR_I",
    }


def metric_columns(
    embedders: Sequence[str], precision_recall: str, chair_counts: str
) -> list[tuple[str, str, str]]:
    """(embedding, metric, summary column) of every compared number, in table order: the
    general ones (embedding ``""``, read from the first embedder's rows: they do not depend on
    it), then the six CAOS numbers of each embedder."""
    general = general_columns(precision_recall, chair_counts)
    out = [("", metric, general[metric]) for metric in GENERAL_METRICS]
    out += [(e, CAOS_METRIC[c], c) for e in embedders for c in CAOS_COLUMNS]
    return out


def statistic(column: str) -> Any:
    """The per-image-sums statistic of a summary column."""
    return _CHAIR_S.get(column) or STATISTICS[column]


def image_table(rows: Sequence[Mapping[str, str]]) -> UnitTable:
    """Per-image sums of the per-caption columns of ``rows`` (score.py's caption rows)."""
    return UnitTable.from_rows([str(r["image_id"]) for r in rows], _columns(rows))


def compare(
    a: UnitTable, b: UnitTable, columns: Sequence[str], settings: IntervalSettings
) -> dict[str, PairedDifference] | None:
    """statistic(a) - statistic(b) of each summary column, on the images both have (None when
    they share none)."""
    common = set(a.units) & set(b.units)
    if not common:
        return None
    statistics = {c: statistic(c) for c in dict.fromkeys(columns)}
    return paired_differences(a.restrict(common), b.restrict(common), statistics, settings)


Groups = Mapping[tuple[str, str, str], Sequence[Mapping[str, str]]]


def paired_records(
    groups: Groups,
    *,
    models: Sequence[str],
    instructions: Sequence[str],
    table1: Sequence[str],
    embedders: Sequence[str],
    settings: IntervalSettings,
    precision_recall: str = "per_caption",
    chair_counts: str = "with-rejected-ood",
) -> list[dict[str, Any]]:
    """Every model pair on the pooled ``table1`` instructions, then every instruction pair of
    each model, per compared number (:func:`metric_columns`), with ``p_holm`` and ``supported``
    within each family. ``groups``: (model, embedder, instruction) -> its caption rows."""
    wanted = metric_columns(embedders, precision_recall, chair_counts)
    by_embedder = {e: [(m, c) for x, m, c in wanted if x in ("", e)] for e in embedders[:1]}
    by_embedder |= {e: [(m, c) for x, m, c in wanted if x == e] for e in embedders[1:]}
    pooled = "+".join(table1)

    def rows(model: str, embedder: str, ids: Sequence[str]) -> list[Mapping[str, str]]:
        return [r for i in ids for r in groups.get((model, embedder, i), ())]

    records: list[dict[str, Any]] = []

    def add(kind: str, a: tuple[str, str], b: tuple[str, str], found, embedder: str) -> None:
        for metric, column in by_embedder[embedder]:
            result = found[column]
            general = metric in GENERAL_METRICS
            records.append(
                {
                    "comparison": kind,
                    "model_a": a[0],
                    "instructions_a": a[1],
                    "model_b": b[0],
                    "instructions_b": b[1],
                    "embedding": "" if general else embedder,
                    "metric": metric,
                    **_fields(result, settings),
                }
            )

    tables: dict[tuple[str, str, str], UnitTable | None] = {}

    def table(model: str, embedder: str, ids: tuple[str, ...]) -> UnitTable | None:
        key = (model, embedder, "+".join(ids))
        if key not in tables:
            found = rows(model, embedder, ids)
            tables[key] = image_table(found) if found else None
        return tables[key]

    for embedder, pairs in by_embedder.items():
        columns = [c for _, c in pairs]
        for a, b in combinations(models, 2):
            ta, tb = table(a, embedder, tuple(table1)), table(b, embedder, tuple(table1))
            if ta is None or tb is None:
                continue
            if found := compare(ta, tb, columns, settings):
                add(MODELS, (a, pooled), (b, pooled), found, embedder)
    for model in models:
        for embedder, pairs in by_embedder.items():
            columns = [c for _, c in pairs]
            for i, j in combinations(instructions, 2):
                ti, tj = table(model, embedder, (i,)), table(model, embedder, (j,))
                if ti is None or tj is None:
                    continue
                if found := compare(ti, tj, columns, settings):
                    add(INSTRUCTIONS, (model, i), (model, j), found, embedder)
    return _adjust(_in_order(records, wanted, models), settings)


def _fields(result: PairedDifference, settings: IntervalSettings) -> dict[str, Any]:
    d = result.difference
    return {
        "value_a": result.estimate_a,
        "value_b": result.estimate_b,
        "difference": d.estimate,
        "lo": d.lo,
        "hi": d.hi,
        "level": settings.level,
        "p_value": result.p_value,
        "n_images": d.n_units,
    }


def _in_order(
    records: list[dict], wanted: Sequence[tuple[str, str, str]], models: Sequence[str]
) -> list[dict]:
    """The model pairs, then each model's instruction pairs; within either, the numbers in table
    order (:func:`metric_columns`), each number's pairs in the order they were made (stable)."""
    rank = {(e, m): i for i, (e, m, _) in enumerate(wanted)}
    place = {m: i for i, m in enumerate(models)}

    def key(r: dict) -> tuple[int, int, int]:
        if r["comparison"] == MODELS:
            return (0, 0, rank[(r["embedding"], r["metric"])])
        return (1, place[r["model_a"]], rank[(r["embedding"], r["metric"])])

    return sorted(records, key=key)


def family(record: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """The Holm family of a record: (comparison, model of an instruction pair or ``""``,
    embedding, metric)."""
    model = record["model_a"] if record["comparison"] == INSTRUCTIONS else ""
    return (record["comparison"], model, record["embedding"], record["metric"])


def _adjust(records: list[dict], settings: IntervalSettings) -> list[dict]:
    """``p_holm``, ``family_size`` and ``supported`` of every record, Holm within its family."""
    families: dict[tuple, list[dict]] = {}
    for r in records:
        families.setdefault(family(r), []).append(r)
    for members in families.values():
        adjusted = holm([r["p_value"] for r in members])
        for r, p in zip(members, adjusted, strict=True):
            r["p_holm"] = None if p is None else round(p, settings.digits) + 0.0
            r["family_size"] = len(members)
            r["supported"] = p is not None and p < settings.alpha
    return records


def paired_csv(records: Sequence[Mapping[str, Any]]) -> str:
    """The CSV twin of the paired table: :data:`COLUMNS`, floats with 6 decimals, ``supported``
    as ``true`` / ``false``, an undefined number empty."""
    return csv_text(COLUMNS, records, six_decimals)
