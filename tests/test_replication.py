"""Exact replication with Snakemake + DVC, shown on the demo profile.

* two clean runs give byte-identical files under results/ and metrics/: the session's clean
  build against the committed dvc.lock, itself made by a clean `make demo` in a fresh clone
  (tests/test_engines_agree.py; in CI that is another machine's CPU as well);
* dvc push to a local remote, a fresh clone, dvc pull, dvc repro: nothing reruns, every output
  is identical, and after `snakemake --touch` a dry run has nothing to do (DVC does not keep
  mtimes);
* `dvc exp run -S caos.k=5` reruns only the stages that read caos.k; `dvc exp show` lists it;
* a second Snakemake process on the same folder is refused by the lock, never corrupting it.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pipeline_helpers import (
    GIT,
    OUTPUT_ROOTS,
    add_build,
    copy_project,
    env,
    planned_jobs,
    run,
    snakemake,
)

pytestmark = pytest.mark.slow


def digests(root: Path) -> dict[str, str]:
    """SHA-256 of every file the DAG wrote (relative path -> digest)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for name in OUTPUT_ROOTS
        for p in sorted((root / name).rglob("*"))
        if p.is_file()
    }


def fresh_clone(dest: Path) -> Path:
    root = copy_project(dest)
    run(["git", "init", "-q"], root)
    run([*GIT, "add", "-A"], root)
    run([*GIT, "commit", "-qm", "fresh clone"], root)
    return root


@pytest.fixture(scope="module")
def clone_a(demo_build: Path, tmp_path_factory) -> Path:
    """A fresh clone carrying the session's clean demo build (a clean run of the same files)."""
    root = add_build(demo_build, fresh_clone(tmp_path_factory.mktemp("a") / "halluscope"))
    assert planned_jobs(root, "results/tables/", "all") == {}
    run(["dvc", "commit", "--force", "--quiet"], root)
    # the headline metrics are DVC metrics kept in git (cache: false): a clone gets them from git
    run([*GIT, "add", "dvc.lock", "metrics"], root)
    run([*GIT, "commit", "-qm", "demo run"], root)
    return root


def test_push_clone_pull_repro_reruns_nothing(clone_a: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    run(["dvc", "remote", "modify", "--local", "local", "url", str(remote)], clone_a)
    run(["dvc", "push", "--quiet"], clone_a)
    clone_c = tmp_path / "c"
    run(["git", "clone", "-q", str(clone_a), str(clone_c)], tmp_path)
    run(["dvc", "remote", "modify", "--local", "local", "url", str(remote)], clone_c)
    run(["dvc", "pull", "--quiet"], clone_c)
    proc = run(["dvc", "repro"], clone_c)
    assert "Running stage" not in proc.stdout, proc.stdout
    pulled = digests(clone_c)

    def results(found: dict[str, str]) -> dict[str, str]:
        """Results only: not the response cache, not Snakemake's directory-output markers
        (results/tables/.snakemake_timestamp; DVC tracks results/tables/demo, the marker sits
        one level up and `snakemake --touch` below writes it again)."""
        return {
            k: v
            for k, v in found.items()
            if not k.startswith("results/cache/") and not k.endswith(".snakemake_timestamp")
        }

    assert results(pulled) == results(digests(clone_a))
    snakemake(clone_c, "--touch", "--cores", "1", "results/tables/", "all")
    assert planned_jobs(clone_c, "results/tables/", "all") == {}


def test_dvc_exp_run_reruns_only_affected_stages(clone_a: Path) -> None:
    """`tables.decimals` is a params key of the report stage only: DVC reruns that stage and no
    other, and Snakemake inside it only the jobs whose settings read the key (caos.k would rerun
    the caos and report stages, and inside them the score jobs and what reads them)."""
    proc = run(["dvc", "exp", "run", "-S", "tables.decimals=3", "-n", "d3"], clone_a)
    ran = {line.split("'")[1] for line in proc.stdout.splitlines() if "Running stage" in line}
    assert ran == {"report"}, proc.stdout
    # the halluscope logger's line per finished job: [done/total] rule wildcards (seconds)
    jobs = set(re.findall(r"(?m)^\[\d+/\d+\] (\w+)", proc.stdout + proc.stderr))
    assert jobs and not jobs & {"generate", "extract", "oracle", "embed", "score"}, jobs
    table = (clone_a / "results/report/demo/caos_table1.tex").read_text(encoding="utf-8")
    assert re.search(r"\b0\.\d{3}\b", table), "the table was not rewritten with 3 decimals"
    show = run(["dvc", "exp", "show", "--no-pager", "--csv"], clone_a)
    assert "d3" in show.stdout


def test_second_snakemake_on_same_folder_is_locked_out(clone_a: Path) -> None:
    """While one Snakemake process holds the folder's lock, a second one that would write is
    refused (never interleaving its jobs with the first's), and the folder is consistent after."""
    first = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "--cores", "1", "--forcerun", "figure", "all"],
        cwd=clone_a,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        locks = clone_a / ".snakemake" / "locks"
        deadline = time.monotonic() + 120
        while not (locks.is_dir() and any(locks.iterdir())) and first.poll() is None:
            assert time.monotonic() < deadline, "the first run never took the lock"
            time.sleep(0.2)
        assert first.poll() is None, "the first run ended before the second could start"
        second = snakemake(clone_a, "--cores", "1", "--forcerun", "summarize", "all", check=False)
        text = second.stdout + second.stderr
        assert second.returncode != 0, text[-2000:]
        # refused by the directory lock, or because the first run's outputs are in progress
        assert "lock" in text.lower() or "incomplete" in text.lower(), text[-2000:]
    finally:
        out, _ = first.communicate(timeout=600)
    assert first.returncode == 0, out[-3000:]
    # the folder is consistent afterwards
    assert planned_jobs(clone_a, "results/tables/", "all") == {}
