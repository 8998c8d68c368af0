"""Tri-HE and PhD on their released question files (profiles trihe-gqa and phd-ccs).

The images (GQA, PhD CCS) are not on these machines; the simulated LVLMs answer from the answer
keys with errors injected at known rates, so the whole DAG (data -> questions -> answers ->
triplets -> judges -> tables and figures) runs on the real question sets and scene graphs, and
the measured rates can be compared with what was injected.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pipeline_helpers import ROOT, copy_project, merged_params, snakemake

from halluscope import determinism
from halluscope.config import validate
from halluscope.io import read_jsonl
from halluscope.models.sim import resolve_preset

SHARED = ROOT.parent / "shared" / "data"
TRIHE = SHARED / "trihe" / "tri-he.json"
PHD_CCS = SHARED / "phd" / "data_ccs.json"
needs_shared = pytest.mark.skipif(
    not (TRIHE.is_file() and PHD_CCS.is_file()), reason=f"reference data {SHARED} is absent"
)
SIMS = ("sim-precise", "sim-verbose", "sim-frequent")


def test_real_profiles_validate() -> None:
    for profile in ("trihe-gqa", "phd-ccs"):
        config = merged_params(profile)
        validate(config, source=profile)
        assert config["caos"]["enabled"] is False


def run_profile(tmp: Path, profile: str, extra: dict | None = None) -> Path:
    """Run the profile's whole DAG in a fresh copy (``extra`` overlays the profile)."""
    project = copy_project(tmp / "project")
    overlay = project / "overlay.yaml"
    overlay.write_text(yaml.safe_dump(extra or {}), encoding="utf-8")
    snakemake(
        project,
        "--cores",
        "2",
        "--configfile",
        f"config/profiles/{profile}.yaml",
        "overlay.yaml",
        "--",
        "results/tables/",
        "all",
    )
    return project


@needs_shared
@pytest.mark.slow
def test_phd_ccs_profile_whole_dag(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HALLUSCOPE_DATA_MIRROR", str(SHARED))
    project = run_profile(tmp_path, "phd-ccs")
    prompts = read_jsonl(project / "results/phd/phd-ccs/prompts.jsonl")
    assert len(prompts) == 2 * 753  # a yes and a no question per released record
    assert {p["mode"] for p in prompts} == {"ccs"}
    assert len({p["id"] for p in prompts}) == len(prompts)
    models = merged_params("phd-ccs")["models"]
    for model in SIMS:
        scores = json.loads((project / f"results/phd/phd-ccs/{model}/scores.json").read_text())
        bias = resolve_preset(models[model]["preset"], models[model].get("overrides"))["yes_bias"]
        # 753 no-questions: the no-recall follows 1 - yes_bias within sampling error
        assert abs(scores["recall_no"] - (1 - bias)) < 0.06, (model, scores["recall_no"], bias)
        assert scores["by_mode"]["ccs"]["overall"] == pytest.approx(scores["overall"])
    table = (project / "results/tables/phd-ccs/phd_table.tex").read_text(encoding="utf-8")
    assert "released counter-common-sense questions" in table
    assert "demo images" not in table
    assert not (project / "results/tables/phd-ccs/caos_table1.tex").exists()  # caos.enabled: false
    assert (project / "results/figures/phd-ccs/phd_heatmap.png").stat().st_size > 0


@needs_shared
@pytest.mark.slow
def test_trihe_gqa_profile_whole_dag_recovers_injected_errors(tmp_path: Path, monkeypatch) -> None:
    """The judges' recall on real scene graphs, under the library-chosen kernels.

    Why not the pinned ones: this test asserts rates with a tolerance, which do not depend on the
    low bits that pinning fixes, while MiniLM under the pin (MKL's COMPATIBLE path) encodes about
    4.7 times slower here (1,280 texts: 31.8 against 6.8 CPU s). The pinned judge stage runs
    in the demo build, whose bytes are checked against the committed dvc.lock."""
    monkeypatch.setenv("HALLUSCOPE_DATA_MIRROR", str(SHARED))
    for name in determinism.KERNEL_ENV:  # set in this process by `import halluscope`
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(determinism.NATIVE_ENV, "1")
    project = run_profile(tmp_path, "trihe-gqa", {"data": {"limit": 60}})
    items = read_jsonl(project / "results/data/trihe-gqa/items.jsonl")
    assert len(items) == 60 and all(item["image"] is None for item in items)
    assert all(item["relations"] for item in items)  # the released scene graphs
    questions = read_jsonl(project / "results/trihe/trihe-gqa/questions.jsonl")
    assert {q["image_id"] for q in questions} == {item["image_id"] for item in items}
    assert len({q["question_id"] for q in questions}) == len(questions)
    for model in SIMS:
        scores = json.loads((project / f"results/trihe/trihe-gqa/{model}/scores.json").read_text())
        injected = scores["injected"]
        slots = scores["judges"]["slots"]
        # The relation-aware judge finds the injected errors on real scene graphs: its
        # hallucinated-triplet count is within 5 points of the injected share of triplets
        measured = slots["n_hallucinated"] / slots["n_triplets"]
        truth = (injected["object_errors"] + injected["relation_errors"]) / injected["triplets"]
        assert abs(measured - truth) < 0.05, (model, measured, truth)
        # the released similarity judge never flags more than slots does here
        assert scores["judges"]["similarity"]["n_hallucinated"] <= slots["n_hallucinated"]
    table = (project / "results/tables/trihe-gqa/trihe_table.tex").read_text(encoding="utf-8")
    assert "released questions and scene graphs" in table
    assert not (project / "results/tables/trihe-gqa/caos_table1.tex").exists()
