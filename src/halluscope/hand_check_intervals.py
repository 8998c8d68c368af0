"""The intervals of a hand-check command's headline numbers: its options, how an interval is
written into its JSON, and the two ways one is computed (:mod:`halluscope.metrics.intervals`).

Why a module of its own, beside :mod:`halluscope.hand_check`: the pipeline's stages import
``hand_check`` (its bytes are a dependency of every stage in ``dvc.lock``), and no stage needs
intervals of a hand-checked file. Only the hand-check commands import this module.

The JSON shape, the same for every command (``docs/hand-check.md``): the document keeps every
key and value it had, and gains ``"intervals"``, a tree that mirrors the document: the interval
of the number at ``doc[a][b]`` is ``doc["intervals"][a][b]``, ``{"lo", "hi", "level",
"method", "unit", "n_units"}``; and ``"interval_settings"``, the settings they were computed
with. ``--no-intervals`` leaves both out, giving the document as it was before.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from halluscope.io import InputError

if TYPE_CHECKING:  # NumPy and SciPy are imported when an interval is computed, not for --help
    import numpy as np

    from halluscope.metrics.intervals import Interval, IntervalSettings

Totals = Mapping[str, "np.ndarray"]


def add_interval_options(parser: argparse.ArgumentParser) -> None:
    """``--level``, ``--resamples``, ``--seed`` and ``--no-intervals``, in one group."""
    group = parser.add_argument_group("intervals (docs/statistics.md)")
    group.add_argument(
        "--level", type=float, default=0.95, help="confidence level of every interval (0.95)"
    )
    group.add_argument(
        "--resamples", type=int, default=2000, help="cluster-bootstrap resamples (2000)"
    )
    group.add_argument("--seed", type=int, default=0, help="seed of the resamples (0)")
    group.add_argument(
        "--no-intervals",
        action="store_true",
        help="leave the intervals out (the JSON without its 'intervals' block)",
    )


def interval_settings(args: argparse.Namespace, unit: str) -> IntervalSettings | None:
    """The settings of ``--level`` / ``--resamples`` / ``--seed``; None under ``--no-intervals``.
    A bad value is an input error naming its flag."""
    from halluscope.metrics.intervals import IntervalSettings

    if args.no_intervals:
        return None
    if args.seed < 0:
        raise InputError(f"--seed: expected a non-negative integer, got {args.seed}")
    for flag, name in (("--level", "level"), ("--resamples", "resamples")):
        try:
            IntervalSettings(**{name: getattr(args, name)})
        except ValueError as err:
            raise InputError(f"{flag}: {err}") from None
    return IntervalSettings(level=args.level, resamples=args.resamples, seed=args.seed, unit=unit)


def entry(interval: Interval, unit: str, scale: float = 1.0) -> dict[str, Any]:
    """An interval as the JSON gives it; ``scale`` 100 for a number printed in percent."""

    def scaled(value: float | None) -> float | None:
        return None if value is None else round(value * scale, 6) + 0.0

    return {
        "lo": scaled(interval.lo),
        "hi": scaled(interval.hi),
        "level": interval.level,
        "method": interval.method,
        "unit": unit,
        "n_units": interval.n_units,
    }


def proportion(
    units: Sequence[Hashable],
    successes: Sequence[float],
    settings: IntervalSettings,
    scale: float = 1.0,
) -> dict[str, Any]:
    """The closed-form interval of a share of trials (one row per trial, ``units`` its unit):
    Wilson at (k, n) with one trial per unit, at the effective n when units hold several."""
    import numpy as np

    from halluscope.metrics.intervals import Interval, UnitTable, proportion_interval

    if not units:
        empty = Interval(None, None, None, settings.level, settings.binomial, 0)
        return entry(empty, settings.unit)
    table = UnitTable.from_rows(units, {"k": successes, "n": np.ones(len(units))})
    interval = proportion_interval(table.columns["k"], table.columns["n"], settings)
    return entry(interval, settings.unit, scale)


def bootstrapped(
    units: Sequence[Hashable],
    columns: Mapping[str, Sequence[float]],
    statistics: Mapping[str, Callable[[Totals], np.ndarray]],
    settings: IntervalSettings,
    scale: float = 1.0,
) -> dict[str, dict[str, Any]]:
    """The cluster-bootstrap interval of each statistic of the per-unit sums of ``columns``
    (one value per row, ``units`` each row's unit); one set of resamples for them all."""
    from halluscope.metrics.intervals import Interval, UnitTable, bootstrap

    if not units:
        empty = Interval(None, None, None, settings.level, settings.method, 0)
        return {name: entry(empty, settings.unit) for name in statistics}
    table = UnitTable.from_rows(units, columns)
    found = bootstrap(table, statistics, settings)
    return {name: entry(found[name], settings.unit, scale) for name in statistics}


def share(numerator: str, denominator: str, empty: float = 0.0) -> Callable[[Totals], np.ndarray]:
    """sum(numerator) / sum(denominator), ``empty`` (0 by the metrics' convention, NaN for an
    undefined value) where the denominator is 0."""

    import numpy as np

    def stat(t: Totals) -> np.ndarray:
        den = t[denominator]
        return np.where(den > 0, t[numerator] / np.where(den > 0, den, 1.0), empty)

    return stat


def attach(doc: dict[str, Any], intervals: dict[str, Any], settings: IntervalSettings) -> None:
    """Add the ``intervals`` tree and the ``interval_settings`` to a command's document."""
    doc["intervals"] = intervals
    doc["interval_settings"] = {
        "level": settings.level,
        "resamples": settings.resamples,
        "seed": settings.seed,
        "unit": settings.unit,
        "bootstrap": settings.method,
        "binomial": settings.binomial,
        "doc": "docs/statistics.md",
    }


def bracket(interval: Mapping[str, Any] | None, digits: int = 3, suffix: str = "") -> str:
    """`` [lo, hi]`` for a summary line, after the number it belongs to ('' when none)."""
    if not interval or interval.get("lo") is None or interval.get("hi") is None:
        return ""
    return f" [{interval['lo']:.{digits}f}{suffix}, {interval['hi']:.{digits}f}{suffix}]"
