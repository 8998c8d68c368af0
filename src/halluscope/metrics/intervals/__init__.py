"""Intervals for every number: score/exact binomial intervals, the cluster bootstrap, paired tests.

One package owns the method (``docs/statistics.md`` says which number uses which and why):

* a proportion of independent trials (one trial per unit) gets a closed-form interval, Wilson's
  score interval or the Clopper-Pearson exact one (:func:`wilson`, :func:`clopper_pearson`): they
  keep their coverage for small n and at k = 0 or k = n, where the CLT interval does not (Bowyer
  et al., ICML 2025). A proportion whose trials come in clusters (several captions or questions
  per image) gets the same interval at the *effective* sample size n / deff, deff estimated from
  the between-unit variance (Korn & Graubard 1998): :func:`proportion_interval`;
* any other statistic that is a function of per-unit sums (CHAIR_I, precision, recall, CAOS
  means and their ratios, F1, the PhD Index, per-group accuracies) gets the cluster bootstrap:
  the units (images by default) are resampled with replacement, everything a unit holds moving
  together (Miller 2024, "Adding Error Bars to Evals"): :func:`bootstrap`;
* two systems scored on the same units get a paired bootstrap interval of the difference (units
  resampled jointly) and a two-sided p-value from the swap permutation test: under the null the
  two systems' aggregates of a unit are exchangeable, so each unit's pair is swapped with
  probability 1/2 (for a difference of means this is the sign-flip test):
  :func:`paired_difference` (:func:`paired_differences`: several statistics, one set of
  resamples), :func:`compare_systems` (every pair, Holm-adjusted).

Determinism. Resample indices come from ``Generator(PCG64(seed))`` through ``integers`` (integer
arithmetic only; drawn in row blocks whose size depends on the number of units alone), so they
are the same on every machine and thread count. Every per-unit column is turned into integers
(exact counts stay as they are; fractional values become fixed point at a power-of-two scale) and
resampled sums are float64 matrix products of integers below 2**53, which are exact whatever
BLAS, CPU or thread count adds them. What follows is element-wise IEEE arithmetic, sorting and
interpolation, and results are rounded to ``digits`` decimals.
"""

from halluscope.metrics.intervals.closed import clopper_pearson, proportion_interval, wilson
from halluscope.metrics.intervals.core import (
    BINOMIAL_METHODS,
    BOOTSTRAP_METHODS,
    DEFAULT,
    PAIRED_TEST,
    Interval,
    IntervalSettings,
    Statistic,
)
from halluscope.metrics.intervals.paired import (
    PairedDifference,
    compare_systems,
    holm,
    paired_difference,
    paired_differences,
)
from halluscope.metrics.intervals.resample import (
    UnitTable,
    bootstrap,
    harmonic_mean,
    ratio,
    resample_counts,
)

__all__ = [
    "BINOMIAL_METHODS",
    "BOOTSTRAP_METHODS",
    "DEFAULT",
    "PAIRED_TEST",
    "Interval",
    "IntervalSettings",
    "PairedDifference",
    "Statistic",
    "UnitTable",
    "bootstrap",
    "clopper_pearson",
    "compare_systems",
    "harmonic_mean",
    "holm",
    "paired_difference",
    "paired_differences",
    "proportion_interval",
    "ratio",
    "resample_counts",
    "wilson",
]
