"""The reference's failure analysis: language hallucination (LH), visual illusion (VI) or both
(Mixed), attributed per question and per question pair (``get_eval_pair_all``).

Why apart from the metric: it needs more than verdicts. Each answer is compared with the
verdict of its pair's figure-0 question (the original figure, or no figure for VS) and, in
three of its branches, with whether the two answers are the *same* (the reference asks GPT-4;
our rule judge compares the extracted yes / no, :func:`~.judge.same`). A judge without that
check gives no analysis, and a subset that holds a pair's other figures without its figure 0
gives none either (the reference stops there with a KeyError).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from halluscope.benchmarks.hallusionbench.judge import CORRECT, UNSURE, WRONG
from halluscope.benchmarks.hallusionbench.metric import Judged, percent

NOT_WRONG = (WRONG, UNSURE)


class NoAnalysis(ValueError):
    """The records do not allow the analysis; the message says why."""


def _needs_same(r: Judged) -> bool:
    if r.same is None:
        raise NoAnalysis(
            f"answer {'_'.join((*r.pair[:3], r.figure_id, r.question_id))} needs the judge's "
            "same-answer check, and the judge gave none"
        )
    return r.same


def needs_same(category: str, visual_input: str, verdict: int, original: int) -> bool:
    """Whether :func:`attribute` reads the same-answer check of an answer to a question of
    figure 1 or more, given its verdict and ``original``, its pair's figure-0 verdict.

    Why: the reference asks GPT-4 for every answer; only these branches read the reply, so the
    LLM judge asks only here and the numbers are the same for fewer calls."""
    if verdict != WRONG:
        return False
    if category == "VD":
        return original == CORRECT
    return original == WRONG or (original == CORRECT and visual_input == "2")


def attribute(r: Judged, original: int) -> tuple[int, int]:
    """(LH, VI) of one record, ``original`` being the verdict of its pair's figure-0 record
    (the reference's branches, in its order)."""
    v = r.verdict
    if r.figure_id == "0":
        if r.category == "VD":
            return (0, 1) if v in NOT_WRONG else (0, 0)
        return (1, 0) if v == WRONG else (0, 0)
    if r.category == "VD":
        if original == CORRECT and v == WRONG:
            return (1, 1) if _needs_same(r) else (0, 1)
        if v in NOT_WRONG:  # original correct and this uncertain, or original not correct
            return (0, 1)
        return (0, 0)
    if original == WRONG:
        if v == WRONG:
            return (1, 0) if _needs_same(r) else (1, 1)
        return (1, 1) if v == UNSURE else (0, 0)
    if original == UNSURE:
        return (0, 1) if v in NOT_WRONG else (0, 0)
    if v == UNSURE:
        return (0, 1)
    if v == WRONG:
        if r.visual_input == "1":
            return (0, 1)
        if r.visual_input == "2":
            return (1, 0) if _needs_same(r) else (0, 1)
        raise NoAnalysis(f"a VS answer of figure {r.figure_id} with visual_input {r.visual_input}")
    return (0, 0)


def _kind(lh: int, vi: int) -> str | None:
    if lh > 0 and vi > 0:
        return "Mix"
    if lh > 0:
        return "LH"
    return "VI" if vi > 0 else None


def failure_analysis(records: Sequence[Judged]) -> dict[str, Any]:
    """Per question (``LH_cg``, ``VI_cg``, ``Mix_cg`` and their shares in percent, as the
    reference prints them) and per wrong pair (``LH``, ``VI``, ``Mix``). Raises
    :class:`NoAnalysis` when the records do not allow it."""
    original = {r.pair: r.verdict for r in records if r.figure_id == "0"}
    per_question = {"LH": 0, "VI": 0, "Mix": 0}
    pairs: dict[Any, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # correct, n, LH, VI
    for r in records:
        if r.pair not in original:
            raise NoAnalysis(
                f"pair {'_'.join(r.pair)} has answers but none to its figure-0 question"
            )
        lh, vi = attribute(r, original[r.pair])
        if kind := _kind(lh, vi):
            per_question[kind] += 1
        sums = pairs[r.pair]
        sums[0] += r.correct
        sums[1] += 1
        sums[2] += lh
        sums[3] += vi
    per_pair = {"LH": 0, "VI": 0, "Mix": 0}
    wrong = 0
    for correct, total, lh, vi in pairs.values():
        wrong += correct != total
        if kind := _kind(lh, vi):
            per_pair[kind] += 1
    if wrong != sum(per_pair.values()):  # the reference asserts it
        raise NoAnalysis(f"{wrong} wrong pairs but {sum(per_pair.values())} attributed")
    attributed = sum(per_question.values())
    return {
        "questions": {
            **{f"{k}_cg": n for k, n in per_question.items()},
            **{f"{k}_percent": percent(n, attributed) for k, n in per_question.items()},
        },
        "pairs": {**per_pair, "wrong": wrong, "total": len(pairs)},
    }
