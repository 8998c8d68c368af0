"""The intervals of the PhD Index report (:func:`halluscope.benchmarks.phd.metric.phd_report`):
overall, per mode, per task and per mode x task, for the pipeline's score files and for
``halluscope phd`` alike.

The unit resampled is the image (its yes and its no question, in every mode, move together):
the PhD Index, a harmonic mean of two recalls, by the cluster bootstrap; the recalls and the yes
ratio, shares of answers, by Wilson's interval at the effective size (docs/statistics.md).
"""

from __future__ import annotations

from typing import Any


def _scores(answers: list[Any], units: list[str], settings: Any) -> dict[str, Any]:
    """Intervals of one group's PhD Index (bootstrap), recalls and yes ratio (Wilson)."""
    from halluscope.hand_check_intervals import bootstrapped, proportion, share
    from halluscope.metrics.intervals import harmonic_mean

    yes = [(u, int(a.prediction == "yes")) for a, u in zip(answers, units, strict=True)
           if a.label == "yes"]  # fmt: skip
    no = [(u, int(a.prediction == "no")) for a, u in zip(answers, units, strict=True)
          if a.label == "no"]  # fmt: skip
    columns = {
        "hit_yes": [int(a.label == "yes" and a.prediction == "yes") for a in answers],
        "n_yes": [int(a.label == "yes") for a in answers],
        "hit_no": [int(a.label == "no" and a.prediction == "no") for a in answers],
        "n_no": [int(a.label == "no") for a in answers],
    }
    nan = float("nan")
    index = harmonic_mean(share("hit_yes", "n_yes", nan), share("hit_no", "n_no", nan))
    return {
        **bootstrapped(units, columns, {"overall": index}, settings),
        "recall_yes": proportion([u for u, _ in yes], [h for _, h in yes], settings),
        "recall_no": proportion([u for u, _ in no], [h for _, h in no], settings),
        "yes_ratio": proportion(units, [int(a.prediction == "yes") for a in answers], settings),
    }


def phd_intervals(answers: list[Any], units: list[str], settings: Any) -> dict[str, Any]:
    """The intervals tree of :func:`~halluscope.benchmarks.phd.metric.phd_report`'s numbers."""

    def scores(keep) -> dict[str, Any]:
        rows = [(a, u) for a, u in zip(answers, units, strict=True) if keep(a)]
        return _scores([a for a, _ in rows], [u for _, u in rows], settings)

    modes, tasks = sorted({a.mode for a in answers}), sorted({a.task for a in answers})
    out = scores(lambda a: True)
    out["by_mode"] = {m: scores(lambda a, m=m: a.mode == m) for m in modes}
    out["by_task"] = {t: scores(lambda a, t=t: a.task == t) for t in tasks}
    out["by_mode_task"] = {
        m: {
            t: scores(lambda a, m=m, t=t: a.mode == m and a.task == t)
            for t in tasks
            if any(a.mode == m and a.task == t for a in answers)
        }
        for m in modes
    }
    return out
