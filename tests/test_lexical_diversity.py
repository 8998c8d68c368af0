"""MATTR, MTLD and HD-D against values computed by hand from the published definitions."""

from __future__ import annotations

import json
import random
from math import comb

import pytest

from halluscope.benchmarks.nope.lexical_diversity import (
    hdd,
    lexical_diversity,
    mattr,
    mtld,
    tokenize,
    ttr,
)
from halluscope.cli import main


def test_tokenize_follows_lexicalrichness_defaults():
    # lower case, digits and dashes removed, punctuation -> space
    assert tokenize("Where's the T-shirt? 2 dogs, ok.") == [
        "where",
        "s",
        "the",
        "tshirt",
        "dogs",
        "ok",
    ]


def test_ttr():
    assert ttr("a b a c".split()) == 3 / 4
    with pytest.raises(ValueError):
        ttr([])


def test_mattr_by_hand():
    tokens = "a b a b c".split()
    # windows of 3: (a b a) 2/3, (b a b) 2/3, (a b c) 3/3
    assert mattr(tokens, 3) == pytest.approx((2 / 3 + 2 / 3 + 1) / 3)
    # windows of 2 are all two distinct tokens
    assert mattr(tokens, 2) == 1.0
    # one window = the plain TTR; window 1 is always 1
    assert mattr(tokens, 5) == pytest.approx(3 / 5)
    assert mattr(tokens, 1) == 1.0
    with pytest.raises(ValueError, match="at least window=6"):
        mattr(tokens, 6)
    with pytest.raises(ValueError):
        mattr(tokens, 0)


def test_mattr_running_counts_equal_the_naive_definition():
    rng = random.Random(3)
    tokens = [rng.choice("abcdefghij") for _ in range(300)]
    for window in (1, 7, 50, 300):
        naive = [len(set(tokens[i : i + window])) / window for i in range(300 - window + 1)]
        assert mattr(tokens, window) == pytest.approx(sum(naive) / len(naive))


def test_mtld_repeated_sequence():
    # "a b a": TTR 1, 1, 2/3 <= 0.72 -> a factor every 3 tokens; 12 tokens = 4 full factors
    assert mtld("a b".split() * 6) == pytest.approx(3.0)
    # one leftover "a" has TTR 1: partial factor (1 - 1) / 0.28 = 0 -> 13 / 4 either way
    assert mtld(("a b " * 6 + "a").split()) == pytest.approx(13 / 4)
    # "a a": TTR 1/2 -> factor every 2 tokens
    assert mtld(["a"] * 4) == pytest.approx(2.0)


def test_mtld_partial_factor():
    # "a b c a": TTR 1, 1, 1, 3/4 (> 0.72): no full factor; partial (1 - 0.75) / (1 - 0.72)
    expected = 4 / ((1 - 0.75) / (1 - 0.72))
    assert expected == pytest.approx(4.48)
    assert mtld("a b c a".split()) == pytest.approx(expected)


def test_mtld_is_the_mean_of_both_directions():
    # forward "a a b c": (a a) factor, then "b c" TTR 1 -> 4 / 1 = 4
    # backward "c b a a": TTR 1, 1, 1, 3/4 -> partial 0.25 / 0.28 -> 4 * 0.28 / 0.25 = 4.48
    assert mtld("a a b c".split()) == pytest.approx((4 + 4.48) / 2)


def test_mtld_without_any_factor_is_the_text_length():
    assert mtld("a b c d e".split()) == 5.0
    assert mtld("a b c d e".split(), threshold=0.5) == 5.0
    with pytest.raises(ValueError):
        mtld([])


def test_hdd_by_hand():
    # N = 4 tokens "a a b c", samples of 2 without replacement (C(4, 2) = 6 samples):
    # P(no a) = C(2,2)/6 = 1/6, P(no b) = P(no c) = C(3,2)/6 = 1/2
    expected = ((1 - 1 / 6) + (1 - 1 / 2) + (1 - 1 / 2)) / 2
    assert expected == pytest.approx(11 / 12)
    assert hdd("a a b c".split(), sample_size=2) == pytest.approx(expected)


def test_hdd_distinct_tokens_and_default_sample():
    # every type drawn with probability n / N, contributing 1 / N: the sum is 1
    tokens = [f"w{i}" for i in range(60)]
    assert hdd(tokens) == pytest.approx(1.0)
    # a two-type text of 42 tokens: both types are in the one possible sample
    assert hdd(["a", "b"] * 21) == pytest.approx(2 / 42)
    # 84 tokens: P(type with f=42 missing from a 42-sample) = C(42,42) / C(84,42)
    tokens = ["a", "b"] * 42
    p_missing = 1 / comb(84, 42)
    assert hdd(tokens) == pytest.approx(2 * (1 - p_missing) / 42)
    with pytest.raises(ValueError, match="at least sample_size=42"):
        hdd(tokens[:41])


def test_lexical_diversity_summary():
    short = lexical_diversity("what is the color of the cup".split())
    assert short["mattr"] is None and short["hdd"] is None
    assert set(short["undefined"]) == {"mattr", "hdd"}
    assert short["mtld"] is not None and short["average"] is None
    tokens = ("a b c d e f g h " * 10).split()
    full = lexical_diversity(tokens, window=8, sample_size=42)
    assert full["mattr"] == 1.0
    assert full["average"] == pytest.approx((full["mattr"] + full["mtld"] + full["hdd"]) / 3)


def test_lexdiv_command(tmp_path):
    questions = tmp_path / "q.jsonl"
    rows = [
        {"question": "What is the color of the cup?", "relevance": "unrelated", "valid": True},
        {"question": "Where is the spoon located?", "relevance": "closely_related", "valid": True},
        {"question": "Ignored because invalid?", "relevance": "unrelated", "valid": False},
    ]
    questions.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "out.json"
    args = ["lexdiv", "--questions", str(questions), "--out", str(out)]
    assert main([*args, "--group-by", "relevance", "--window", "5"]) == 0
    report = json.loads(out.read_text())
    assert report["dropped_invalid"] == 1
    assert report["overall"]["questions"] == 2
    assert report["overall"]["tokens"] == 12
    assert report["overall"]["mattr"] is not None and report["overall"]["hdd"] is None
    assert set(report["groups"]["relevance"]) == {"closely_related", "unrelated"}

    questions.write_text(json.dumps(rows[0]) + "\n" + json.dumps({"text": "x"}) + "\n")
    assert main(args) == 2
    questions.write_text(json.dumps(rows[0]) + "\n{oops\n")
    assert main(args) == 2


def test_lexdiv_command_errors_name_file_and_line(tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "ok?"}\n\n{"question": 3}\n')
    assert main(["lexdiv", "--questions", str(questions), "--out", str(tmp_path / "o")]) == 2
    assert f"{questions}:3:" in capsys.readouterr().err
