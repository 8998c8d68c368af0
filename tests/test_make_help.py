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
