"""The rule judge (halluscope.benchmarks.hallusionbench.judge): VLMEvalKit's yes/no
extraction, its quirks included, and the reference's three verdicts."""

from __future__ import annotations

import pytest

from halluscope.benchmarks.hallusionbench.judge import (
    CORRECT,
    UNSURE,
    WRONG,
    extract,
    same,
    verdict,
    words,
)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Yes, the right orange circle appears to be the same size.", "yes"),
        (" Yes, the grey box on the right appears larger.", "yes"),
        ("No.", "no"),
        ("NO!", "no"),
        ("The answer is no", "no"),
        ("Yes and no.", "uncertain"),  # both words
        ("It is unclear from the image.", "uncertain"),  # neither
        ("Not really.", "uncertain"),  # "not" is not "no"
        ("Nope", "uncertain"),
        ("**Yes**", "uncertain"),  # * is not among the marks: the word is "**yes**"
        ("Yes: the line is longer.", "uncertain"),  # : neither
        ("'yes'", "uncertain"),  # nor the apostrophe
        ("(no)", "no"),  # brackets are
        ("maybe,no", "no"),  # a comma without a space beside it becomes a space
        ("1,000 units? maybe,no", "uncertain"),  # a digit comma: marks are deleted, "maybeno"
        ("yes.", "yes"),
        ("yes/no", "uncertain"),
    ],
)
def test_extract(answer: str, expected: str) -> None:
    assert extract(answer) == expected


def test_only_the_first_32_periods_are_deleted() -> None:
    """VLMEvalKit passes re.UNICODE (32) as re.sub's count: a 33rd period stays on its word."""
    assert extract("." * 31 + " no.") == "no"
    assert extract("." * 32 + " no.") == "uncertain"
    assert words("." * 32 + " no.") == ["no."]


def test_a_period_before_a_digit_stays() -> None:
    assert words("It is 3.5. No.") == ["it", "is", "3.5", "no"]


def test_verdicts() -> None:
    assert verdict("Yes, it is.", "1") == CORRECT
    assert verdict("Yes, it is.", "0") == WRONG
    assert verdict("No, it is not.", "0") == CORRECT
    assert verdict("No, it is not.", "1") == WRONG
    assert verdict("I cannot tell.", "1") == UNSURE
    assert verdict("I cannot tell.", "0") == UNSURE


def test_same_answer() -> None:
    assert same("Yes.", "yes, it is")
    assert same("No, it is smaller.", "no")
    assert not same("Yes.", "No.")
    assert not same("Unclear.", "I cannot say.")  # uncertain agrees with nothing
