"""The committed dvc.yaml is exactly what the stage registry generates."""

from __future__ import annotations

from pathlib import Path

import yaml

from halluscope.registry import STAGES, dvc_yaml

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
        for key in stage.params:
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
