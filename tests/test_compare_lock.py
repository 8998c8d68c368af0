"""scripts/compare_lock.py: after `make demo`, the verdict on the committed dvc.lock.

The locks are the committed dvc.lock and edits of it that mimic what another machine or an
edited params.yaml makes `dvc commit` write; the command-line cases run in real git repositories.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pipeline_helpers import GIT

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts/compare_lock.py"
LOCK = yaml.safe_load((ROOT / "dvc.lock").read_text(encoding="utf-8"))
OBJECTS = "results/objects/demo"


@pytest.fixture()
def compare_lock(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    import compare_lock

    return compare_lock


def _outs(lock: dict) -> list[str]:
    return [o["path"] for stage in lock["stages"].values() for o in stage.get("outs", [])]


def _rewrite(lock: dict, path: str, md5: str) -> dict:
    """``lock`` as another machine's `dvc commit` writes it when ``path`` has other bytes: the
    output's hash, and the same hash wherever a stage names it as a dependency."""
    lock = copy.deepcopy(lock)
    for stage in lock["stages"].values():
        for entry in [*stage.get("outs", []), *stage.get("deps", [])]:
            if entry["path"] == path:
                entry["md5"] = md5
    return lock


def _stages_reading(lock: dict, path: str) -> set[str]:
    return {
        n for n, st in lock["stages"].items() if path in {d["path"] for d in st.get("deps", [])}
    }


def test_the_committed_lock_reproduces_itself(compare_lock) -> None:
    result = compare_lock.compare(LOCK, copy.deepcopy(LOCK))
    assert result.reproduced and sorted(result.identical) == sorted(_outs(LOCK))
    assert not (result.differing or result.downstream or result.changed or result.missing)
    assert compare_lock.summary(result, "HEAD")[0] == (
        f"dvc.lock: this build reproduces the committed lock (HEAD): {len(_outs(LOCK))} of "
        f"{len(_outs(LOCK))} compared outputs identical"
    )


def test_an_output_with_other_bytes_is_named_and_its_readers_are_not_blamed(compare_lock) -> None:
    other = _rewrite(LOCK, OBJECTS, "0" * 32 + ".dir")
    result = compare_lock.compare(LOCK, other)
    assert not result.reproduced and result.differing == [OBJECTS]
    readers = _stages_reading(LOCK, OBJECTS)
    assert readers and set(result.downstream) == readers  # fed by the differing output
    assert not result.changed and OBJECTS not in result.identical
    lines = compare_lock.summary(result, "HEAD")
    assert lines[0].startswith("dvc.lock: 1 of ") and lines[0].endswith(f": {OBJECTS}")
    assert (
        "does not reproduce the committed lock" in lines[1] and "git checkout dvc.lock" in lines[1]
    )
    assert any(line.startswith("  not compared, fed by a differing output") for line in lines)


def test_an_edited_param_is_a_changed_stage_not_a_failed_reproduction(compare_lock) -> None:
    edited = copy.deepcopy(LOCK)
    score = edited["stages"]["caos"]
    assert score["params"]["params.yaml"]["caos"]["k"] == 3
    score["params"]["params.yaml"]["caos"]["k"] = 5
    for out in score["outs"]:  # other k, other scores, and so other inputs downstream
        edited = _rewrite(edited, out["path"], "1" * 32 + ".dir")
    result = compare_lock.compare(LOCK, edited)
    assert result.reproduced, result.differing
    downstream = set().union(*(_stages_reading(LOCK, o["path"]) for o in score["outs"]))
    assert "caos" in result.changed and downstream and downstream <= set(result.changed)
    assert not result.downstream
    assert (
        "run with other code, data or params than HEAD" in compare_lock.summary(result, "HEAD")[-1]
    )


def test_a_stage_missing_from_this_lock_is_said(compare_lock) -> None:
    partial = copy.deepcopy(LOCK)
    del partial["stages"]["report"]
    result = compare_lock.compare(LOCK, partial)
    assert result.missing == ["report"]
    assert compare_lock.summary(result, "HEAD")[-1] == "  not in this lock: stage(s) report"


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True
    )


def _repo(tmp_path: Path, folder: str = "") -> Path:
    """A git repository with the committed lock in its ``folder`` (the project's folder)."""
    repo = tmp_path / "clone"
    project = repo / folder
    project.mkdir(parents=True)
    (project / "dvc.lock").write_text(yaml.safe_dump(LOCK, sort_keys=False), encoding="utf-8")
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "lock"]):
        subprocess.run([*GIT, *cmd], cwd=repo, check=True, capture_output=True)
    return project


@pytest.mark.parametrize("folder", ["", "projects/halluscope"])
def test_cli_compares_the_working_lock_with_the_commit(tmp_path: Path, folder: str) -> None:
    repo = _repo(tmp_path, folder)  # the project alone, or a folder of a larger repository
    lock = repo / "dvc.lock"
    proc = _run(["--lock", str(lock)], tmp_path)  # git runs in the lock's folder
    assert proc.returncode == 0 and "reproduces the committed lock (HEAD)" in proc.stdout
    other = _rewrite(LOCK, OBJECTS, "0" * 32 + ".dir")
    lock.write_text(yaml.safe_dump(other, sort_keys=False), encoding="utf-8")
    proc = _run(["--lock", str(lock)], tmp_path)
    assert proc.returncode == 0, proc.stderr  # the build stays valid on this machine
    assert (
        "differ from the committed lock (HEAD) although" in proc.stdout and OBJECTS in proc.stdout
    )


def test_cli_without_a_commit_or_with_a_broken_lock_says_so(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "dvc.lock").write_text("schema: '2.0'\nstages: {}\n", encoding="utf-8")
    proc = _run(["--lock", str(plain / "dvc.lock")], tmp_path)
    assert proc.returncode == 0 and "no committed lock at HEAD" in proc.stdout
    repo = _repo(tmp_path)
    (repo / "dvc.lock").write_text("stages: [\n", encoding="utf-8")
    proc = _run(["--lock", str(repo / "dvc.lock")], tmp_path)
    assert (
        proc.returncode == 2
        and f"cannot compare {repo / 'dvc.lock'} with HEAD:dvc.lock" in proc.stderr
    )
    (repo / "dvc.lock").write_text("- 1\n", encoding="utf-8")
    proc = _run(["--lock", str(repo / "dvc.lock")], tmp_path)
    assert proc.returncode == 2 and "no 'stages' mapping" in proc.stderr
