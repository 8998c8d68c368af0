"""HallusionBench's intervals, the one method of the score stage and ``halluscope hallusionbench``.

The resampled unit is the question set (category, subcategory, set_id): a set's figures and its
question pairs lie inside it, so aAcc, fAcc, qAcc and the easy / hard qAcc are functions of
per-set sums and resampling sets keeps every figure and pair whole (docs/statistics.md).
"""

from __future__ import annotations

from typing import Any

#: What one resampled unit is, as the intervals' settings name it.
UNIT = "question set"


def _split_intervals(records: list[Any], settings: Any) -> dict[str, Any]:
    """aAcc, fAcc, qAcc, easy and hard (percent) of one split, the question set (category,
    subcategory, set_id) resampled: its figures and question pairs lie inside it, so every
    number is a function of per-set sums. aAcc, a share of questions: Wilson at the effective
    n; the all-correct shares of figures and pairs: the cluster bootstrap."""
    from halluscope.benchmarks.hallusionbench.metric import easy, hard
    from halluscope.hand_check_intervals import bootstrapped, proportion, share

    units: list[Any] = []
    columns: dict[str, list[int]] = {k: [] for k in ("f", "nf", "q", "nq", "e", "ne", "h", "nh")}

    def groups(subset: list[Any], key: Any, ok: str, n: str) -> None:
        sums: dict[Any, list[int]] = {}
        for r in subset:
            total = sums.setdefault(key(r), [0, 0])
            total[0] += r.correct
            total[1] += 1
        for group, (correct, count) in sums.items():
            units.append(group[:3])
            for name in columns:
                columns[name].append(int(correct == count) if name == ok else int(name == n))

    groups([r for r in records if not r.no_figure], lambda r: r.figure, "f", "nf")
    groups(records, lambda r: r.pair, "q", "nq")
    groups(easy(records), lambda r: r.pair, "e", "ne")
    groups(hard(records), lambda r: r.pair, "h", "nh")
    nan = float("nan")
    statistics = {
        name: (lambda t, ok=ok, n=n: 100 * share(ok, n, nan)(t))
        for name, ok, n in (("fAcc", "f", "nf"), ("qAcc", "q", "nq"), ("easy", "e", "ne"),
                            ("hard", "h", "nh"))
    }  # fmt: skip
    sets = [(r.category, r.subcategory, r.set_id) for r in records]
    return {
        "aAcc": proportion(sets, [r.correct for r in records], settings, scale=100),
        **bootstrapped(units, columns, statistics, settings, scale=1),
    }


def hallusionbench_intervals(records: list[Any], splits: dict[str, Any], settings: Any) -> Any:
    """The intervals tree: the headline numbers (the Overall split's) and every split's."""
    by_split = {}
    for name in splits:
        if name == "Overall":
            subset = records
        elif "/" in name:
            subset = [r for r in records if f"{r.category}/{r.subcategory}" == name]
        else:
            subset = [r for r in records if r.category == name]
        by_split[name] = _split_intervals(subset, settings)
    top = by_split["Overall"]
    return {
        **{key: top[key] for key in ("aAcc", "fAcc", "qAcc")},
        "easy_aAcc": top["easy"],
        "hard_aAcc": top["hard"],
        "splits": by_split,
    }
