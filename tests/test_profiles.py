"""The other profiles validate and their DAGs resolve (dry runs: no model is loaded), in a fresh
copy of the project so that results of earlier runs in the working tree cannot hide jobs."""

from __future__ import annotations

from pathlib import Path

import pytest
from pipeline_helpers import ROOT, copy_project, merged_params, snakemake

from halluscope.config import validate


def test_profiles_validate() -> None:
    """Every overlay in config/profiles/ validates (a new profile cannot be forgotten)."""
    profiles = sorted(p.stem for p in (ROOT / "config/profiles").glob("*.yaml"))
    assert {"pope-captions", "paper", "trihe-gqa", "phd-ccs", "pope-captions-llm500"} <= set(
        profiles
    )
    for profile in profiles:
        validate(merged_params(profile), source=profile)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    return copy_project(tmp_path_factory.mktemp("profiles") / "halluscope")


def test_paper_profile_dag_resolves_with_gpu_resources(fresh: Path) -> None:
    proc = snakemake(
        fresh,
        "-n",
        "--cores",
        "8",
        "--configfile=config/profiles/paper.yaml",
        "--rerun-triggers",
        "input",
        "--",
        "results/tables/",
    )
    text = proc.stdout + proc.stderr
    assert "generate" in text and "oracle" in text
    # 5 models x 14 instructions caption jobs; the transformers models ask for a GPU
    assert "results/responses/paper/llava-1.5-13b/i14.jsonl" in text
    assert "gpu=1" in text


def test_pope_captions_profile_dag_resolves(fresh: Path) -> None:
    proc = snakemake(
        fresh,
        "-n",
        "--cores",
        "2",
        "--configfile=config/profiles/pope-captions.yaml",
        "--",
        "results/tables/",
    )
    text = proc.stdout + proc.stderr
    assert "results/responses/pope-captions/minigpt-4/i02.jsonl" in text


def test_overlay_profile_run_builds_only_its_own_targets(fresh: Path) -> None:
    """`all` adds the DVC stages' targets only for params.yaml's profile (DVC's): a PhD-only
    overlay plans no caption pipeline (no generate/extract/oracle/embed job), the demo does."""
    from pipeline_helpers import planned_jobs

    phd = planned_jobs(fresh, "--configfile=config/profiles/phd-ccs.yaml", "--", "all")
    assert {"phd_answers", "phd_score", "tables", "metrics"} <= set(phd), phd
    assert not {"generate", "extract", "oracle", "embed", "extract_report"} & set(phd), phd
    demo = planned_jobs(fresh, "all")
    assert {"generate", "extract", "extract_report", "oracle_accuracy"} <= set(demo), demo
