"""Record a Snakemake run in dvc.lock, so that DVC agrees with it.

Why: `snakemake` builds the same files as `dvc repro`, but only DVC's own commands write
`dvc.lock` and its cache. Without this, a fresh clone's `snakemake --cores 2` leaves `dvc status`
listing every output as "not in cache" and `dvc repro` running every stage again. After a
successful run whose DAG held the targets of every stage of ``dvc.yaml`` (built, or found up to
date), the stages are committed (``dvc commit``, DVC's public command): their outputs,
dependencies and params as they are now, which are what built them.

Not committed: a run whose params differ from `params.yaml` (a `--config` or `--configfile`
override: DVC reads `params.yaml` alone, so the lock would pair those outputs with other params),
a run inside `dvc repro` (DVC commits its own stages), and a folder that is not a git and DVC
project (a copy, or an archive).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: set by DVC in the environment of every stage's command (`dvc repro`, `dvc exp run`)
DVC_STAGE = "DVC_STAGE"


def params_file_config(root: Path) -> dict[str, Any]:
    """``params.yaml`` validated as the Snakefile validates its config (defaults filled)."""
    import yaml

    from halluscope.config import validate

    config = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    validate(config, source="params.yaml")
    return config


def skip_reason(config: Mapping[str, Any], root: Path) -> str | None:
    """Why this run must not be recorded in dvc.lock, or None."""
    if os.environ.get(DVC_STAGE):
        return "inside a DVC stage"
    if not (root / ".dvc").is_dir() or not (root / "dvc.yaml").is_file():
        return "not a DVC project"
    inside_git = subprocess.run(
        ["git", "rev-parse", "--is-inside-work-tree"], cwd=root, capture_output=True, text=True
    )
    if inside_git.returncode != 0:
        return "not a git checkout"
    if dict(config) != params_file_config(root):
        return "override"
    return None


def dvc_profile(root: Path) -> str:
    """The profile ``dvc repro`` runs: the ``profile`` of params.yaml (DVC reads no overlay)."""
    import yaml

    return str(yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))["profile"])


def commit_stages(config: Mapping[str, Any], root: Path) -> bool:
    """`dvc commit` every stage unless :func:`skip_reason` says not to; True if committed.

    A failure of DVC is reported on one line and never fails the run: the outputs are built,
    and `dvc commit` or `dvc repro` can record them later.
    """
    try:
        reason = skip_reason(config, root)
    except Exception as error:  # the run's outputs stand; only the lock is not updated
        print(f"dvc.lock not updated: {type(error).__name__}: {error}", file=sys.stderr)
        return False
    if reason == "override":
        print(
            "dvc.lock not updated: this run's params differ from params.yaml (--config or "
            "--configfile); DVC reads params.yaml only",
            file=sys.stderr,
        )
    if reason is not None:
        return False
    proc = subprocess.run(
        ["dvc", "commit", "--force", "--quiet"], cwd=root, capture_output=True, text=True
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        print(f"dvc.lock not updated: dvc commit failed: {last}", file=sys.stderr)
        return False
    print("dvc.lock: recorded the DVC stages this run built or found up to date", file=sys.stderr)
    return True
