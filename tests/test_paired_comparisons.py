"""Paired comparisons of a CAOS run (src/halluscope/benchmarks/caos/paired.py): every pair of
models on the pooled Table 1 instructions and every pair of one model's instructions, each
number's difference with its paired interval (the image resampled), a swap-permutation p-value
and Holm's adjustment within a family; the table (tables.paired_latex) and its CSV twin.
"""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path

import pytest
from test_caos_intervals import SCORE_NAMES, caption_rows

from halluscope.benchmarks.caos import paired
from halluscope.benchmarks.caos.paired_table import paired_latex
from halluscope.benchmarks.caos.summarize import summarize_group
from halluscope.metrics.intervals import IntervalSettings, holm

SETTINGS = IntervalSettings()


def caption(model: str, instruction: str, image: int, hallucinated: int, embedder: str = "glove"):
    """One score.py caption row: 3 MSCOCO objects, 2 mentioned ground-truth objects of 4, and
    ``hallucinated`` of the objects hallucinated (one mention each); CAOS scores where it
    hallucinates."""
    row = {"model": model, "embedder": embedder, "instruction_id": instruction}
    row |= {"image_id": str(image), "n_objects": 3, "n_mentions": 3, "n_in_domain": 3}
    row |= {"n_in_domain_mentions": 3, "n_in_domain_hallucinated_mentions": hallucinated}
    row |= {"n_hallucinated": hallucinated, "n_in_domain_hallucinated": hallucinated}
    row |= {"n_unverified": 0, "n_gt": 4, "n_gt_mentioned": 3 - hallucinated, "n_scored": 3}
    row = {k: str(v) for k, v in row.items()}
    scores = ("0.25", "0.5", "0.75", "0.5", "0.666667", "0.5") if hallucinated else ("",) * 6
    return row | {s: scores[i % 6] for i, s in enumerate(SCORE_NAMES)}


def by_metric(records, comparison: str = paired.MODELS, embedding: str = "") -> dict:
    return {
        (r["model_a"], r["model_b"], r["metric"]): r
        for r in records
        if r["comparison"] == comparison and r["embedding"] == embedding
    }


def hand_case():
    """Ten images, one caption each under i01: model A hallucinates one of three objects on
    images 0-8, B and C on none (C's captions are B's)."""
    groups = {
        (m, "glove", "i01"): [caption(m, "i01", i, int(m == "A" and i < 9)) for i in range(10)]
        for m in ("A", "B", "C")
    }
    return paired.paired_records(
        groups, models=["A", "B", "C"], instructions=["i01"], table1=["i01"],
        embedders=["glove"], settings=SETTINGS,
    )  # fmt: skip


def test_a_hand_computed_paired_case() -> None:
    """CHAIR_S: A 9/10, B 0, so A - B = 0.9; CHAIR_I: A 9 of 30 mentions, B 0, so 0.3.

    Swap test by hand: A and B differ on 9 images, and |d*| >= 0.9 only when all nine keep
    their side or all nine swap: 2 of the 2**9 patterns, p = 1/256 (2,000 random swaps: within
    0.004). Holm over the family's three pairs (A-B, A-C at 1/256, B-C at p = 1, no image
    differs): 3/256 each for the first two, below 0.05, so both are supported; B-C is not.
    The bootstrap draws A's images among B's all-zero ones, so d* is the share of A's
    hallucinating images drawn: the interval lies in [0, 1] and holds 0.9."""
    records = hand_case()
    cells = by_metric(records)
    ab = cells[("A", "B", "CHAIR_S")]
    assert (ab["value_a"], ab["value_b"], ab["difference"]) == (0.9, 0.0, 0.9)
    assert ab["p_value"] == pytest.approx(1 / 256, abs=0.004)
    assert ab["p_holm"] == pytest.approx(3 / 256, abs=0.012)
    assert 0.5 < ab["lo"] < 0.9 <= ab["hi"] <= 1.0
    assert ab["supported"] and ab["family_size"] == 3 and ab["n_images"] == 10
    assert ab["instructions_a"] == ab["instructions_b"] == "i01"
    ac = cells[("A", "C", "CHAIR_S")]
    assert ac["difference"] == 0.9 and ac["supported"]
    bc = cells[("B", "C", "CHAIR_S")]
    assert (bc["difference"], bc["lo"], bc["hi"], bc["p_value"]) == (0.0, 0.0, 0.0, 1.0)
    assert not bc["supported"]
    chair_i = cells[("A", "B", "CHAIR_I")]
    assert (chair_i["value_a"], chair_i["difference"]) == (0.3, 0.3)
    assert cells[("A", "B", "precision")]["difference"] == pytest.approx(-0.3)
    # B has no hallucinated caption: its CAOS is undefined, so is the difference
    caos = by_metric(records, embedding="glove")[("A", "B", "CAOS_avg")]
    assert (caos["value_a"], caos["value_b"], caos["difference"]) == (0.5, None, None)
    assert caos["p_value"] is None and caos["p_holm"] is None and not caos["supported"]


def random_groups():
    """Three models, three instructions, two embedders: 30 images with 2 captions each of
    random consistent counts (tests/test_caos_intervals.py's rows)."""
    groups = {}
    for seed, m in enumerate(("sim-a", "sim-b", "sim-c")):
        for i, ins in enumerate(("i01", "i02", "i03")):
            rows = caption_rows(30, 2, seed=10 * seed + i)
            for embedder in ("glove", "minilm"):
                keys = {"model": m, "embedder": embedder, "instruction_id": ins}
                groups[(m, embedder, ins)] = [r | keys for r in rows]
    return groups


def test_each_side_is_the_summary_number_and_holm_is_within_a_family() -> None:
    groups = random_groups()
    models, instructions = ["sim-a", "sim-b", "sim-c"], ["i01", "i02", "i03"]
    records = paired.paired_records(
        groups, models=models, instructions=instructions, table1=["i01", "i02"],
        embedders=["glove", "minilm"], settings=SETTINGS,
    )  # fmt: skip
    # 3 model pairs + 3 models x 3 instruction pairs, 5 general numbers + 6 CAOS per embedder
    assert len(records) == (3 + 9) * (5 + 6 * 2)
    pooled = summarize_group(groups[("sim-a", "glove", "i01")] + groups[("sim-a", "glove", "i02")])
    record = by_metric(records)[("sim-a", "sim-b", "CHAIR_S")]
    assert record["value_a"] == round(pooled["CHAIR_S"], 6)
    assert record["instructions_a"] == "i01+i02"
    assert by_metric(records)[("sim-a", "sim-b", "CHAIR_I")]["value_a"] == round(
        pooled["CHAIR_I"], 6
    )
    caos = by_metric(records, embedding="minilm")[("sim-a", "sim-c", "CAOS_T/X")]
    assert caos["value_a"] == round(pooled["CAOS_TX"], 6)
    one = summarize_group(groups[("sim-b", "glove", "i03")])
    instruction_rows = [
        r for r in records if r["comparison"] == paired.INSTRUCTIONS and r["model_a"] == "sim-b"
    ]
    found = next(
        r for r in instruction_rows if r["metric"] == "recall" and r["instructions_b"] == "i03"
    )
    assert found["value_b"] == round(one["recall"], 6) and found["model_b"] == "sim-b"
    families: dict = {}
    for r in records:
        families.setdefault(paired.family(r), []).append(r)
    assert {len(v) for v in families.values()} == {3}  # 3 model pairs; 3 instruction pairs each
    for members in families.values():
        expected = holm([r["p_value"] for r in members])
        assert [r["p_holm"] for r in members] == pytest.approx(expected, abs=1e-6)
        for r in members:
            assert r["supported"] == (r["p_holm"] is not None and r["p_holm"] < 0.05)
            if r["difference"] is not None:
                assert r["lo"] <= r["difference"] <= r["hi"], r
    # the same inputs give the same bytes; another seed other bounds
    again = paired.paired_records(
        groups, models=models, instructions=instructions, table1=["i01", "i02"],
        embedders=["glove", "minilm"], settings=SETTINGS,
    )  # fmt: skip
    assert paired.paired_csv(again) == paired.paired_csv(records)


def test_the_csv_twin_and_the_table() -> None:
    records = hand_case()
    text = paired.paired_csv(records)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0]) == paired.COLUMNS
    row = next(
        r for r in rows if (r["model_a"], r["model_b"], r["metric"]) == ("A", "B", "CHAIR_S")
    )
    assert (row["difference"], row["supported"], row["level"]) == ("0.900000", "true", "0.950000")
    assert next(r for r in rows if r["metric"] == "CAOS_avg")["difference"] == ""
    latex = paired_latex(records, ["A", "B", "C"], ["glove"], 2, False, run="x")
    lines = {line.split(" & ")[0]: line.split(" & ")[1:] for line in latex.splitlines()}
    assert r"\label{tab:x:caos-paired}" in latex
    precision, recall, objects, chair_s, chair_i, caos = lines["A $-$ B"]
    assert (precision, objects, chair_s, chair_i) == ("$-0.30^{*}$", "$0.00$", "$+0.90^{*}$",
                                                      "$+0.30^{*}$")  # fmt: skip
    assert recall.startswith("$-0.2") and caos.startswith("--")  # recall: 0.525 - 0.75
    assert lines["B $-$ C"][3] == "$0.00$"  # not supported: no star, no sign at 0
    assert "simulated" not in latex and "caos-paired-instructions" not in latex  # one instruction
    sim = paired_latex(hand_case(), ["A", "B", "C"], ["glove"], 2, True, run="x")
    assert "simulated LVLMs" in sim


def test_instruction_pairs_in_the_table() -> None:
    """One pair per model: the difference itself; several: how many pairs are supported."""
    groups = {
        ("A", "glove", ins): [caption("A", ins, i, int(ins == "i01" and i < 9)) for i in range(10)]
        for ins in ("i01", "i02")
    }
    records = paired.paired_records(
        groups, models=["A"], instructions=["i01", "i02"], table1=["i01", "i02"],
        embedders=["glove"], settings=SETTINGS,
    )  # fmt: skip
    assert {r["comparison"] for r in records} == {paired.INSTRUCTIONS}  # one model: no pair
    latex = paired_latex(records, ["A"], ["glove"], 2, False, run="x")
    assert r"\label{tab:x:caos-paired-instructions}" in latex and "i01 $-$ i02" in latex
    assert "\nA & $-0.30^{*}$ & " in latex  # precision: 2/3 on i01 vs 3/3 on i02
    many = paired.paired_records(
        random_groups(), models=["sim-a"], instructions=["i01", "i02", "i03"],
        table1=["i01", "i02"], embedders=["glove"], settings=SETTINGS,
    )  # fmt: skip
    table = paired_latex(many, ["sim-a"], ["glove"], 2, False, run="x")
    assert "\nsim-a & " in table and "/3 & " in table


def test_the_table_of_five_models_is_set_at_8_pt_or_more(tmp_path: Path) -> None:
    """The pope-captions section's paired tables (five LVLMs: ten pairs; two embedders),
    compiled with the report's preamble: none below 8 pt, none overfull."""
    from test_report_layout import PAPER_MODELS, measure, preamble, problems, table_sizes

    rng = random.Random(1)
    groups = {}
    for m in PAPER_MODELS:
        for ins in ("i01", "i02"):
            rows = [caption(m, ins, i, int(rng.random() < 0.4)) for i in range(20)]
            for embedder in ("glove", "minilm"):
                groups[(m, embedder, ins)] = [r | {"embedder": embedder} for r in rows]
    records = paired.paired_records(
        groups, models=PAPER_MODELS, instructions=["i01", "i02"], table1=["i01", "i02"],
        embedders=["glove", "minilm"], settings=IntervalSettings(resamples=200),
    )  # fmt: skip
    latex = paired_latex(records, PAPER_MODELS, ["glove", "minilm"], 2, False, run="pope-captions")
    assert latex.count(r"\begin{table}") == 2
    (tmp_path / "paired.tex").write_text(latex, encoding="utf-8")
    document = preamble() + "\\begin{document}\n\\input{paired}\n\\end{document}\n"
    (tmp_path / "doc.tex").write_text(document, encoding="utf-8")
    log = measure(tmp_path, "doc.tex", tmp_path / "out")
    assert min(table_sizes(log)) >= 8.0, table_sizes(log)
    assert problems(log) == []
