"""The interval of each Table 1 number of ``summary.csv``: ``<column>_lo`` and ``<column>_hi``.

Why per group of captions, in the summary stage: the interval resamples the unit the captions
are drawn in, the image (every caption of an image, whatever its instruction, moves with it),
and only the per-caption rows know their image. The methods are those of
:mod:`halluscope.metrics.intervals` (``docs/statistics.md``): CHAIR_S, a share of captions, gets
Wilson's score interval (at the effective sample size when an image has several captions);
every other number, a function of per-image sums, the cluster bootstrap, one set of resamples
for all of a group's numbers. The point values stay those of
:func:`halluscope.benchmarks.caos.summarize.summarize_group`; each statistic here computes the
same number from the per-image sums, so a test can hold the two together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from halluscope.metrics.intervals import (
    IntervalSettings,
    UnitTable,
    bootstrap,
    proportion_interval,
)

#: summary.csv columns given an interval (every column Table 1 can print).
PROPORTIONS = {"CHAIR_S": "any_hallucinated", "CHAIR_S_mscoco": "any_mscoco_hallucinated"}
BOOTSTRAPPED = (
    "objects_per_caption",
    "precision",
    "precision_micro",
    "precision_in_domain",
    "precision_micro_in_domain",
    "recall",
    "recall_micro",
    "CHAIR_I",
    "CAOS_T",
    "CAOS_X",
    "CAOS_K",
    "CAOS_TX",
    "CAOS_XK",
    "CAOS_avg",
    "CAOS_TX_mor",
    "CAOS_XK_mor",
    "CAOS_avg_mor",
)
INTERVAL_COLUMNS = (*PROPORTIONS, *BOOTSTRAPPED)
BOUND_COLUMNS = tuple(f"{c}_{end}" for c in INTERVAL_COLUMNS for end in ("lo", "hi"))

Totals = Mapping[str, np.ndarray]


def _share(num: str, den: str, empty: float = np.nan) -> Any:
    def stat(t: Totals) -> np.ndarray:
        d = t[den]
        return np.where(d > 0, t[num] / np.where(d > 0, d, 1.0), empty)

    return stat


def _caos_ratio(a: str, b: str) -> Any:
    mean_a, mean_b = _share(a, f"has_{a}"), _share(b, f"has_{b}")

    def stat(t: Totals) -> np.ndarray:
        x, y = mean_a(t), mean_b(t)
        return np.where(y != 0, x / np.where(y != 0, y, 1.0), np.nan)

    return stat


def _caos_avg(t: Totals) -> np.ndarray:
    return sum(_share(s, f"has_{s}")(t) for s in ("CAOS_T", "CAOS_X", "CAOS_K")) / 3


#: each bootstrapped column as a statistic of the per-image sums of :func:`_columns`; an empty
#: denominator is undefined (no caption with a mention, say), as the summary's None is; CHAIR_I
#: of no mention is 0, as the reference (and the summary) give it
STATISTICS = {
    "objects_per_caption": _share("n_objects", "one"),
    "precision": _share("precision_value", "precision_has"),
    "precision_micro": _share("genuine", "verified"),
    "precision_in_domain": _share("in_domain_value", "in_domain_has"),
    "precision_micro_in_domain": _share("in_domain_genuine", "n_in_domain"),
    "recall": _share("recall_value", "recall_has"),
    "recall_micro": _share("n_gt_mentioned", "n_gt"),
    "CHAIR_I": _share("n_in_domain_hallucinated_mentions", "n_in_domain_mentions", 0.0),
    "CAOS_T": _share("CAOS_T", "has_CAOS_T"),
    "CAOS_X": _share("CAOS_X", "has_CAOS_X"),
    "CAOS_K": _share("CAOS_K", "has_CAOS_K"),
    "CAOS_TX": _caos_ratio("CAOS_T", "CAOS_X"),
    "CAOS_XK": _caos_ratio("CAOS_X", "CAOS_K"),
    "CAOS_avg": _caos_avg,
    # the ratio table's second view: the mean over captions of each caption's own ratio
    **{f"{c}_mor": _share(f"{c}_mor", f"has_{c}_mor") for c in ("CAOS_TX", "CAOS_XK", "CAOS_avg")},
}


def _value(text: str | None) -> float | None:
    try:
        value = float(text) if text not in (None, "") else None
    except ValueError:
        return None
    return None if value is None or np.isnan(value) else value


#: the per-caption counts of score.py's rows that :func:`_columns` reads
COUNTS = (
    "n_objects",
    "n_unverified",
    "n_hallucinated",
    "n_in_domain",
    "n_in_domain_hallucinated",
    "n_gt",
    "n_gt_mentioned",
    "n_in_domain_mentions",
    "n_in_domain_hallucinated_mentions",
)


def _ratio_where(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den per caption, 0 where den is 0 (the caption then has no value: ``has`` 0)."""
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def _columns(rows: Sequence[Mapping[str, str]]) -> dict[str, np.ndarray]:
    """Per-caption columns whose per-image sums the statistics read, one array each: read a
    column at a time (at paper scale the rows, not the resamples, are the cost)."""

    def count(name: str) -> np.ndarray:
        try:
            return np.array([int(r[name]) for r in rows], dtype=np.float64)
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"caption rows: column {name!r} must hold integer counts") from None

    n = {name: count(name) for name in COUNTS}
    verified = n["n_objects"] - n["n_unverified"]
    genuine = verified - n["n_hallucinated"]
    in_domain_genuine = n["n_in_domain"] - n["n_in_domain_hallucinated"]
    out = {
        "one": np.ones(len(rows)),
        **{k: n[k] for k in ("n_objects", "n_in_domain", "n_gt", "n_gt_mentioned")},
        **{k: n[k] for k in ("n_in_domain_mentions", "n_in_domain_hallucinated_mentions")},
        "verified": verified,
        "genuine": genuine,
        "precision_value": _ratio_where(genuine, verified),
        "precision_has": (verified > 0).astype(np.float64),
        "in_domain_genuine": in_domain_genuine,
        "in_domain_value": _ratio_where(in_domain_genuine, n["n_in_domain"]),
        "in_domain_has": (n["n_in_domain"] > 0).astype(np.float64),
        "recall_value": _ratio_where(n["n_gt_mentioned"], n["n_gt"]),
        "recall_has": (n["n_gt"] > 0).astype(np.float64),
        "any_hallucinated": (n["n_hallucinated"] > 0).astype(np.float64),
        "any_mscoco_hallucinated": (n["n_in_domain_hallucinated"] > 0).astype(np.float64),
    }
    for score in ("CAOS_T", "CAOS_X", "CAOS_K", "CAOS_TX", "CAOS_XK", "CAOS_avg"):
        value = _scores([r.get(score) for r in rows])
        name = score if score in ("CAOS_T", "CAOS_X", "CAOS_K") else f"{score}_mor"
        out[f"has_{name}"] = (~np.isnan(value)).astype(np.float64)
        out[name] = np.where(np.isnan(value), 0.0, value)
    return out


def _scores(texts: list[str | None]) -> np.ndarray:
    """A score column as floats, NaN where a caption has none (empty, ``nan`` or not a
    number, as :func:`_value` reads it); the usual column of numbers and blanks read at once."""
    try:
        return np.array([float(t) if t else np.nan for t in texts], dtype=np.float64)
    except (TypeError, ValueError):
        return np.array([np.nan if (v := _value(t)) is None else v for t in texts])


def summary_intervals(
    rows: Sequence[Mapping[str, str]], settings: IntervalSettings
) -> dict[str, float | None]:
    """``{<column>_lo, <column>_hi}`` of every :data:`INTERVAL_COLUMNS` over one group's caption
    rows (each with its ``image_id``); ``None`` where the number is undefined."""
    return grouped_intervals({None: rows}, settings)[None]


def grouped_intervals(
    groups: Mapping[Any, Sequence[Mapping[str, str]]],
    settings: IntervalSettings,
    means: Mapping[Any, Sequence[Any]] | None = None,
) -> dict[Any, dict[str, float | None]]:
    """:func:`summary_intervals` of every group, each caption row read once: the summary puts a
    row in several groups (its instruction's, the pooled Table 1 instructions', all), and at
    paper scale reading the rows costs more than resampling them.

    ``means``: ``{key: [group keys]}``, Table 2's numbers over those groups (one per single
    instruction) for each key: :data:`TABLE2_BOUNDS` (:func:`_mean_over_groups`)."""
    position: dict[int, int] = {}
    unique: list[Mapping[str, str]] = []
    for rows in groups.values():
        for row in rows:
            if id(row) not in position:
                position[id(row)] = len(unique)
                unique.append(row)
    columns = _columns(unique) if unique else {}
    out: dict[Any, dict[str, float | None]] = {}
    for key, rows in groups.items():
        if not rows:
            out[key] = dict.fromkeys(BOUND_COLUMNS)
            continue
        index = np.fromiter((position[id(r)] for r in rows), dtype=np.int64, count=len(rows))
        units = [str(r["image_id"]) for r in rows]
        table = UnitTable.from_rows(units, {k: v[index] for k, v in columns.items()})
        out[key] = _bounds_of(table, settings)
    for key, members in (means or {}).items():
        parts = [(g, np.fromiter((position[id(r)] for r in groups[g]), dtype=np.int64))
                 for g in members if groups.get(g)]  # fmt: skip
        out[key] = _mean_over_groups(parts, [groups[g] for g, _ in parts], columns, settings)
    return out


#: Table 2's numbers: CAOS_T, X, K averaged over the single instructions (each counts once),
#: and T/X, X/K, avg of those means (:func:`halluscope.benchmarks.caos.tables.table2_records`)
TABLE2_COLUMNS = ("CAOS_T", "CAOS_X", "CAOS_K", "CAOS_TX", "CAOS_XK", "CAOS_avg")
TABLE2_BOUNDS = tuple(
    f"instructions_mean_{c}_{end}" for c in TABLE2_COLUMNS for end in ("lo", "hi")
)


def _mean_over_groups(
    parts: Sequence[tuple[Any, np.ndarray]],
    rows: Sequence[Sequence[Mapping[str, str]]],
    columns: Mapping[str, np.ndarray],
    settings: IntervalSettings,
) -> dict[str, float | None]:
    """Table 2's bounds: the image resampled with its captions of every instruction at once (an
    image's captions under several instructions are not independent); an instruction without
    a value in a resample is left out of that resample's mean, as Table 2 leaves it out."""
    if not parts:
        return dict.fromkeys(TABLE2_BOUNDS)
    units: list[str] = []
    cols: dict[str, list[np.ndarray]] = {}
    for n, ((_, index), group_rows) in enumerate(zip(parts, rows, strict=True)):
        units.extend(str(r["image_id"]) for r in group_rows)
        for score in ("CAOS_T", "CAOS_X", "CAOS_K"):
            for name in (score, f"has_{score}"):
                for m in range(len(parts)):
                    values = columns[name][index] if m == n else np.zeros(len(index))
                    cols.setdefault(f"{m}:{name}", []).append(values)
    table = UnitTable.from_rows(units, {k: np.concatenate(v) for k, v in cols.items()})

    def mean(score: str) -> Any:
        shares = [_share(f"{m}:{score}", f"{m}:has_{score}") for m in range(len(parts))]

        def stat(t: Totals) -> np.ndarray:
            values = np.stack([f(t) for f in shares])
            finite = np.isfinite(values)
            count = finite.sum(axis=0)
            total = np.where(finite, values, 0.0).sum(axis=0)
            return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)

        return stat

    t, x, k = mean("CAOS_T"), mean("CAOS_X"), mean("CAOS_K")

    def over(a: Any, b: Any) -> Any:
        def stat(tot: Totals) -> np.ndarray:
            u, v = a(tot), b(tot)
            return np.where(v != 0, u / np.where(v != 0, v, 1.0), np.nan)

        return stat

    statistics = {
        "CAOS_T": t,
        "CAOS_X": x,
        "CAOS_K": k,
        "CAOS_TX": over(t, x),
        "CAOS_XK": over(x, k),
        "CAOS_avg": lambda tot: (t(tot) + x(tot) + k(tot)) / 3,
    }
    found = bootstrap(table, statistics, settings)
    out: dict[str, float | None] = {}
    for c in TABLE2_COLUMNS:
        out[f"instructions_mean_{c}_lo"], out[f"instructions_mean_{c}_hi"] = (
            found[c].lo,
            found[c].hi,
        )
    return out


def _bounds_of(table: UnitTable, settings: IntervalSettings) -> dict[str, float | None]:
    """The bounds of every interval column of one group's per-image sums."""
    out: dict[str, float | None] = {}
    for column, success in PROPORTIONS.items():
        interval = proportion_interval(table.columns[success], table.columns["one"], settings)
        out[f"{column}_lo"], out[f"{column}_hi"] = interval.lo, interval.hi
    found = bootstrap(table, STATISTICS, settings)
    for column in BOOTSTRAPPED:
        out[f"{column}_lo"], out[f"{column}_hi"] = found[column].lo, found[column].hi
    return {c: out[c] for c in BOUND_COLUMNS}


def caption_mean_intervals(
    objects: Any, columns: Sequence[str], settings: IntervalSettings
) -> dict[tuple[str, str], dict[str, tuple[float | None, float | None]]]:
    """The interval of each per-object column's CAOS aggregation (the mean over captions of each
    caption's object mean, :func:`halluscope.report.caption_then_mean`) per (model, embedder),
    the image resampled with every caption of it: ``{(model, embedder): {column: (lo, hi)}}``.

    ``objects``: objects.csv's rows as a DataFrame (``model``, ``embedder``,
    ``instruction_id``, ``image_id`` and ``columns``); one set of resamples for all columns."""
    import pandas as pd

    from halluscope.report import CAPTION_KEYS

    values = objects[list(CAPTION_KEYS)].assign(
        **{c: pd.to_numeric(objects[c], errors="coerce") for c in columns}
    )
    per_caption = values.groupby(list(CAPTION_KEYS), sort=True)[list(columns)].mean()
    out: dict[tuple[str, str], dict[str, tuple[float | None, float | None]]] = {}
    for (model, embedder), captions in per_caption.groupby(level=["model", "embedder"]):
        units = [str(u) for u in captions.index.get_level_values("image_id")]
        cols: dict[str, np.ndarray] = {}
        for c in columns:
            v = captions[c].to_numpy(dtype=np.float64)
            cols[c], cols[f"has_{c}"] = np.nan_to_num(v), (~np.isnan(v)).astype(np.float64)
        table = UnitTable.from_rows(units, cols)
        found = bootstrap(table, {c: _share(c, f"has_{c}") for c in columns}, settings)
        out[(str(model), str(embedder))] = {c: (found[c].lo, found[c].hi) for c in columns}
    return out
