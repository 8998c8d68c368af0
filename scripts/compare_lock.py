"""Say whether this build reproduced the committed dvc.lock, and if not, which outputs differ.

Usage: python scripts/compare_lock.py [--rev REV] [--lock FILE]
(``make demo`` runs it after ``dvc commit``; exit 0 either way, the build is valid here.)

Why: the README promises that ``make demo`` reproduces the committed ``dvc.lock`` on any
x86-64-v3 CPU, but ``dvc commit`` rewrites the lock with whatever this machine wrote. Without
this check a machine that does not reproduce it would pass silently, and ``make test`` would
then compare its fresh build with this machine's own lock.

An output is compared only when its stage ran with the committed stage's command, code, data
and params: a difference there comes from other arithmetic, not other inputs. A stage whose
inputs changed is counted, not compared: either the user changed code, data or params (an
edited ``params.yaml``), or an upstream output already differs (then only the upstream one is
named, as the cause).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class LockComparison:
    """The outcome of comparing a build's lock with the committed one, stage by stage."""

    identical: list[str] = field(default_factory=list)  # outputs with the committed md5
    differing: list[str] = field(default_factory=list)  # same inputs, other md5: not reproduced
    downstream: list[str] = field(default_factory=list)  # stages fed by a differing output
    changed: list[str] = field(default_factory=list)  # stages run with other code/data/params
    missing: list[str] = field(default_factory=list)  # committed stages this lock lacks

    @property
    def reproduced(self) -> bool:
        return not self.differing


def _hashes(entries: list[dict] | None) -> dict[str, str | None]:
    return {e["path"]: e.get("md5") for e in entries or []}


def _stages(lock: dict, name: str) -> dict[str, dict]:
    stages = lock.get("stages") if isinstance(lock, dict) else None
    if not isinstance(stages, dict):
        raise ValueError(f"{name}: no 'stages' mapping (is it a dvc.lock?)")
    return stages


def compare(committed: dict, current: dict) -> LockComparison:
    """Compare ``current`` (this build's lock) with ``committed``, both parsed dvc.lock files."""
    ours, theirs = _stages(current, "this lock"), _stages(committed, "the committed lock")
    produced_by = {path: name for name, st in ours.items() for path in _hashes(st.get("outs"))}
    result = LockComparison()
    fed: dict[str, set[str]] = {}  # stage -> its changed deps, every one another stage's output
    for name, old in theirs.items():
        new = ours.get(name)
        if new is None:
            result.missing.append(name)
            continue
        old_deps, new_deps = _hashes(old.get("deps")), _hashes(new.get("deps"))
        changed = {
            p for p in old_deps.keys() | new_deps.keys() if old_deps.get(p) != new_deps.get(p)
        }
        same_setup = old.get("cmd") == new.get("cmd") and old.get("params") == new.get("params")
        if not same_setup or any(p not in produced_by for p in changed):  # code, data, params
            result.changed.append(name)
        elif changed:  # only other stages' outputs changed
            fed[name] = changed
        else:
            old_outs, new_outs = _hashes(old.get("outs")), _hashes(new.get("outs"))
            for path in sorted(old_outs.keys() | new_outs.keys()):
                same = old_outs.get(path) == new_outs.get(path)
                (result.identical if same else result.differing).append(path)
    _split_fed(fed, produced_by, result)
    return result


def _split_fed(
    fed: dict[str, set[str]], produced_by: dict[str, str], result: LockComparison
) -> None:
    """A stage fed only by differing outputs (or by stages so fed) is downstream of them; one fed
    by a stage that ran with other inputs (or by nothing that explains it) counts as changed."""
    downstream: set[str] = set()
    while fed:
        ready = {
            name
            for name, deps in fed.items()
            if all(p in result.differing or produced_by[p] in downstream for p in deps)
        }
        if not ready:
            break
        downstream |= ready
        for name in ready:
            del fed[name]
    result.downstream.extend(sorted(downstream))
    result.changed.extend(sorted(fed))


def committed_lock(root: Path, rev: str) -> str | None:
    """``root/dvc.lock`` as committed at ``rev`` (None: no git, or not committed there).

    ``./`` makes git read the path from ``root``, also when the project is a folder of a larger
    repository."""
    try:
        proc = subprocess.run(
            ["git", "show", f"{rev}:./dvc.lock"], cwd=root, capture_output=True, text=True
        )
    except FileNotFoundError:  # no git on PATH
        return None
    return proc.stdout if proc.returncode == 0 else None


def summary(result: LockComparison, rev: str) -> list[str]:
    """The lines ``make demo`` prints: the verdict first, then what was not compared."""
    total = len(result.identical) + len(result.differing)
    lines = []
    if result.differing:
        lines.append(
            f"dvc.lock: {len(result.differing)} of {total} outputs differ from the committed lock "
            f"({rev}) although their stages ran with its code, data and params: "
            + ", ".join(result.differing)
        )
        lines.append(
            "  this machine does not reproduce the committed lock (docs/reproducibility.md)"
            "; `git diff dvc.lock` shows the hashes, `git checkout dvc.lock` restores them"
        )
    else:
        lines.append(
            f"dvc.lock: this build reproduces the committed lock ({rev}): "
            f"{len(result.identical)} of {total} compared outputs identical"
        )
    if result.downstream:
        lines.append(
            "  not compared, fed by a differing output: stage(s) " + ", ".join(result.downstream)
        )
    if result.changed:
        lines.append(
            f"  not compared, run with other code, data or params than {rev}: stage(s) "
            + ", ".join(result.changed)
        )
    if result.missing:
        lines.append("  not in this lock: stage(s) " + ", ".join(result.missing))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="HEAD", help="the commit whose dvc.lock to compare with")
    parser.add_argument("--lock", type=Path, default=ROOT / "dvc.lock", help="this build's lock")
    args = parser.parse_args(argv)
    text = committed_lock(args.lock.resolve().parent, args.rev)
    if text is None:
        print(f"dvc.lock: no committed lock at {args.rev} to compare with (not a git checkout?)")
        return 0
    try:
        current = yaml.safe_load(args.lock.read_text(encoding="utf-8"))
        result = compare(yaml.safe_load(text), current)
    except (OSError, yaml.YAMLError, ValueError) as err:
        print(
            f"dvc.lock: cannot compare {args.lock} with {args.rev}:dvc.lock: {err}", file=sys.stderr
        )
        return 2
    print("\n".join(summary(result, args.rev)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
