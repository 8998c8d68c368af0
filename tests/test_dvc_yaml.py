"""The hand-written dvc.yaml covers the demo's DAG: each stage runs one Snakemake target the
Snakefile's `all` also builds, lists every params key its rules' settings read, and owns the
outputs of its rules; DVC's own schema accepts it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml
from rule_settings import params_keys, read_keys, resolve, rules

from halluscope.benchmarks import BENCHMARKS

ROOT = Path(__file__).resolve().parents[1]
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
PROFILE = str(PARAMS["profile"])


def dvc_document() -> dict:
    """dvc.yaml with ``${profile}`` as DVC fills it in from params.yaml."""
    text = (ROOT / "dvc.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text.replace("${profile}", PROFILE))


STAGES = dvc_document()["stages"]


def _outs(stage: dict) -> list[str]:
    return [path for out in [*stage["outs"], *stage.get("metrics", [])] for path in out]


def test_dvc_yaml_passes_dvcs_schema_and_its_outputs_do_not_overlap() -> None:
    import voluptuous
    from dvc.schema import MULTI_STAGE_SCHEMA

    voluptuous.Schema(MULTI_STAGE_SCHEMA)(yaml.safe_load((ROOT / "dvc.yaml").read_text()))
    outs = [path for stage in STAGES.values() for path in _outs(stage)]
    assert len(outs) == len(set(outs)), "DVC refuses overlapping outputs"
    for name, stage in STAGES.items():
        for out in [*stage["outs"], *stage.get("metrics", [])]:
            assert next(iter(out.values()))["persist"], (name, out)
        for dep in stage["deps"]:
            if not dep.startswith("results/"):
                assert (ROOT / dep).exists(), f"stage {name}: dep {dep} does not exist"
            else:  # an upstream stage's output
                assert any(dep in _outs(s) for s in STAGES.values()), (name, dep)


def test_each_stage_runs_its_target_which_all_builds() -> None:
    """`snakemake --cores all <stage>_all`, for the targets the Snakefile's rule `all` includes
    (rules/common.smk DVC_TARGETS: data, the benchmarks with a DVC stage, report), one per
    stage, in that order; its params sections exist in params.yaml."""
    staged = [b.name for b in BENCHMARKS if b.dvc_stage or b.module("code_stages")]
    assert list(STAGES) == ["data", *staged, "report"]
    for name, stage in STAGES.items():
        assert stage["cmd"] == f"snakemake --cores all {name}_all", name
        for key in stage["params"]:
            node = PARAMS
            for part in key.split("."):
                assert part in node, f"stage {name}: params key {key} not in params.yaml"
                node = node[part]


def _stage_of(output: str) -> str | None:
    path = output.replace("{profile}", PROFILE)
    for name, stage in STAGES.items():
        if any(path == out or path.startswith(out + "/") for out in _outs(stage)):
            return name
        if any(out.startswith(path + "/") for out in _outs(stage)):  # a folder holding one
            return name
    return None


SETTINGS_RULES = [r for r in rules(ROOT) if r.settings]
#: the benchmarks the demo does not run (no params.yaml section): their rules are in no stage
OUTSIDE = [b.name for b in BENCHMARKS if not b.dvc_stage and not b.enabled_by_default]
NOT_IN_THE_DEMO = tuple(f"{name}_" for name in OUTSIDE)


def test_every_rule_with_settings_but_those_outside_the_demo_has_a_stage() -> None:
    staged = {r.name for r in SETTINGS_RULES if {_stage_of(o) for o in r.outputs} - {None}}
    unstaged = {r.name for r in SETTINGS_RULES} - staged
    assert unstaged and all(name.startswith(NOT_IN_THE_DEMO) for name in unstaged), unstaged
    assert OUTSIDE and not any(name in PARAMS for name in OUTSIDE)


@pytest.mark.parametrize(
    "rule", [r for r in SETTINGS_RULES if not r.name.startswith(NOT_IN_THE_DEMO)],
    ids=lambda r: r.name,
)  # fmt: skip
def test_a_stage_lists_every_key_its_rules_settings_read(rule) -> None:
    """A key a job's settings read is a param of the DVC stage that owns the job's outputs, so
    `dvc exp run -S key=value` reruns that stage (and Snakemake inside it the job)."""
    (stage,) = {_stage_of(output) for output in rule.outputs} - {None}
    listed = STAGES[stage]["params"]
    read = params_keys(read_keys([resolve(rule.settings, ROOT)], PARAMS), PARAMS)
    missing = [k for k in read if not any(k == p or k.startswith(p + ".") for p in listed)]
    assert not missing, f"stage {stage} (rule {rule.name}) does not list {missing}"


def test_interrupted_write_temp_files_are_outside_every_output_hash() -> None:
    """A temp file left by a killed atomic write never enters an output's DVC hash; nor does
    the package's bytecode enter the hash of the code the stages depend on."""
    dvc = [sys.executable, "-m", "dvc", "check-ignore"]
    for ignored in (
        "results/trihe/demo/.answers.jsonl.k3j9x2.tmp",
        "src/halluscope/__pycache__/io.cpython-311.pyc",
    ):
        assert subprocess.run([*dvc, ignored], cwd=ROOT, capture_output=True).returncode == 0
    real = "results/trihe/demo/answers.jsonl"
    assert subprocess.run([*dvc, real], cwd=ROOT, capture_output=True).returncode == 1


def test_top_level_plots_are_figure_csvs_inside_the_report_out() -> None:
    """The k-sweep and per-instruction data (written by rule figure) are top-level DVC plots,
    inside the report stage's figures folder, naming columns the figure stage writes."""
    figures_out = f"results/figures/{PROFILE}"
    assert figures_out in _outs(STAGES["report"])
    columns = {
        "caos_ksweep": {"model", "embedder", "k", "CAOS_K"},
        "caos_instructions": {"model", "embedder", "instruction_id", "CAOS_T", "CAOS_X", "CAOS_K"},
    }
    plots = {}
    for plot in dvc_document()["plots"]:
        ((path, props),) = plot.items()
        assert path.startswith(figures_out + "/") and path.endswith(".csv"), path
        ys = [props["y"]] if isinstance(props["y"], str) else props["y"]
        assert {props["x"], *ys} <= columns[Path(path).stem], (path, props)
        plots[Path(path).stem] = props
    assert list(plots) == ["caos_ksweep", "caos_instructions"]
    assert (plots["caos_ksweep"]["x"], plots["caos_ksweep"]["y"]) == ("k", "CAOS_K")
    assert plots["caos_ksweep"]["template"] == "series_linear"  # .dvc/plots/series_linear.json


class Plot(NamedTuple):
    """A top-level plot of dvc.yaml: the figure's CSV (results/figures/<profile>/<name>.csv)."""

    name: str
    x: str
    y: str | list[str]
    template: str
    title: str
    x_label: str
    y_label: str


PLOTS = [
    Plot(Path(path).stem, **props)
    for plot in dvc_document()["plots"]
    for path, props in plot.items()
]


def dvc_profile() -> str:
    """The profile `dvc repro` runs: params.yaml's."""
    return PROFILE
