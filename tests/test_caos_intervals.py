"""The intervals of summary.csv (halluscope.benchmarks.caos.intervals): each statistic computes
the summary's own number from the per-image sums, the interval holds it, CHAIR_S is Wilson's
interval when each image has one caption, and the bytes do not depend on the run."""

from __future__ import annotations

import random

import pytest

from halluscope.benchmarks.caos.intervals import (
    BOOTSTRAPPED,
    PROPORTIONS,
    STATISTICS,
    _columns,
    grouped_intervals,
    summary_intervals,
)
from halluscope.benchmarks.caos.summarize import summarize_group
from halluscope.metrics.intervals import IntervalSettings, UnitTable, bootstrap, wilson

SETTINGS = IntervalSettings(resamples=500)


def caption_rows(n_images: int, per_image: int, seed: int = 1) -> list[dict[str, str]]:
    """Score-file rows with consistent counts (as score.py writes them), some with no
    hallucination (CAOS undefined), some with no object at all."""
    rng = random.Random(seed)
    rows = []
    for image in range(n_images):
        for _ in range(per_image):
            n_in_domain = rng.randint(0, 5)
            n_ood = rng.randint(0, 2)
            n_unverified = rng.randint(0, n_ood)
            in_domain_hallucinated = rng.randint(0, n_in_domain)
            rejected = rng.randint(0, n_ood - n_unverified)
            hallucinated = in_domain_hallucinated + rejected
            mentions = n_in_domain + rng.randint(0, 2)
            n_gt = rng.randint(0, 4)
            row = {
                "image_id": f"img{image}",
                "n_objects": n_in_domain + n_ood,
                "n_mentions": mentions + n_ood,
                "n_in_domain": n_in_domain,
                "n_in_domain_mentions": mentions,
                "n_in_domain_hallucinated_mentions": min(mentions, in_domain_hallucinated),
                "n_hallucinated": hallucinated,
                "n_in_domain_hallucinated": in_domain_hallucinated,
                "n_unverified": n_unverified,
                "n_gt": n_gt,
                "n_gt_mentioned": rng.randint(0, n_gt),
                "n_scored": hallucinated,
            }
            caos = {s: f"{rng.random():.6f}" if hallucinated else "" for s in SCORE_NAMES}
            rows.append({k: str(v) for k, v in row.items()} | caos)
    return rows


SCORE_NAMES = ("CAOS_T", "CAOS_X", "CAOS_K", "CAOS_TX", "CAOS_XK", "CAOS_avg")
for _bound in ("present", "absent"):
    SCORE_NAMES += tuple(f"{s}_if_{_bound}" for s in SCORE_NAMES[:6])


@pytest.mark.parametrize("per_image", [1, 3])
def test_each_statistic_is_the_summarys_number(per_image: int) -> None:
    rows = caption_rows(40, per_image)
    summary = summarize_group(rows)
    table = UnitTable.from_rows([r["image_id"] for r in rows], _columns(rows))
    found = bootstrap(table, STATISTICS, SETTINGS)
    for column in BOOTSTRAPPED:
        expected = summary[column]
        estimate = found[column].estimate
        if expected is None:
            assert estimate is None, column
        else:
            assert estimate == pytest.approx(expected, abs=2e-6), column


@pytest.mark.parametrize("per_image", [1, 3])
def test_every_interval_holds_its_number(per_image: int) -> None:
    rows = caption_rows(60, per_image, seed=per_image)
    summary = summarize_group(rows)
    bounds = summary_intervals(rows, SETTINGS)
    for column in (*PROPORTIONS, *BOOTSTRAPPED):
        lo, hi = bounds[f"{column}_lo"], bounds[f"{column}_hi"]
        assert lo is not None and hi is not None and lo < hi, column
        assert lo - 1e-6 <= summary[column] <= hi + 1e-6, (column, lo, summary[column], hi)


def test_chair_s_with_one_caption_per_image_is_wilsons_interval() -> None:
    rows = caption_rows(50, 1)
    k = sum(int(r["n_hallucinated"]) > 0 for r in rows)
    lo, hi = wilson(k, len(rows), 0.95)
    bounds = summary_intervals(rows, SETTINGS)
    assert bounds["CHAIR_S_lo"] == pytest.approx(lo, abs=1e-6)
    assert bounds["CHAIR_S_hi"] == pytest.approx(hi, abs=1e-6)


def test_a_higher_level_is_wider_and_a_run_repeats_itself() -> None:
    rows = caption_rows(30, 2)
    narrow = summary_intervals(rows, IntervalSettings(level=0.8, resamples=500))
    wide = summary_intervals(rows, IntervalSettings(level=0.99, resamples=500))
    for column in ("CHAIR_S", "CHAIR_I", "precision", "CAOS_avg"):
        assert wide[f"{column}_lo"] < narrow[f"{column}_lo"], column
        assert wide[f"{column}_hi"] > narrow[f"{column}_hi"], column
    shuffled = rows[::-1]  # the same captions in another order: the same bounds
    assert summary_intervals(shuffled, SETTINGS) == summary_intervals(rows, SETTINGS)
    assert summary_intervals([], SETTINGS) == dict.fromkeys(summary_intervals([], SETTINGS))


def test_groups_sharing_rows_get_each_groups_own_bounds() -> None:
    """The summary stage reads each caption row once for all its groups: every group's bounds
    are those of the group alone, a row in several groups counted in each."""
    rows = caption_rows(30, 2, seed=5)
    groups = {"first": rows[:20], "all": rows, "last": rows[40:], "none": []}
    found = grouped_intervals(groups, SETTINGS)
    assert found == {key: summary_intervals(group, SETTINGS) for key, group in groups.items()}
    assert found["first"] != found["all"]


def test_table2_bounds_hold_its_means_over_instructions() -> None:
    """Table 2 averages CAOS over the single instructions; its interval resamples each image
    with its captions of every instruction. With one instruction it is that instruction's own
    interval; with three, each bound holds the mean of the instructions' numbers (and T/X the
    ratio of those means)."""
    from halluscope.benchmarks.caos.intervals import TABLE2_COLUMNS

    groups = {f"i{n}": caption_rows(30, 1, seed=10 + n) for n in range(3)}
    found = grouped_intervals(groups, SETTINGS, means={"one": ["i0"], "three": list(groups)})
    for column in ("CAOS_T", "CAOS_X", "CAOS_K", "CAOS_TX", "CAOS_avg"):
        for end in ("lo", "hi"):
            assert found["one"][f"instructions_mean_{column}_{end}"] == pytest.approx(
                found["i0"][f"{column}_{end}"], abs=1e-6
            ), (column, end)
    summaries = [summarize_group(rows) for rows in groups.values()]
    means = {s: sum(x[s] for x in summaries) / 3 for s in ("CAOS_T", "CAOS_X", "CAOS_K")}
    expected = {**means, "CAOS_TX": means["CAOS_T"] / means["CAOS_X"],
                "CAOS_XK": means["CAOS_X"] / means["CAOS_K"],
                "CAOS_avg": sum(means.values()) / 3}  # fmt: skip
    for column in TABLE2_COLUMNS:
        lo, hi = (found["three"][f"instructions_mean_{column}_{end}"] for end in ("lo", "hi"))
        assert lo <= expected[column] <= hi, (column, lo, expected[column], hi)
