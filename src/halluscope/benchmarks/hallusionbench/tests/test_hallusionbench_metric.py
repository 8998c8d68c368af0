"""HallusionBench's metrics and failure analysis against hand-computed numbers."""

from __future__ import annotations

import pytest

from halluscope.benchmarks.hallusionbench.analysis import NoAnalysis, attribute, failure_analysis
from halluscope.benchmarks.hallusionbench.metric import (
    Judged,
    by_split,
    figures,
    pair_accuracy,
    percent,
    question_accuracy,
    summary,
    yes_no_bias,
)


def rec(category: str, set_id: str, figure: str, question: str, visual: str, verdict: int,
        same: bool | None = None, gt: str = "1", sub: str = "chart") -> Judged:  # fmt: skip
    return Judged(category, sub, set_id, figure, question, visual, gt, verdict, same)


# Two VS pairs (figure 0 = no figure) and two VD pairs; correct: 1 1 0 | 0 1 | 1 0 | 1 1
RECORDS = [
    rec("VS", "0", "0", "0", "0", 2),  # uncertain without a figure: correct
    rec("VS", "0", "1", "0", "1", 1),
    rec("VS", "0", "2", "0", "2", 0, same=True),
    rec("VS", "0", "0", "1", "0", 0),
    rec("VS", "0", "1", "1", "1", 1),
    rec("VD", "0", "0", "0", "1", 1, sub="illusion"),
    rec("VD", "0", "1", "0", "2", 2, sub="illusion"),  # uncertain with a figure: wrong
    rec("VD", "0", "0", "1", "1", 1, sub="illusion"),
    rec("VD", "0", "1", "1", "2", 1, sub="illusion"),
]


def test_correctness_counts_uncertain_as_correct_only_without_a_figure() -> None:
    assert [r.correct for r in RECORDS] == [1, 1, 0, 0, 1, 1, 0, 1, 1]


def test_the_three_accuracies() -> None:
    assert question_accuracy(RECORDS) == 66.6667  # 6 / 9
    # figures VS_0_1 right, VS_0_2 wrong, VD_0_0 right, VD_0_1 mixed; VS figure 0 left out
    assert figures(RECORDS) == {
        "figures": 4, "correct": 50.0, "inconsistent": 25.0, "wrong": 25.0, "score": 62.5,
    }  # fmt: skip
    assert pair_accuracy(RECORDS) == 25.0  # only VD question 1 is right on every figure


def test_easy_and_hard_pairs() -> None:
    found = summary(RECORDS)
    assert found["easy"] == 75.0  # visual_input 0/1: VS q0 right, VS q1 wrong, VD q0, q1 right
    assert found["hard"] == 33.3333  # visual_input 2: VS q0 wrong, VD q0 wrong, VD q1 right
    assert (found["questions"], found["pairs"], found["figures"]) == (9, 4, 4)
    assert (found["easy_questions"], found["hard_questions"]) == (6, 3)


def test_splits_by_category_and_subcategory() -> None:
    splits = by_split(RECORDS)
    assert list(splits) == ["Overall", "VD", "VS", "VD/illusion", "VS/chart"]
    assert splits["VS"]["aAcc"] == 60.0 and splits["VS"]["qAcc"] == 0.0
    assert splits["VD"]["fAcc"] == 50.0 and splits["VD"]["qAcc"] == 50.0
    assert splits["VS"]["hard"] == 0.0 and splits["VD/illusion"] == splits["VD"]


def test_an_empty_denominator_is_none() -> None:
    only_easy = [r for r in RECORDS if r.visual_input != "2"]
    assert summary(only_easy)["hard"] is None
    assert percent(0, 0) is None


def test_yes_no_bias_as_the_reference_computes_it() -> None:
    records = [
        rec("VD", "0", "0", "0", "1", 1),
        rec("VD", "0", "1", "0", "2", 0, gt="0"),
        rec("VD", "1", "0", "0", "1", 0),
        rec("VD", "1", "1", "0", "2", 1, gt="0"),
    ]
    # read as yes: right on a yes question, wrong on a no question: 2 of 4; yes truth 2 of 4
    assert yes_no_bias(records) == {"pct_diff": 0.0, "fp_ratio": 0.5}


def test_failure_analysis_by_hand() -> None:
    found = failure_analysis(RECORDS)
    # VS q0 figure 2 wrong after an uncertain figure 0: VI; VS q1 figure 0 wrong: LH;
    # VD q0 figure 1 uncertain after a right figure 0: VI
    assert found["questions"] == {
        "LH_cg": 1, "VI_cg": 2, "Mix_cg": 0,
        "LH_percent": 33.3333, "VI_percent": 66.6667, "Mix_percent": 0.0,
    }  # fmt: skip
    assert found["pairs"] == {"LH": 1, "VI": 2, "Mix": 0, "wrong": 3, "total": 4}


@pytest.mark.parametrize(
    ("record", "original", "expected"),
    [
        (rec("VD", "0", "1", "0", "2", 0, same=True), 1, (1, 1)),  # Mixed
        (rec("VD", "0", "1", "0", "2", 0, same=False), 1, (0, 1)),
        (rec("VD", "0", "1", "0", "2", 0), 0, (0, 1)),  # no same check needed
        (rec("VD", "0", "0", "0", "1", 2), 2, (0, 1)),
        (rec("VS", "0", "1", "0", "1", 0, same=True), 0, (1, 0)),
        (rec("VS", "0", "1", "0", "1", 0, same=False), 0, (1, 1)),
        (rec("VS", "0", "1", "0", "1", 2), 0, (1, 1)),
        (rec("VS", "0", "1", "0", "1", 0), 1, (0, 1)),  # original figure: visual
        (rec("VS", "0", "2", "0", "2", 0, same=True), 1, (1, 0)),  # edited, same answer: LH
        (rec("VS", "0", "2", "0", "2", 0, same=False), 1, (0, 1)),
        (rec("VS", "0", "2", "0", "2", 1), 0, (0, 0)),
    ],
)
def test_attribution_branches(record: Judged, original: int, expected: tuple[int, int]) -> None:
    assert attribute(record, original) == expected


def test_no_analysis_without_the_same_check_or_a_figure_zero() -> None:
    with pytest.raises(NoAnalysis, match="same-answer check"):
        attribute(rec("VD", "0", "1", "0", "2", 0), 1)
    with pytest.raises(NoAnalysis, match="figure-0 question"):
        failure_analysis([r for r in RECORDS if r.figure_id != "0"])


def test_a_verdict_outside_the_reference_codes_is_refused() -> None:
    with pytest.raises(ValueError, match="expected 0, 1 or 2"):
        rec("VD", "0", "0", "0", "1", 3)
