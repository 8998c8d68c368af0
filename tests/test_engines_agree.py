"""Snakemake and DVC agree on what is up to date, and no output is stale under a false label.

* the demo built by `snakemake` (default target) reproduces the committed dvc.lock: `dvc repro`
  runs nothing and `dvc commit` leaves dvc.lock as committed. The lock was made by a clean
  `make demo` in a fresh clone and records every output file's md5 (through its folder's), so
  this is also the check that two clean runs write the same bytes;
* after `dvc repro` has rerun stages for a params change, `snakemake -n` has nothing to do;
* an experiment undone by hand (`dvc exp run -S caos.k=5`, params.yaml back to k=3, `snakemake`,
  `dvc checkout --force`, `snakemake`) ends with the k=3 files everywhere and nothing to do.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pipeline_helpers import GIT, ROOT, add_build, copy_tree, env, planned_jobs, run, snakemake
from test_replication import digests, fresh_clone

sys.path.insert(0, str(ROOT / "scripts"))
import compare_lock  # noqa: E402  (scripts/ is not a package)

pytestmark = pytest.mark.slow


def _clone_with_build(demo_build: Path, dest: Path) -> Path:
    """A fresh clone (the committed dvc.lock) carrying the session's demo build."""
    root = fresh_clone(dest)
    shutil.copy2(ROOT / "dvc.lock", root / "dvc.lock")
    run([*GIT, "add", "dvc.lock"], root)
    run([*GIT, "commit", "-qm", "the committed dvc.lock"], root)
    return add_build(demo_build, root)


def _stages_run(stdout: str) -> set[str]:
    return {line.split("'")[1] for line in stdout.splitlines() if "Running stage" in line}


def test_snakemake_build_reproduces_the_committed_lock(demo_build: Path, tmp_path: Path) -> None:
    """The default target builds every DVC stage's outputs, with the bytes dvc.lock names.

    Two clean runs are byte-identical: the session's build (from scratch, in a fresh copy) and
    the clean run that made the committed lock. Every file the build wrote under results/ and
    metrics/ lies in an output of the lock (so its md5 is compared), but the response cache and
    Snakemake's directory markers, which are not results."""
    root = _clone_with_build(demo_build, tmp_path / "a")
    committed_lock = (ROOT / "dvc.lock").read_text(encoding="utf-8")
    outs = {
        out["path"]
        for stage in yaml.safe_load(committed_lock)["stages"].values()
        for out in stage.get("outs", [])
    }
    unchecked = [
        name
        for name in digests(root)
        if not name.startswith("results/cache/")
        and not name.endswith(".snakemake_timestamp")
        and not any(name == out or name.startswith(f"{out}/") for out in outs)
    ]
    assert not unchecked, unchecked[:10]
    assert planned_jobs(root) == {}, "the default target has work left after `all`"
    run(["dvc", "commit", "--force", "--quiet"], root)  # what `make demo` ends with
    assert (root / "dvc.lock").read_text(encoding="utf-8") == committed_lock, run(
        ["git", "diff", "--stat", "dvc.lock"], root
    ).stdout
    # and with git's dvc.lock: after `make demo` on a machine that does not reproduce it, the
    # working tree's lock holds that machine's hashes (`dvc commit` wrote them), which the
    # check above would take as the committed ones
    head = compare_lock.committed_lock(ROOT, "HEAD") or committed_lock
    built = yaml.safe_load((root / "dvc.lock").read_text(encoding="utf-8"))
    result = compare_lock.compare(yaml.safe_load(head), built)
    assert result.reproduced, compare_lock.summary(result, "HEAD")
    status = run(["dvc", "status", "--json"], root)
    assert status.stdout.strip() in ("{}", ""), status.stdout[:3000]
    proc = run(["dvc", "repro"], root)
    assert _stages_run(proc.stdout) == set(), proc.stdout[-3000:]
    assert planned_jobs(root) == {}


def test_dvc_agrees_after_a_plain_snakemake_run(demo_build: Path, tmp_path: Path) -> None:
    """A user's clone has no DVC cache: after the README's `snakemake --cores 2` (here it has one
    table left to build), `dvc status` is clean and `dvc repro` runs no stage, with no `dvc
    commit` typed in between (the Snakefile records the run, halluscope.dvc_lock)."""
    root = _clone_with_build(demo_build, tmp_path / "plain")
    assert not (root / ".dvc" / "cache").exists()
    (root / "results/metrics/demo.json").unlink()  # a file Snakemake builds (rule metrics)
    proc = snakemake(root, "--cores", "2")
    assert "dvc.lock: recorded the DVC stages" in proc.stderr, proc.stderr[-3000:]
    status = run(["dvc", "status", "--json"], root)
    assert status.stdout.strip() in ("{}", ""), status.stdout[:3000]
    assert _stages_run(run(["dvc", "repro"], root).stdout) == set()
    # the committed lock, untouched (the test's clone lacks files a user's clone tracks)
    assert run(["git", "status", "--porcelain", "--untracked-files=no"], root).stdout == ""


def test_dvc_repro_leaves_snakemake_nothing_to_do(demo_build: Path, tmp_path: Path) -> None:
    root = _clone_with_build(demo_build, tmp_path / "b")
    run(["dvc", "commit", "--force", "--quiet"], root)
    params = (root / "params.yaml").read_text(encoding="utf-8")
    (root / "params.yaml").write_text(
        re.sub(r"(?m)^(  k:) 3\b", r"\1 4", params, count=1), encoding="utf-8"
    )
    proc = run(["dvc", "repro"], root)
    assert _stages_run(proc.stdout) == {"caos", "report"}, proc.stdout[-3000:]
    assert planned_jobs(root) == {}
    assert planned_jobs(root, "results/tables/", "all") == {}


CHECKED = (
    "results/scores/",
    "results/tables/demo/",
    "results/report/",
    "results/figures/",
    "results/metrics/",
    "metrics/",
)


def _checked(found: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in found.items() if k.startswith(CHECKED)}


def _cached(found: dict[str, str]) -> dict[str, str]:
    """Without the headline metrics (metrics/<profile>/): DVC metrics kept in git."""
    return {k: v for k, v in found.items() if not k.startswith("metrics/demo/")}


def test_dvc_checkout_of_another_lock_is_never_stale_under_snakemake(
    demo_build: Path, tmp_path: Path
) -> None:
    """An experiment undone by hand: the k=5 files that `dvc checkout` restores are not taken
    for the k=3 ones Snakemake built; the run rebuilds them and ends with the k=3 bytes
    everywhere."""
    root = _clone_with_build(demo_build, tmp_path / "c")
    run(["dvc", "commit", "--force", "--quiet"], root)
    run([*GIT, "add", "-A"], root)  # dvc.lock, and the headline metrics git keeps
    run([*GIT, "commit", "-qm", "demo run", "--allow-empty"], root)
    k3 = _checked(digests(root))
    run(["dvc", "exp", "run", "-S", "caos.k=5"], root)
    assert "k: 5" in (root / "params.yaml").read_text(encoding="utf-8")
    k5 = _checked(digests(root))
    assert k5 != k3
    k5_lock = (root / "dvc.lock").read_text(encoding="utf-8")
    _exp_show_fits_200_columns(root)
    _readme_way_back(root, tmp_path / "way-back", k3)
    run(["git", "checkout", "params.yaml"], root)
    snakemake(root, "--cores", "2", "results/tables/", "all")  # records the k=3 lock
    assert _checked(digests(root)) == k3
    (root / "dvc.lock").write_text(k5_lock, encoding="utf-8")  # the experiment's lock back
    run(["dvc", "checkout", "--force"], root)  # dvc.lock names the k=5 outputs
    # but for the headline metrics, which git keeps (cache: false), not DVC's cache
    assert _cached(_checked(digests(root))) == _cached(k5)
    proc = snakemake(root, "--cores", "2", "results/tables/", "all")
    assert "were replaced after this project's runs built them" in proc.stderr, proc.stderr[-3000:]
    after = _checked(digests(root))
    differing = sorted(k for k in k3 if after.get(k) != k3[k])
    assert not differing, differing[:10]
    setting = (root / "results/tables/demo/caos_setting.tex").read_text(encoding="utf-8")
    assert "top-3" in setting
    assert planned_jobs(root, "results/tables/", "all") == {}


def _exp_show_fits_200_columns(root: Path) -> None:
    """After one experiment, `dvc exp show --only-changed` on a 200-column terminal shows every
    headline number that changed, its column whole (DVC drops what does not fit as "…")."""
    import csv

    table = list(csv.DictReader(run(["dvc", "exp", "show", "--only-changed", "--csv"], root)
                                .stdout.splitlines()))  # fmt: skip
    changed = [k for k in table[0] if k.startswith("metrics/demo/")]
    assert changed, table[0]
    proc = subprocess.run(
        ["dvc", "exp", "show", "--only-changed", "--no-pager"],
        cwd=root, env={**env(), "COLUMNS": "200"}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    lines = proc.stdout.rstrip("\n").splitlines()
    assert max(map(len, lines)) <= 200, proc.stdout
    header = next(line for line in lines if "Experiment" in line).split()
    assert set(changed) <= set(header), (changed, header)


def readme_way_back() -> list[list[str]]:
    """The README's commands back to the committed baseline after an experiment."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("Back to the committed baseline after an experiment", 1)[1]
    line = section.split("```bash\n", 1)[1].split("```", 1)[0].strip()
    return [command.split() for command in line.split(" && ")]


def _readme_way_back(experiment: Path, dest: Path, baseline: dict[str, str]) -> None:
    """In a copy of the workspace an experiment left: the README's way back ends with git and
    DVC clean, the baseline's bytes, and nothing for either engine to run."""
    copy_tree(experiment, dest)
    for command in readme_way_back():
        run(command, dest)
    assert run(["git", "status", "--porcelain"], dest).stdout == ""
    status = run(["dvc", "status", "--json"], dest)
    assert status.stdout.strip() in ("{}", ""), status.stdout[:3000]
    assert _checked(digests(dest)) == baseline
    assert planned_jobs(dest, "results/tables/", "all") == {}


def test_a_replaced_output_is_rebuilt_without_the_workflow_profile(
    demo_build: Path, tmp_path: Path
) -> None:
    """The guard needs no flag: with the workflow profile off, a dry run names the replaced
    file and plans its job and what reads it."""
    root = _clone_with_build(demo_build, tmp_path / "d")
    snakemake(root, "--cores", "1", "results/tables/", "all")  # the project's record of it
    summary = root / "results/scores/demo/summary.csv"
    summary.write_bytes(summary.read_bytes() + b"\n")  # other bytes, not written by a run
    proc = subprocess.run(
        ["snakemake", "--workflow-profile", "none", "--cores", "1", "-n", "results/tables/"],
        cwd=root,
        env=env(),
        capture_output=True,
        text=True,
    )
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-3000:]
    assert "  results/scores/demo/summary.csv" in text
    assert "rule summarize:" in text and "rule tables:" in text, text[-3000:]
