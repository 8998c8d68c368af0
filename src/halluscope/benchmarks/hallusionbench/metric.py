"""HallusionBench's metrics, as the reference's ``utils.py`` and ``evaluation.py`` define them.

Pure: judged records in, numbers out. Definitions (the reference's names in brackets):

- a record is *correct* when its verdict is correct, or, for a VS question of figure 0 (no
  figure: the text-only question), when it is correct or uncertain (``assign_correctness``);
- aAcc: correct records / records (``get_eval_all``);
- fAcc: figures all of whose records are correct / figures, a figure being (category,
  subcategory, set_id, figure_id) and VS figure 0 (no figure) left out (``get_eval_fig``);
- qAcc: question pairs all of whose records are correct / pairs, a pair being (category,
  subcategory, set_id, question_id): one question asked across the figures of its set, the
  text-only VS question included (``get_eval_pair_all``);
- easy / hard: qAcc over the records with ``visual_input`` other than 2 / equal to 2 only
  (``get_eval_pair_easy`` / ``_hard``; printed as "easy aAcc" / "hard aAcc" but per pair);
- VD / VS: the same functions on one category's records; per subcategory likewise (the
  reference's commented ``data = [i for i in data if i["subcategory"] == ...]``).

Percentages are ``round(100 * correct / total, 4)``, as the reference prints them; a share
whose denominator is empty (a subset without hard pairs) is None where the reference would
divide by zero.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from halluscope.benchmarks.hallusionbench.judge import CORRECT, UNSURE, WRONG


@dataclass(frozen=True)
class Judged:
    """One judged answer: the question's fields, the verdict (0 wrong, 1 correct, 2 uncertain)
    and, for the failure analysis, whether it gives the same answer as the pair's figure-0
    question (None when the judge has no such check)."""

    category: str
    subcategory: str
    set_id: str
    figure_id: str
    question_id: str
    visual_input: str
    gt_answer: str
    verdict: int
    same: bool | None = None

    def __post_init__(self) -> None:
        if self.verdict not in (WRONG, CORRECT, UNSURE):
            raise ValueError(f"verdict {self.verdict!r}; expected 0, 1 or 2")

    @property
    def no_figure(self) -> bool:
        return self.category == "VS" and self.figure_id == "0"

    @property
    def correct(self) -> int:
        """``assign_correctness``: an uncertain answer without a figure counts as correct."""
        if self.no_figure:
            return int(self.verdict in (CORRECT, UNSURE))
        return int(self.verdict == CORRECT)

    @property
    def pair(self) -> tuple[str, str, str, str]:
        return (self.category, self.subcategory, self.set_id, self.question_id)

    @property
    def figure(self) -> tuple[str, str, str, str]:
        return (self.category, self.subcategory, self.set_id, self.figure_id)


def percent(correct: int, total: int) -> float | None:
    """A share as the reference prints it: ``round(100 * correct / total, 4)``."""
    return round(100 * correct / total, 4) if total else None


def _all_correct(records: Iterable[Judged], group: Callable[[Judged], Any]) -> tuple[int, int]:
    """(groups all of whose records are correct, groups)."""
    sums: dict[Any, list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        sums[group(r)][0] += r.correct
        sums[group(r)][1] += 1
    return sum(c == t for c, t in sums.values()), len(sums)


def question_accuracy(records: Sequence[Judged]) -> float | None:
    """aAcc."""
    return percent(sum(r.correct for r in records), len(records))


def pair_accuracy(records: Sequence[Judged]) -> float | None:
    """qAcc."""
    return percent(*_all_correct(records, lambda r: r.pair))


def figures(records: Sequence[Judged]) -> dict[str, Any]:
    """The consistency test (``get_eval_fig``): figures all right, all wrong, mixed, and the
    mean share of right answers per figure; VS figure 0 left out."""
    sums: dict[Any, list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        if not r.no_figure:
            sums[r.figure][0] += r.correct
            sums[r.figure][1] += 1
    total = len(sums)
    correct = sum(c == t for c, t in sums.values())
    wrong = sum(c == 0 for c, t in sums.values() if c != t)
    score = sum(c / t for c, t in sums.values()) / total if total else None
    return {
        "figures": total,
        "correct": percent(correct, total),
        "inconsistent": percent(total - correct - wrong, total),
        "wrong": percent(wrong, total),
        "score": round(100 * score, 4) if score is not None else None,
    }


def figure_accuracy(records: Sequence[Judged]) -> float | None:
    """fAcc."""
    return figures(records)["correct"]


def easy(records: Sequence[Judged]) -> list[Judged]:
    return [r for r in records if r.visual_input != "2"]


def hard(records: Sequence[Judged]) -> list[Judged]:
    return [r for r in records if r.visual_input == "2"]


def summary(records: Sequence[Judged]) -> dict[str, Any]:
    """aAcc, fAcc, qAcc, easy and hard qAcc and the counts behind them, of one subset."""
    return {
        "aAcc": question_accuracy(records),
        "fAcc": figure_accuracy(records),
        "qAcc": pair_accuracy(records),
        "easy": pair_accuracy(easy(records)),
        "hard": pair_accuracy(hard(records)),
        "questions": len(records),
        "pairs": len({r.pair for r in records}),
        "figures": len({r.figure for r in records if not r.no_figure}),
        "easy_questions": len(easy(records)),
        "hard_questions": len(hard(records)),
    }


def yes_no_bias(records: Sequence[Judged]) -> dict[str, float | None]:
    """``yes_ratio_stats`` as the reference computes it (fractions, unrounded): ``pct_diff``,
    the share of answers read as yes (correct on a yes question or not correct on a no
    question) minus the share of yes questions; ``fp_ratio``, the share of no questions among
    the records not correct."""
    if not records:
        return {"pct_diff": None, "fp_ratio": None}
    said_yes = [int(r.correct == int(r.gt_answer)) for r in records]
    yes_truth = [int(r.gt_answer) for r in records]
    wrong = [int(r.gt_answer) for r in records if r.correct == 0]
    return {
        "pct_diff": sum(said_yes) / len(said_yes) - sum(yes_truth) / len(yes_truth),
        "fp_ratio": (len(wrong) - sum(wrong)) / len(wrong) if wrong else None,
    }


def by_split(records: Sequence[Judged]) -> dict[str, dict[str, Any]]:
    """:func:`summary` of all records, of VD and VS, and of each ``<category>/<subcategory>``."""
    out = {"Overall": summary(records)}
    for category in ("VD", "VS"):
        subset = [r for r in records if r.category == category]
        if subset:
            out[category] = summary(subset)
    for category, subcategory in sorted({(r.category, r.subcategory) for r in records}):
        subset = [r for r in records if (r.category, r.subcategory) == (category, subcategory)]
        out[f"{category}/{subcategory}"] = summary(subset)
    return out
