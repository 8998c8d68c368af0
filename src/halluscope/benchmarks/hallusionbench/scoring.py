"""Answers -> verdicts -> the result document of a run (the hand-check command's JSON).

Why one function for it: the document states the subset it scored (questions answered of the
1,129) beside every number, so a number on the 254-answer public sample is never read as a
full-benchmark number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from halluscope.benchmarks.hallusionbench import judge
from halluscope.benchmarks.hallusionbench.analysis import NoAnalysis, failure_analysis
from halluscope.benchmarks.hallusionbench.llm_judge import LLMJudge, same_word, tally, verdict_word
from halluscope.benchmarks.hallusionbench.metric import Judged, by_split, figures, yes_no_bias
from halluscope.benchmarks.hallusionbench.questions import Answer

JUDGE_RULE = "rule: VLMEvalKit yes/no extraction (halluscope.benchmarks.hallusionbench.judge)"


@dataclass(frozen=True)
class Judgments:
    """One judge's reading of an answer set: a verdict per answer, the same-answer check where
    the judge gave one (None elsewhere), the judge's name and settings, and what its replies
    said (the LLM judge's word tallies; empty for the rule judge)."""

    verdicts: Sequence[int]
    same: Sequence[bool | None]
    name: str
    settings: dict[str, Any]
    replies: dict[str, Any] = field(default_factory=dict)


def _originals(answers: Sequence[Answer]) -> dict[tuple[str, str, str, str], str]:
    """The answer to each pair's figure-0 question, by pair."""
    return {a.question.pair: a.prediction for a in answers if a.question.figure_id == "0"}


def rule_judgments(answers: Sequence[Answer]) -> Judgments:
    """Each answer's verdict by rule and whether it gives the same yes / no as the answer to
    its pair's figure-0 question (None when that question is not answered)."""
    original = _originals(answers)
    same = []
    for a in answers:
        first = original.get(a.question.pair)
        same.append(None if first is None else judge.same(a.prediction, first))
    verdicts = [judge.verdict(a.prediction, a.question.gt_answer) for a in answers]
    return Judgments(verdicts, same, JUDGE_RULE, {"kind": "rule"})


def llm_judgments(answers: Sequence[Answer], llm: LLMJudge) -> Judgments:
    """Verdicts and same-answer checks by the LLM judge (:mod:`.llm_judge`), as the reference
    asks GPT-4 for them, with the tallies of the words its replies were read from."""
    verdicts, verdict_replies = llm.verdicts(answers)
    same, same_replies = llm.same(answers, verdicts)
    replies = {
        "verdict": tally(verdict_replies, verdict_word),
        "same": tally(same_replies, same_word),
        "n_verdict_requests": len(verdict_replies),
        "n_same_requests": sum(r is not None for r in same_replies),
    }
    return Judgments(verdicts, same, llm.name, llm.settings(), replies)


def judge_answers(answers: Sequence[Answer], judgments: Judgments | None = None) -> list[Judged]:
    """The answers as judged records (by rule when ``judgments`` is None)."""
    judgments = judgments or rule_judgments(answers)
    out = []
    for a, v, same in zip(answers, judgments.verdicts, judgments.same, strict=True):
        q = a.question
        out.append(
            Judged(q.category, q.subcategory, q.set_id, q.figure_id, q.question_id,
                   q.visual_input, q.gt_answer, verdict=v, same=same)
        )  # fmt: skip
    return out


def result(
    answers: Sequence[Answer],
    n_questions: int,
    judgments: Judgments | None = None,
    records: Sequence[Judged] | None = None,
) -> dict[str, Any]:
    """The whole result of one answer set: the leaderboard's numbers, the reference's tables
    (per question, per pair easy / hard / total, per figure; VD, VS and per subcategory), the
    uncertain answers, the yes / no bias and the failure analysis. ``records``: the answers
    already judged by ``judgments`` (:func:`judge_answers`), so a caller that also needs them
    (the verdicts, the intervals) judges once."""
    judgments = judgments or rule_judgments(answers)
    records = list(records) if records is not None else judge_answers(answers, judgments)
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
        "judge": judgments.name,
        "judge_settings": judgments.settings,
        "judge_replies": judgments.replies or None,
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
