"""Settings and the result type of every interval; rounding that keeps printed digits stable."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

BOOTSTRAP_METHODS = ("bca", "percentile", "basic")
BINOMIAL_METHODS = ("wilson", "clopper-pearson")
PAIRED_TEST = "swap permutation (sign-flip), two-sided"

#: A statistic: per-unit column sums by name (arrays of one shape) -> the value(s), same shape.
Statistic = Callable[[Mapping[str, np.ndarray]], np.ndarray]


@dataclass(frozen=True)
class IntervalSettings:
    """How intervals are computed (``params.yaml`` will carry these).

    ``unit``: what one resampled unit is (the image: its captions, questions and instructions
    move together); it names the column the caller groups by, the method itself only sees
    units. ``digits``: decimals every reported value is rounded to.
    """

    level: float = 0.95
    resamples: int = 2000
    seed: int = 0
    unit: str = "image"
    method: str = "bca"
    binomial: str = "wilson"
    digits: int = 6

    def __post_init__(self) -> None:
        if not 0.5 <= self.level < 1:
            raise ValueError(f"level must be in [0.5, 1), got {self.level!r}")
        if self.resamples < 100:
            raise ValueError(f"resamples must be at least 100, got {self.resamples!r}")
        if self.method not in BOOTSTRAP_METHODS:
            raise ValueError(f"method must be one of {BOOTSTRAP_METHODS}, got {self.method!r}")
        if self.binomial not in BINOMIAL_METHODS:
            raise ValueError(f"binomial must be one of {BINOMIAL_METHODS}, got {self.binomial!r}")
        if not 1 <= self.digits <= 12:
            raise ValueError(f"digits must be in 1..12, got {self.digits!r}")

    @property
    def alpha(self) -> float:
        return 1.0 - self.level


DEFAULT = IntervalSettings()


def _round(value: Any, digits: int) -> float | None:
    """``value`` rounded to ``digits`` decimals (``-0.0`` written as ``0.0``), ``None`` if not
    finite: the printed digits are what must agree across machines."""
    value = float(value)
    return round(value, digits) + 0.0 if math.isfinite(value) else None


@dataclass(frozen=True)
class Interval:
    """A point estimate and its interval; ``None`` where undefined (e.g. no mention at all).

    ``n_undefined``: bootstrap resamples where the statistic was undefined (a zero denominator),
    left out of the quantiles.
    """

    estimate: float | None
    lo: float | None
    hi: float | None
    level: float
    method: str
    n_units: int
    n_undefined: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "lo": self.lo,
            "hi": self.hi,
            "level": self.level,
            "method": self.method,
            "n_units": self.n_units,
            "n_undefined": self.n_undefined,
        }
