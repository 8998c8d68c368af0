"""Pooled Table 1 quantities of stages/summarize.py, by hand on three captions."""

from __future__ import annotations

import pytest

from halluscope.metrics.caos import SCORES
from halluscope.stages.summarize import COUNT_COLUMNS, summarize_group


def row(**counts: int) -> dict[str, str]:
    base = dict.fromkeys(COUNT_COLUMNS, 0)
    base.update(counts)
    return {**{k: str(v) for k, v in base.items()}, **dict.fromkeys(SCORES, "")}


def test_summary_by_hand() -> None:
    rows = [
        # "a dog, a dog and a frisbee; a kite": 4 mentions, 3 names, kite hallucinated
        row(n_objects=4, n_unique_objects=3, n_in_domain=4, n_hallucinated=1,
            n_in_domain_hallucinated=1, n_gt=3, n_gt_mentioned=2),
        # "a cat on a surfboard": out-of-domain surfboard unverified
        row(n_objects=2, n_unique_objects=2, n_in_domain=1, n_unverified=1, n_gt=1,
            n_gt_mentioned=1),
        row(n_objects=0, n_gt=2),
    ]  # fmt: skip
    s = summarize_group(rows)
    assert s["objects_per_caption"] == pytest.approx(6 / 3)
    assert s["unique_objects_per_caption"] == pytest.approx(5 / 3)
    assert s["precision"] == pytest.approx((5 - 1) / 5)  # the unverified object left out
    assert s["recall"] == pytest.approx(3 / 6)
    assert s["CHAIR_S"] == pytest.approx(1 / 3)
    assert s["CHAIR_I"] == pytest.approx(1 / 5)
    assert s["n_unverified"] == 1
