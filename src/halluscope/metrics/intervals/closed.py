"""Closed-form intervals of a proportion: Wilson score, Clopper-Pearson, and both at an
effective sample size when the trials come in clusters."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import special

from halluscope.metrics.intervals.core import DEFAULT, Interval, IntervalSettings, _round


def wilson(k: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for k successes in n trials (k, n may be effective, non-integer)."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"wilson: need 0 <= k <= n and n > 0, got k={k}, n={n}")
    z = float(special.ndtri(0.5 + level / 2))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def clopper_pearson(k: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson's exact interval: quantiles of Beta(k, n-k+1) and Beta(k+1, n-k)."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"clopper_pearson: need 0 <= k <= n and n > 0, got k={k}, n={n}")
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, a))
    hi = 1.0 if k == n else float(special.betaincinv(k + 1, n - k, 1 - a))
    return lo, hi


def proportion_interval(
    successes: Sequence[float] | np.ndarray,
    trials: Sequence[float] | np.ndarray | None = None,
    settings: IntervalSettings = DEFAULT,
) -> Interval:
    """The interval of sum(successes) / sum(trials) from per-unit counts.

    One trial per unit (``trials`` None or all 1): the closed form on (k, n). Several trials per
    unit: the same closed form at the effective size n_eff = n / deff, with deff the ratio of the
    between-unit (linearised) variance to the binomial one, never below 1 (Korn & Graubard 1998),
    so that correlated captions of one image do not count as independent evidence.
    """
    y = np.asarray(successes, dtype=np.float64)
    m = np.ones_like(y) if trials is None else np.asarray(trials, dtype=np.float64)
    if y.shape != m.shape or y.ndim != 1:
        raise ValueError("proportion_interval: successes and trials must be 1-d, same length")
    if np.any(y < 0) or np.any(y > m):
        raise ValueError("proportion_interval: need 0 <= successes <= trials for every unit")
    k, n, units = float(y.sum()), float(m.sum()), len(y)
    closed = wilson if settings.binomial == "wilson" else clopper_pearson
    if n == 0:
        return Interval(None, None, None, settings.level, settings.binomial, units)
    p = k / n
    n_eff, method = n, settings.binomial
    if np.any(m != 1) and units > 1 and 0 < p < 1:
        var = units / (units - 1) * float(np.sum((y - p * m) ** 2)) / (n * n)
        n_eff = min(n, p * (1 - p) / var) if var > 0 else n
        method = f"{settings.binomial} (effective n)"
    lo, hi = closed(p * n_eff, n_eff, settings.level)
    d = settings.digits
    return Interval(_round(p, d), _round(lo, d), _round(hi, d), settings.level, method, units)
