"""Pooled Table 1 quantities of benchmarks/caos/summarize.py, by hand on three captions."""

from __future__ import annotations

import pytest

from halluscope.benchmarks.caos.metric import SCORES
from halluscope.benchmarks.caos.score import BOUND_SCORES
from halluscope.benchmarks.caos.summarize import COUNT_COLUMNS, summarize_group


def row(**counts: int) -> dict[str, str]:
    base = dict.fromkeys(COUNT_COLUMNS, 0)
    base.update(counts)
    return {**{k: str(v) for k, v in base.items()}, **dict.fromkeys((*SCORES, *BOUND_SCORES), "")}


def test_summary_by_hand() -> None:
    rows = [
        # "a dog, a dog and a frisbee; a kite": 4 mentions, 3 distinct, kite hallucinated
        row(n_objects=3, n_mentions=4, n_in_domain_mentions=4,
            n_in_domain_hallucinated_mentions=1, n_hallucinated=1, n_in_domain_hallucinated=1,
            n_gt=3, n_gt_mentioned=2),
        # "a cat on a surfboard": out-of-domain surfboard unverified
        row(n_objects=2, n_mentions=2, n_in_domain_mentions=1, n_unverified=1, n_gt=1,
            n_gt_mentioned=1),
        row(n_objects=0, n_gt=2),
    ]  # fmt: skip
    s = summarize_group(rows)
    assert s["objects_per_caption"] == pytest.approx(5 / 3)  # distinct objects
    assert s["mentions_per_caption"] == pytest.approx(6 / 3)
    # per-caption precision over captions with a verified object: 2/3 and 1/1
    assert s["precision"] == pytest.approx((2 / 3 + 1) / 2)
    assert s["precision_micro"] == pytest.approx((4 - 1) / 4)
    assert s["precision_if_present"] == pytest.approx((2 / 3 + 2 / 2) / 2)
    assert s["precision_if_absent"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    # per-caption recall: 2/3, 1/1, 0/2
    assert s["recall"] == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert s["recall_micro"] == pytest.approx(3 / 6)
    assert s["CHAIR_S"] == pytest.approx(1 / 3)
    assert s["CHAIR_S_if_absent"] == pytest.approx(2 / 3)
    assert s["CHAIR_I"] == pytest.approx(1 / 5)  # mentions, as the reference CHAIR
    assert s["n_unverified"] == 1
