"""The committed dvc.yaml is exactly what the stage registry generates."""

from __future__ import annotations

from pathlib import Path

import yaml

from halluscope.registry import STAGES, dvc_yaml, stage_params

ROOT = Path(__file__).resolve().parents[1]


def test_committed_dvc_yaml_matches_registry() -> None:
    committed = (ROOT / "dvc.yaml").read_text(encoding="utf-8")
    assert committed == dvc_yaml(), "dvc.yaml differs: run python scripts/write_dvc_yaml.py"


def test_every_stage_persists_and_lists_existing_deps() -> None:
    stages = yaml.safe_load(dvc_yaml())["stages"]
    assert list(stages) == [s.name for s in STAGES]
    outs = [o for s in stages.values() for out in s["outs"] for o in out]
    assert len(outs) == len(set(outs)), "DVC refuses overlapping outputs"
    for name, stage in stages.items():
        assert all(next(iter(o.values()))["persist"] for o in stage["outs"]), name
        for dep in stage["deps"]:
            if not dep.startswith("results/"):
                assert (ROOT / dep).exists(), f"stage {name}: dep {dep} does not exist"


def test_params_keys_exist_in_params_yaml() -> None:
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    for stage in STAGES:
        for key in stage_params(stage):
            node = params
            for part in key.split("."):
                assert part in node, f"stage {stage.name}: params key {key} not in params.yaml"
                node = node[part]


def test_interrupted_write_temp_files_are_outside_every_output_hash() -> None:
    """A temp file left by a killed atomic write never enters an output's DVC hash."""
    import subprocess
    import sys

    dvc = [sys.executable, "-m", "dvc", "check-ignore"]
    temp = "results/trihe/demo/.answers.jsonl.k3j9x2.tmp"
    assert subprocess.run([*dvc, temp], cwd=ROOT, capture_output=True).returncode == 0
    real = "results/trihe/demo/answers.jsonl"
    assert subprocess.run([*dvc, real], cwd=ROOT, capture_output=True).returncode == 1


def test_top_level_plots_are_figure_csvs_inside_the_figures_out() -> None:
    """The k-sweep and per-instruction data (written by rule figure) are top-level DVC plots:
    each lies inside the figures stage's out folder, names columns the figure stage writes, and
    dvc.yaml passes DVC's own schema."""
    import voluptuous
    from dvc.schema import MULTI_STAGE_SCHEMA

    from halluscope.registry import dvc_profile

    document = yaml.safe_load(dvc_yaml())
    voluptuous.Schema(MULTI_STAGE_SCHEMA)(document)
    profile = dvc_profile()
    figures_out = f"results/figures/{profile}"
    assert [next(iter(o)) for o in document["stages"]["figures"]["outs"]] == [figures_out]
    columns = {
        "caos_ksweep": {"model", "embedder", "k", "CAOS_K"},
        "caos_instructions": {"model", "embedder", "instruction_id", "CAOS_T", "CAOS_X", "CAOS_K"},
    }
    plots = {}
    for plot in document["plots"]:
        ((path, props),) = plot.items()
        assert path.startswith(figures_out + "/") and path.endswith(".csv"), path
        ys = [props["y"]] if isinstance(props["y"], str) else props["y"]
        assert {props["x"], *ys} <= columns[Path(path).stem], (path, props)
        plots[Path(path).stem] = props
    assert list(plots) == ["caos_ksweep", "caos_instructions"]
    assert (plots["caos_ksweep"]["x"], plots["caos_ksweep"]["y"]) == ("k", "CAOS_K")
    assert plots["caos_ksweep"]["template"] == "series_linear"  # .dvc/plots/series_linear.json
