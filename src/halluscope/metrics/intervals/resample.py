"""The cluster bootstrap: per-unit tables, seeded resample counts, exact sums, the bounds."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

from halluscope.metrics.intervals.core import (
    DEFAULT,
    Interval,
    IntervalSettings,
    Statistic,
    _round,
)

_EXACT = 2.0**52  # integers below this add exactly in float64, in any order
_BLOCK = 1 << 22  # resample indices are drawn in blocks of about this many (rows = _BLOCK // n)
_CACHE = 1 << 24  # draws of tables up to this many (resamples x units) are kept for reuse


@dataclass(frozen=True)
class UnitTable:
    """Per-unit sums of named columns, units in a fixed (sorted) order.

    Build it from rows with :meth:`from_rows` (e.g. one row per caption, ``unit`` its image id)
    or directly from per-unit values (e.g. Tri-HE's per-image mean). Two tables with the same
    ``units`` can be compared pairwise.
    """

    units: tuple[Hashable, ...]
    columns: Mapping[str, np.ndarray]

    def __post_init__(self) -> None:
        cols = {}
        for name, values in self.columns.items():
            v = np.asarray(values, dtype=np.float64)
            if v.shape != (len(self.units),):
                raise ValueError(f"column {name!r}: {v.shape} values for {len(self.units)} units")
            if not np.all(np.isfinite(v)):
                raise ValueError(f"column {name!r}: non-finite values")
            v.setflags(write=False)
            cols[name] = v
        if not cols or not self.units:
            raise ValueError("UnitTable: need at least one unit and one column")
        object.__setattr__(self, "columns", cols)

    @classmethod
    def from_rows(
        cls, unit_ids: Sequence[Hashable], columns: Mapping[str, Sequence[float] | np.ndarray]
    ) -> UnitTable:
        """Sum each column's row values by unit (units sorted, so the order is data-defined)."""
        units = sorted(set(unit_ids), key=lambda u: (type(u).__name__, u))
        index = {u: i for i, u in enumerate(units)}
        codes = np.fromiter((index[u] for u in unit_ids), dtype=np.int64, count=len(unit_ids))
        sums = {}
        for name, values in columns.items():
            v = np.asarray(values, dtype=np.float64)
            if v.shape != codes.shape:
                raise ValueError(f"column {name!r}: {len(v)} values for {len(codes)} rows")
            sums[name] = np.bincount(codes, weights=v, minlength=len(units))
        return cls(tuple(units), sums)

    def restrict(self, units: Iterable[Hashable]) -> UnitTable:
        """The table on ``units`` only (in this table's order), e.g. the units two systems share."""
        keep = set(units)
        rows = [i for i, u in enumerate(self.units) if u in keep]
        return UnitTable(
            tuple(self.units[i] for i in rows), {k: v[rows] for k, v in self.columns.items()}
        )


def _fixed_point(columns: Sequence[np.ndarray], n: int) -> tuple[list[np.ndarray], float]:
    """Integer-valued float64 copies of ``columns`` and the one power-of-two scale they share.

    Chosen so that any resampled sum (at most n draws, or a swapped difference) stays below
    2**52 and hence exact in float64.
    """
    top = max(float(np.max(np.abs(c))) for c in columns)
    bound = 2 * n * max(top, 1.0)
    if all(np.all(c == np.round(c)) for c in columns):
        if bound >= _EXACT:
            raise ValueError("counts too large for exact resampled sums")
        return [np.asarray(c) for c in columns], 1.0
    bits = min(40, math.floor(math.log2(_EXACT / bound)) - 1)
    if bits < 16:
        raise ValueError("values too large for exact resampled sums")
    scale = 2.0**bits
    return [np.round(c * scale) for c in columns], scale


def _stream(seed: int, stream: int) -> np.random.Generator:
    bits = np.random.PCG64(seed)
    return np.random.Generator(bits.jumped(stream) if stream else bits)


def _blocks(n: int, resamples: int, seed: int, flips: bool) -> Iterator[np.ndarray]:
    """The (rows, n) blocks of draw counts (or 0/1 swaps), float64; block rows depend on n only,
    so the stream of indices is the same whatever the caller does with them."""
    rng = _stream(seed, 1 if flips else 0)
    rows = max(1, _BLOCK // n)
    for start in range(0, resamples, rows):
        size = min(rows, resamples - start)
        if flips:
            yield rng.integers(0, 2, size=(size, n), dtype=np.int64).astype(np.float64)
            continue
        idx = rng.integers(0, n, size=(size, n), dtype=np.int64)
        idx += (np.arange(size, dtype=np.int64) * n)[:, None]
        yield np.bincount(idx.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)


@lru_cache(maxsize=4)
def _cached(n: int, resamples: int, seed: int, flips: bool) -> np.ndarray:
    out = np.concatenate(list(_blocks(n, resamples, seed, flips)))
    out.setflags(write=False)
    return out


def _resampled(q: np.ndarray, resamples: int, seed: int, flips: bool = False) -> np.ndarray:
    """(resamples, k) sums of the integer-valued columns ``q`` (n, k) under each resample.

    Exact (integers below 2**52), so BLAS may add them in any order. The draws of a small table
    are kept (cells on the same units reuse them); a large one is streamed block by block.
    """
    n = q.shape[0]
    if n * resamples <= _CACHE:
        return _cached(n, resamples, seed, flips) @ q
    return np.concatenate([block @ q for block in _blocks(n, resamples, seed, flips)])


def resample_counts(n: int, resamples: int, seed: int) -> np.ndarray:
    """(resamples, n): how often each unit is drawn in each bootstrap resample (rows sum to n).

    The same for every table on ``n`` units, so cells stay consistent and two systems on the
    same units are resampled jointly by construction.
    """
    if n < 1:
        raise ValueError("resample_counts: need at least one unit")
    return np.concatenate(list(_blocks(n, resamples, seed, False)))


def _evaluate(statistic: Statistic, totals: Mapping[str, np.ndarray]) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.asarray(statistic(totals), dtype=np.float64)
    return np.broadcast_to(out, next(iter(totals.values())).shape).astype(np.float64)


def _bounds(
    theta: float, boot: np.ndarray, jack: np.ndarray, settings: IntervalSettings, method: str
) -> tuple[float, float]:
    """Percentile, basic or BCa bounds from the finite resampled values ``boot``."""
    a = settings.alpha / 2
    if method == "percentile":
        lo, hi = np.quantile(boot, [a, 1 - a])
    elif method == "basic":
        q_lo, q_hi = np.quantile(boot, [a, 1 - a])
        lo, hi = 2 * theta - q_hi, 2 * theta - q_lo
    else:  # BCa (Efron 1987): bias from the share below theta (ties half), skew from jackknife
        below = (np.count_nonzero(boot < theta) + 0.5 * np.count_nonzero(boot == theta)) / len(boot)
        below = min(max(below, 0.5 / len(boot)), 1 - 0.5 / len(boot))
        z0 = float(special.ndtri(below))
        jack = jack[np.isfinite(jack)]
        d = jack.mean() - jack if len(jack) else np.zeros(1)
        den = 6.0 * float(np.sum(d * d)) ** 1.5
        acc = float(np.sum(d**3)) / den if den > 0 else 0.0
        levels = []
        for z in special.ndtri([a, 1 - a]):
            shifted = z0 + (z0 + z) / (1 - acc * (z0 + z))
            levels.append(float(special.ndtr(shifted)))
        lo, hi = np.quantile(boot, levels)
    return float(lo), float(hi)


def _intervals(
    point: np.ndarray,
    boot: np.ndarray,
    jack: np.ndarray,
    n: int,
    settings: IntervalSettings,
) -> Interval:
    theta = float(point[0])
    finite = boot[np.isfinite(boot)]
    undefined = len(boot) - len(finite)
    d, method = settings.digits, settings.method
    if not math.isfinite(theta) or len(finite) < len(boot) / 2:
        return Interval(_round(theta, d), None, None, settings.level, method, n, undefined)
    lo, hi = _bounds(theta, finite, jack, settings, method)
    return Interval(
        _round(theta, d), _round(lo, d), _round(hi, d), settings.level, method, n, undefined
    )


def _prepare(tables: Sequence[UnitTable]) -> tuple[list[dict[str, np.ndarray]], float, list[str]]:
    """Each table's columns as integers in one shared fixed point (same names, same scale)."""
    names = sorted(tables[0].columns)
    for t in tables[1:]:
        if sorted(t.columns) != names:
            raise ValueError("tables to compare must have the same columns")
        if t.units != tables[0].units:
            raise ValueError("tables to compare must have the same units (see UnitTable.restrict)")
    flat = [t.columns[c] for t in tables for c in names]
    fixed, scale = _fixed_point(flat, len(tables[0].units))
    k = len(names)
    return (
        [dict(zip(names, fixed[i * k : (i + 1) * k], strict=True)) for i in range(len(tables))],
        scale,
        names,
    )


def _matrix(cols: Mapping[str, np.ndarray], names: list[str]) -> np.ndarray:
    return np.column_stack([cols[c] for c in names])


def _totals(matrix: np.ndarray, names: list[str], scale: float) -> dict[str, np.ndarray]:
    return {c: matrix[..., j] / scale for j, c in enumerate(names)}


def bootstrap(
    table: UnitTable,
    statistics: Mapping[str, Statistic],
    settings: IntervalSettings = DEFAULT,
) -> dict[str, Interval]:
    """The cluster-bootstrap interval of each statistic of the table's per-unit sums.

    ``statistics`` maps a name to a vectorised function of the column totals, e.g.
    ``{"CHAIR_I": ratio("n_hallucinated", "n_mentions")}``. One set of resamples serves them all.
    """
    (cols,), scale, names = _prepare([table])
    q = _matrix(cols, names)
    n = len(table.units)
    full = q.sum(axis=0)
    point = _totals(full[None, :], names, scale)
    boot = _totals(_resampled(q, settings.resamples, settings.seed), names, scale)
    jack = _totals(full[None, :] - q, names, scale)
    return {
        name: _intervals(
            _evaluate(stat, point), _evaluate(stat, boot), _evaluate(stat, jack), n, settings
        )
        for name, stat in statistics.items()
    }


def ratio(numerator: str, denominator: str) -> Statistic:
    """sum(numerator) / sum(denominator): CHAIR_I, precision, recall, a pooled mean."""
    return lambda t: t[numerator] / t[denominator]


def harmonic_mean(x: Statistic, y: Statistic) -> Statistic:
    """2xy / (x + y), 0 when both are 0: F1 of precision and recall, the PhD Index."""

    def stat(t: Mapping[str, np.ndarray]) -> np.ndarray:
        a, b = x(t), y(t)
        return np.where((a == 0) & (b == 0), 0.0, 2 * a * b / (a + b))

    return stat
