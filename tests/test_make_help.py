"""`make` with no target lists every target the Makefile declares phony, one line each."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def phony_targets() -> list[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return re.search(r"^\.PHONY: (.*)$", text, re.M).group(1).split()


def test_make_lists_every_target_once() -> None:
    for argv in (["make", "-s"], ["make", "-s", "help"]):
        out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True).stdout
        listed = [line.split()[1] for line in out.splitlines()]
        assert sorted(listed) == sorted(set(listed)), out
        missing = [t for t in phony_targets() if t not in listed]
        assert not missing, f"targets without a '## ' line in the Makefile: {missing}"
        assert "profile-%" in listed
        assert all(len(line.split(maxsplit=2)) == 3 for line in out.splitlines()), out


def test_an_install_is_not_redone_because_a_checkout_dated_the_lock_files(tmp_path: Path) -> None:
    """``make paper`` reinstalled into .venv whenever the lock files' mtimes were newer than
    the install's marker (every checkout or pull): the marker is now named by their contents."""
    import os
    import shutil

    for name in ("Makefile", "requirements.lock", "pyproject.toml"):
        shutil.copy2(ROOT / name, tmp_path / name)
    show = "show: ; @echo $(STAMP) $(LLAMA_STAMP)"
    names = subprocess.run(
        ["make", "-s", "--eval", show, "show"], cwd=tmp_path, capture_output=True, text=True
    ).stdout.split()
    assert len(names) == 2 and all(n.startswith(".venv/.") for n in names), names
    (tmp_path / ".venv/bin").mkdir(parents=True)
    for name in (".venv/bin/python", names[1], names[0]):  # in the order make made them
        (tmp_path / name).touch()
    os.utime(tmp_path / "requirements.lock")  # newer than the marker, as after a checkout
    plan = subprocess.run(["make", "-n", "install"], cwd=tmp_path, capture_output=True, text=True)
    assert "pip install" not in plan.stdout, plan.stdout
    with (tmp_path / "requirements.lock").open("a") as lock:
        lock.write("six==1.16.0\n")  # a changed lock does reinstall
    plan = subprocess.run(["make", "-n", "install"], cwd=tmp_path, capture_output=True, text=True)
    assert "pip install -r requirements.lock" in plan.stdout
