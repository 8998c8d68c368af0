"""Answers -> verdicts -> the result document of a run (the hand-check command's JSON).

Why one function for it: the document states the subset it scored (questions answered of the
1,129) beside every number, so a number on the 254-answer public sample is never read as a
full-benchmark number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from halluscope.benchmarks.hallusionbench import judge
from halluscope.benchmarks.hallusionbench.analysis import NoAnalysis, failure_analysis
from halluscope.benchmarks.hallusionbench.metric import Judged, by_split, figures, yes_no_bias
from halluscope.benchmarks.hallusionbench.questions import Answer

JUDGE_RULE = "rule: VLMEvalKit yes/no extraction (halluscope.benchmarks.hallusionbench.judge)"


def judge_answers(answers: Sequence[Answer]) -> list[Judged]:
    """Each answer's verdict by rule and whether it gives the same yes / no as the answer to
    its pair's figure-0 question (None when that question is not answered)."""
    original = {
        (a.question.category, a.question.subcategory, a.question.set_id, a.question.question_id):
        a.prediction
        for a in answers
        if a.question.figure_id == "0"
    }  # fmt: skip
    out = []
    for a in answers:
        q = a.question
        first = original.get((q.category, q.subcategory, q.set_id, q.question_id))
        out.append(
            Judged(
                q.category,
                q.subcategory,
                q.set_id,
                q.figure_id,
                q.question_id,
                q.visual_input,
                q.gt_answer,
                verdict=judge.verdict(a.prediction, q.gt_answer),
                same=None if first is None else judge.same(a.prediction, first),
            )  # fmt: skip
        )
    return out


def result(answers: Sequence[Answer], n_questions: int) -> dict[str, Any]:
    """The whole result of one answer set: the leaderboard's numbers, the reference's tables
    (per question, per pair easy / hard / total, per figure; VD, VS and per subcategory), the
    uncertain answers, the yes / no bias and the failure analysis."""
    records = judge_answers(answers)
    splits = by_split(records)
    overall = splits["Overall"]
    try:
        analysis: dict[str, Any] | None = failure_analysis(records)
        why_not = None
    except NoAnalysis as err:
        analysis, why_not = None, str(err)
    uncertain = [r for r in records if r.verdict == judge.UNSURE]
    return {
        "aAcc": overall["aAcc"],
        "fAcc": overall["fAcc"],
        "qAcc": overall["qAcc"],
        "easy_aAcc": overall["easy"],
        "hard_aAcc": overall["hard"],
        "n_scored": len(records),
        "n_questions": n_questions,
        "subset": f"{len(records)} of {n_questions} questions",
        "n_uncertain": len(uncertain),
        "n_uncertain_counted_correct": sum(r.no_figure for r in uncertain),
        "n_stale_visual_input": sum(a.stale_visual_input is not None for a in answers),
        "judge": JUDGE_RULE,
        "splits": splits,
        "per_figure": {
            name: figures([r for r in records if name == "Overall" or r.category == name])
            for name in ("Overall", "VD", "VS")
            if name in splits
        },
        "yes_no_bias": yes_no_bias(records),
        "failure_analysis": analysis,
        "failure_analysis_unavailable": why_not,
    }
