"""Paired differences of two systems on the same units, and every pair of a list, Holm-adjusted."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from halluscope.metrics.intervals.core import (
    DEFAULT,
    PAIRED_TEST,
    Interval,
    IntervalSettings,
    Statistic,
    _round,
)
from halluscope.metrics.intervals.resample import (
    UnitTable,
    _evaluate,
    _intervals,
    _matrix,
    _prepare,
    _resampled,
    _totals,
)


@dataclass(frozen=True)
class PairedDifference:
    """statistic(a) - statistic(b) on the same units: its paired interval and p-value."""

    estimate_a: float | None
    estimate_b: float | None
    difference: Interval
    p_value: float | None
    test: str = PAIRED_TEST

    def as_dict(self) -> dict[str, Any]:
        d = self.difference
        return {
            "estimate_a": self.estimate_a,
            "estimate_b": self.estimate_b,
            "difference": d.estimate,
            "lo": d.lo,
            "hi": d.hi,
            "level": d.level,
            "method": d.method,
            "n_units": d.n_units,
            "p_value": self.p_value,
            "test": self.test,
        }


def paired_difference(
    a: UnitTable, b: UnitTable, statistic: Statistic, settings: IntervalSettings = DEFAULT
) -> PairedDifference:
    """statistic(a) - statistic(b), units resampled jointly; p from the swap permutation test.

    The p-value is (1 + #{|d*| >= |d|}) / (1 + resamples) over ``resamples`` random swaps of the
    two systems' aggregates within units (never 0; exact under the exchangeability null).
    """
    return paired_differences(a, b, {"d": statistic}, settings)["d"]


def paired_differences(
    a: UnitTable,
    b: UnitTable,
    statistics: Mapping[str, Statistic],
    settings: IntervalSettings = DEFAULT,
) -> dict[str, PairedDifference]:
    """:func:`paired_difference` of each of ``statistics`` (name -> statistic), from one set of
    joint resamples and one set of swaps: a table's numbers compared at the cost of one."""
    (ca, cb), scale, names = _prepare([a, b])
    qa, qb = _matrix(ca, names), _matrix(cb, names)
    n = len(a.units)
    k = len(names)
    fa, fb = qa.sum(axis=0)[None, :], qb.sum(axis=0)[None, :]
    both = _resampled(np.hstack([qa, qb]), settings.resamples, settings.seed)
    flips = _resampled(qb - qa, settings.resamples, settings.seed, flips=True)
    # the totals each statistic reads: full, resampled, jackknifed and swapped, of either side
    totals = {
        "full": (_totals(fa, names, scale), _totals(fb, names, scale)),
        "boot": (_totals(both[:, :k], names, scale), _totals(both[:, k:], names, scale)),
        "jack": (_totals(fa - qa, names, scale), _totals(fb - qb, names, scale)),
        "swap": (_totals(fa + flips, names, scale), _totals(fb - flips, names, scale)),
    }
    d = settings.digits
    out = {}
    for name, statistic in statistics.items():

        def diff(which: str, statistic: Statistic = statistic) -> np.ndarray:
            ta, tb = totals[which]
            return _evaluate(statistic, ta) - _evaluate(statistic, tb)

        point_a = _evaluate(statistic, totals["full"][0])[0]
        point_b = _evaluate(statistic, totals["full"][1])[0]
        point = diff("full")
        interval = _intervals(point, diff("boot"), diff("jack"), n, settings)
        swapped = diff("swap")
        observed = abs(float(point[0]))
        p = None
        if math.isfinite(observed):
            tol = 1e-12 * max(1.0, observed)
            defined = swapped[np.isfinite(swapped)]
            extreme = np.count_nonzero(np.abs(defined) >= observed - tol)
            p = _round((1 + extreme) / (1 + len(defined)), d)
        out[name] = PairedDifference(_round(point_a, d), _round(point_b, d), interval, p)
    return out


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (family-wise error), ``None`` kept as ``None``."""
    known = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    out: list[float | None] = [None] * len(p_values)
    running, m = 0.0, len(known)
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def compare_systems(
    tables: Mapping[str, UnitTable], statistic: Statistic, settings: IntervalSettings = DEFAULT
) -> list[dict[str, Any]]:
    """Every pair (a, b), a before b in ``tables``' order, on the units both have.

    Rows: ``system_a``, ``system_b``, the fields of :meth:`PairedDifference.as_dict`,
    ``p_holm`` (Holm over all pairs of this call) and ``supported``: True when ``p_holm`` is
    below 1 - level, i.e. the data support a difference at the stated level family-wise.
    """
    rows = []
    for (name_a, ta), (name_b, tb) in combinations(tables.items(), 2):
        common = set(ta.units) & set(tb.units)
        result = paired_difference(ta.restrict(common), tb.restrict(common), statistic, settings)
        rows.append({"system_a": name_a, "system_b": name_b, **result.as_dict()})
    for row, adjusted in zip(rows, holm([r["p_value"] for r in rows]), strict=True):
        row["p_holm"] = None if adjusted is None else _round(adjusted, settings.digits)
        row["supported"] = adjusted is not None and adjusted < settings.alpha
    return rows
