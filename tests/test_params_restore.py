"""A value the schema rejects that is an uncommitted change of params.yaml (what
``dvc exp run -S key=value`` leaves there when its stage fails) says how to restore the file:
``git checkout HEAD -- params.yaml`` when it is the file's one change, else the committed value
to set back by hand; a value from an overlay gets no such line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from pipeline_helpers import ROOT, copy_project, run

from halluscope.config import ConfigError, validate


def _git_params(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "params.yaml", root / "params.yaml")
    run(["git", "init", "-q"], root)
    run(["git", "add", "params.yaml"], root)
    run(["git", "commit", "-q", "-m", "params"], root)
    return root / "params.yaml"


def _set_line(params: Path, old: str, new: str) -> None:
    text = params.read_text(encoding="utf-8")
    assert text.count(old) == 1
    params.write_text(text.replace(old, new), encoding="utf-8")


def test_rejected_uncommitted_value_says_how_to_restore(tmp_path: Path, monkeypatch) -> None:
    params = _git_params(tmp_path / "repo")
    monkeypatch.chdir(params.parent)
    _set_line(params, "\n  k: 3\n", "\n  k: -2\n")  # what `dvc exp run -S caos.k=-2` writes
    line = params.read_text("utf-8").splitlines().index("  k: -2") + 1
    with pytest.raises(ConfigError) as err:
        validate(yaml.safe_load(params.read_text("utf-8")))
    assert str(err.value).splitlines()[1] == (
        f"params.yaml:{line} sets caos.k: -2 (at git HEAD: 3); restore it with: "
        "git checkout HEAD -- params.yaml"
    )
    # another uncommitted edit: restoring the file would discard it, so the value is named
    _set_line(params, "\n  k_max: 10\n", "\n  k_max: 9\n")
    with pytest.raises(ConfigError) as err:
        validate(yaml.safe_load(params.read_text("utf-8")))
    assert "set it back by hand" in str(err.value) and "(caos.k_max)" in str(err.value)
    # the rejected value from an overlay, not from params.yaml: no hint
    run(["git", "checkout", "-q", "--", "params.yaml"], params.parent)
    config = yaml.safe_load(params.read_text("utf-8"))
    config["caos"]["k"] = -2
    with pytest.raises(ConfigError) as err:
        validate(config)
    assert "\n" not in str(err.value)


@pytest.mark.slow
def test_dvc_exp_run_with_a_rejected_value_says_how_to_restore(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "exp")
    run(["git", "init", "-q"], root)
    run(["git", "add", "-A"], root)
    run(["git", "commit", "-q", "-m", "project"], root)
    proc = run(["dvc", "exp", "run", "-S", "caos.k=-2"], root, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "key 'caos.k': -2 is less than the minimum of 1" in text, text[-3000:]
    assert "restore it with: git checkout HEAD -- params.yaml" in text, text[-3000:]
    run(["git", "checkout", "HEAD", "--", "params.yaml"], root)
    assert not run(["git", "status", "--porcelain", "params.yaml"], root).stdout
