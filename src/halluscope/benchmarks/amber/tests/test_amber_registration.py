"""AMBER as a packaged benchmark: its folder plus one registry line reach every part of the
pipeline (schema, stage commands, simulated answerer, code digests, data sources, headlines,
report captions and the DAG of its profile)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pipeline_helpers import ROOT, merged_params

from halluscope.benchmarks import by_name
from halluscope.config import ConfigError, validate
from halluscope.registry import code_files

AMBER = by_name("amber")


def test_the_fragment_is_enforced_like_the_main_schema() -> None:
    config = merged_params("amber-gen")
    config["amber"]["similarity"] = "spacy-lg"
    with pytest.raises(ConfigError, match="amber.similarity"):
        validate(config, source="amber-gen")
    config = merged_params("amber-gen")
    config["amber"]["tresh"] = 0.5
    with pytest.raises(ConfigError, match="unknown key 'amber.tresh'"):
        validate(config, source="amber-gen")


def test_stage_commands_and_answerer_come_from_the_folder() -> None:
    from halluscope.models.sim import answered_tasks
    from halluscope.stage_command import stage_names

    assert {"amber-prompts", "amber-answers", "amber-score", "amber-table"} <= set(stage_names())
    assert "amber" in answered_tasks()
    out = subprocess.run(
        [sys.executable, "-m", "halluscope.cli", "stage", "amber-score", "--help"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "--settings" in out.stdout


def test_code_digests_hold_the_folders_modules() -> None:
    files = {p.relative_to(ROOT).as_posix() for p in code_files("amber", ROOT)}
    for module in ("stages", "settings", "simulated", "metric"):
        assert f"src/halluscope/benchmarks/amber/{module}.py" in files
    data = {p.relative_to(ROOT).as_posix() for p in code_files("data", ROOT)}
    assert "src/halluscope/benchmarks/amber/data.py" in data
    assert "src/halluscope/benchmarks/amber/metric.py" not in data  # closures stay per stage


def test_sources_headlines_captions_and_resources_come_from_the_folder() -> None:
    from halluscope.data.sources import SOURCES
    from halluscope.report.headline import headline_metrics
    from halluscope.resources import RULE_MODELS

    amber = {k for k in SOURCES if k.startswith("amber/")}
    assert {"amber/annotations.json", "amber/relation.json", "amber/safe_words.txt"} <= amber
    assert SOURCES["amber/annotations.json"].license == "Apache-2.0"
    row = {"model": "b", "embedding": ""}
    twins = {"amber_table": [{**row, "metric": "CHAIR", "value": "7.5"},
                             {**row, "metric": "Cover", "value": "50.0"}]}  # fmt: skip
    assert headline_metrics(twins) == {"b": {"AMBER_CHAIR": 0.075}}  # percent -> fraction
    assert AMBER.datasets == ("amber-gen",) and AMBER.tables == ("amber_table",)
    assert dict(AMBER.titles)["amber_table"].startswith("AMBER generative")
    assert "amber_answers" in RULE_MODELS


def test_the_dag_of_the_profile_has_the_benchmarks_jobs() -> None:
    """Every job of the profile (--forceall: also when the checkout has already run it)."""
    out = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--forceall", "--quiet", "rules", "--configfile",
         "config/profiles/amber-gen.yaml", "--", "results/tables/", "all"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    jobs = out.stdout + out.stderr
    for rule in ("amber_prompts", "amber_answers", "amber_score", "amber_table", "tables"):
        assert rule in jobs, jobs[-2000:]
    assert "caos_tables" not in jobs
