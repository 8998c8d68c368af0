"""When a finished Snakemake run is recorded in dvc.lock, and when it must not be."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pipeline_helpers import GIT, ROOT, run

from halluscope.dvc_lock import commit_stages, params_file_config, skip_reason


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git and DVC project with this repository's params, schema and dvc.yaml."""
    for name in ("params.yaml", "dvc.yaml"):
        shutil.copy2(ROOT / name, tmp_path / name)
    (tmp_path / ".dvc").mkdir()
    run(["git", "init", "-q"], tmp_path)
    run([*GIT, "add", "-A"], tmp_path)
    return tmp_path


def test_a_run_with_params_yaml_alone_is_recorded(project: Path, monkeypatch) -> None:
    monkeypatch.delenv("DVC_STAGE", raising=False)
    assert skip_reason(params_file_config(project), project) is None


def test_an_override_is_not_recorded_and_says_so(project: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("DVC_STAGE", raising=False)
    config = params_file_config(project)
    config["caos"]["k"] = config["caos"]["k"] + 2  # as --config caos={'k': ...} would
    assert skip_reason(config, project) == "override"
    assert commit_stages(config, project) is False
    assert "params differ from params.yaml" in capsys.readouterr().err


def test_inside_a_dvc_stage_dvc_commits_itself(project: Path, monkeypatch) -> None:
    monkeypatch.setenv("DVC_STAGE", "score")
    assert skip_reason(params_file_config(project), project) == "inside a DVC stage"


def test_a_copy_that_is_not_a_project_is_left_alone(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("DVC_STAGE", raising=False)
    shutil.copy2(ROOT / "params.yaml", tmp_path / "params.yaml")
    assert skip_reason(params_file_config(tmp_path), tmp_path) == "not a DVC project"
    (tmp_path / ".dvc").mkdir()
    shutil.copy2(ROOT / "dvc.yaml", tmp_path / "dvc.yaml")
    assert skip_reason(params_file_config(tmp_path), tmp_path) == "not a git checkout"


def test_a_failing_dvc_never_fails_the_run(project: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("DVC_STAGE", raising=False)
    # no .dvc/config: dvc commit fails; the run's outputs stand and one line says why
    assert commit_stages(params_file_config(project), project) is False
    assert "dvc.lock not updated: dvc commit failed" in capsys.readouterr().err


def test_the_committed_lock_records_this_checkouts_code_and_params() -> None:
    """dvc.lock names the md5 of the code and params each stage ran with.

    A commit that edits src/, rules/ or params.yaml after the lock was rebuilt leaves a lock
    that no clean build reproduces; this catches it in seconds, before the slow tier's build
    does. The fix is a fresh clone's `make demo` and committing its dvc.lock."""
    status = json.loads(run(["dvc", "status", "--json"], ROOT).stdout or "{}")
    stale = sorted(
        f"{stage}: {path} {state}"
        for stage, changes in status.items()
        for change in changes
        if isinstance(change, dict)
        for path, state in change.get("changed deps", {}).items()
        if not path.startswith(("results/", "metrics/"))
    )
    assert not stale, stale
