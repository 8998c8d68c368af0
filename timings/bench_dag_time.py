"""The demo's DAG time at two revisions on this machine (e.g. the pinned build against the
unpinned one).

Usage: python timings/bench_dag_time.py [--base 8be61bb] [--head HEAD] [--repeats 1] [--dry-run]

Each revision is exported (``git archive``) into a temporary folder and its demo is built from
scratch (``snakemake --cores 2 results/tables/ all``) with this virtualenv, its own ``src`` first
on ``PYTHONPATH``. The runs alternate (base, head, base, head, ...) so that a change in the
machine's load falls on both; each prints the wall time and the CPU time of the jobs (user +
system of every child process), which a shared machine disturbs far less than the wall time.
Only Snakemake's part is timed: installing and `dvc commit` are outside the DAG.
With ``--per-stage`` every ``halluscope`` call goes through ``/usr/bin/time`` and the CPU seconds
are summed per stage name, which says where a difference between the revisions comes from.

``--dry-run`` (seconds; the smoke run of tests/test_timings_smoke.py, since a real run builds
the demo twice from scratch): checks the revisions, exports each as a real run does (and writes
the ``--per-stage`` shim), and prints the command each build would run instead of running it.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def export(rev: str, dest: Path) -> Path:
    """The files of ``rev`` (what a clone at that revision holds) in ``dest``."""
    dest.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def commit_of(rev: str) -> str:
    """The commit ``rev`` names, or exit naming it (before anything is exported or built)."""
    found = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        raise SystemExit(f"bench_dag_time: {rev!r} is no commit of {ROOT}")
    return found.stdout.strip()


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timing_shim(root: Path, log: Path) -> Path:
    """A folder whose ``halluscope`` runs the real one under ``/usr/bin/time`` (into ``log``)."""
    shim = root / ".timing-shim"
    shim.mkdir()
    real = Path(sys.executable).parent / "halluscope"
    script = shim / "halluscope"
    script.write_text(
        f'#!/bin/sh\nexec /usr/bin/time -a -o "{log}" -f "%U %S $1 $2" "{real}" "$@"\n'
    )
    script.chmod(0o755)
    return shim


def per_stage(log: Path) -> dict[str, float]:
    """CPU seconds per ``halluscope`` subcommand (``stage NAME``) from the shim's log."""
    totals: dict[str, float] = {}
    for line in log.read_text().splitlines():
        fields = line.split()
        if len(fields) < 3 or not fields[0].replace(".", "").isdigit():
            continue  # a "Command exited with non-zero status" line
        name = " ".join(fields[2:])
        totals[name] = totals.get(name, 0.0) + float(fields[0]) + float(fields[1])
    return totals


def demo_command(root: Path, stage_log: Path | None) -> tuple[list[str], dict[str, str]]:
    """The command and environment of one demo build in ``root``."""
    bindir = Path(sys.executable).parent
    path = f"{bindir}{os.pathsep}{os.environ['PATH']}"
    if stage_log is not None:
        path = f"{timing_shim(root, stage_log)}{os.pathsep}{path}"
    env = {
        **os.environ,
        "PYTHONPATH": str(root / "src"),
        "PATH": path,
        "HF_HUB_OFFLINE": "1",
    }
    return [sys.executable, "-m", "snakemake", "--cores", "2", "results/tables/", "all"], env


def demo(root: Path, stage_log: Path | None = None) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and number of jobs of one demo build from scratch in ``root``."""
    cmd, env = demo_command(root, stage_log)
    cpu, start = children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, children_cpu() - cpu
    if proc.returncode:
        raise SystemExit(f"demo failed in {root}:\n{proc.stderr[-3000:]}")
    jobs = sum(1 for _ in (root / ".snakemake" / "metadata").iterdir())
    return wall, cpu, jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="8be61bb", help="the baseline revision")
    parser.add_argument("--head", default="HEAD", help="the revision compared with it")
    parser.add_argument("--repeats", type=int, default=1, help="demo builds per revision")
    parser.add_argument(
        "--per-stage", action="store_true", help="also sum the CPU seconds per halluscope stage"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="export and print the builds' commands, no build"
    )
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    for rev in (args.base, args.head):
        print(f"{rev}: commit {commit_of(rev)}")
    stages: dict[str, dict[str, float]] = {}
    times: dict[str, list[tuple[float, float]]] = {args.base: [], args.head: []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeats):
            for role, rev in (("base", args.base), ("head", args.head)):
                # named by role: a revision compared with itself (the noise) is exported twice
                root = export(rev, Path(tmp) / f"{role}-{i}")
                log = Path(tmp) / f"{role}-{i}.time" if args.per_stage else None
                if args.dry_run:
                    cmd, env = demo_command(root, log)
                    files = sum(1 for p in root.rglob("*") if p.is_file())
                    print(
                        f"{rev}: exported {files} files to {root}; would run "
                        f"PATH={env['PATH'].split(os.pathsep)[0]}:... "
                        f"PYTHONPATH={env['PYTHONPATH']} {' '.join(cmd)}"
                    )
                    continue
                wall, cpu, outputs = demo(root, log)
                if log is not None:
                    stages[rev] = per_stage(log)
                times[rev].append((wall, cpu))
                print(f"{rev}: wall {wall:.1f} s, jobs' CPU {cpu:.1f} s ({outputs} outputs)")
    if args.dry_run:
        return
    best = {rev: (min(w for w, _ in runs), min(c for _, c in runs)) for rev, runs in times.items()}
    for rev, (wall, cpu) in best.items():
        print(f"{rev}: best wall {wall:.1f} s, best CPU {cpu:.1f} s")
    if stages:
        names = sorted(set(stages[args.base]) | set(stages[args.head]))
        print(f"{'stage':32} {args.base:>10} {args.head:>10}")
        for name in names:
            base_cpu, head_cpu = stages[args.base].get(name, 0.0), stages[args.head].get(name, 0.0)
            print(f"{name:32} {base_cpu:10.1f} {head_cpu:10.1f}")
    (bw, bc), (hw, hc) = best[args.base], best[args.head]
    print(f"head/base: wall {hw / bw:.3f}, CPU {hc / bc:.3f} (target: within 1.10)")


if __name__ == "__main__":
    main()
