"""The intervals of the NOPE report (:func:`halluscope.benchmarks.nope.metric.score_answers`):
accuracy and NegP accuracy (shares, Wilson's interval at the effective size) and METEOR (a mean
of per-answer scores, the cluster bootstrap), per section and breakdown, the image resampled;
for the pipeline's score files and for ``halluscope nope`` alike (docs/statistics.md).
"""

from __future__ import annotations

from typing import Any


def _summary_intervals(
    rows: list[tuple[str, dict[str, Any]]], settings: Any, negp: bool
) -> dict[str, Any]:
    """Intervals of one group's accuracy, NegP accuracy (shares, Wilson) and METEOR (a mean of
    per-answer scores, the cluster bootstrap)."""
    from halluscope.hand_check_intervals import bootstrapped, proportion, share

    units = [u for u, _ in rows]
    out = {"accuracy": proportion(units, [r["exact_match"] for _, r in rows], settings)}
    if rows and "meteor" in rows[0][1]:
        columns = {"meteor": [r["meteor"] for _, r in rows], "n": [1] * len(rows)}
        out.update(bootstrapped(units, columns, {"meteor": share("meteor", "n")}, settings))
    if negp:
        out["negp_accuracy"] = proportion(units, [r["negp_answer"] for _, r in rows], settings)
    return out


def nope_intervals(
    answers: list[dict[str, Any]], units: list[str], settings: Any
) -> dict[str, Any]:
    """The intervals tree of :func:`~halluscope.benchmarks.nope.metric.score_answers`' sections
    and their breakdowns, from the per-answer rows (in input order, one per record)."""
    rows = list(zip(units, answers, strict=True))

    def section(part: list[tuple[str, dict[str, Any]]], negp: bool = False) -> dict[str, Any]:
        out = _summary_intervals(part, settings, negp)
        for key in ("question_type", "relevance"):
            values = sorted({r[key] for _, r in part if r[key] is not None})
            out[f"by_{key}"] = {
                v: _summary_intervals([(u, r) for u, r in part if r[key] == v], settings, negp)
                for v in values
            }
        return out

    return {
        "overall": section(rows),
        "negp": section([(u, r) for u, r in rows if r["is_negp"]], negp=True),
        "non_negp": section([(u, r) for u, r in rows if not r["is_negp"]]),
    }
