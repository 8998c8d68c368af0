"""Where the test suite's CPU goes, per kind of command (on demand, not part of `make test`).

Usage: python timings/cpu_by_command.py [PYTEST ARGS...]   (default: -m slow)
       python timings/cpu_by_command.py --smoke   (seconds: one tiny test file of its own)

Why: `make test` is CPU-bound on 2 cores (both pytest-xdist workers busy to the end), so only less
CPU work shortens it, and most of that work runs in subprocesses (Snakemake jobs, DVC, the stage
commands of the kill/resume tests) that pytest's own timings attribute to whole tests. This runs
pytest (two workers, one file per worker, as `make test` does) with a ``sitecustomize`` that makes
every Python process append its own CPU time (user + system, children excluded) and command line
to a log when it exits, then sums the log per command kind: ``halluscope stage NAME``,
``snakemake`` (run or dry run), ``dvc SUBCOMMAND``, ``python -c`` (the tests' own model
processes, e.g. the emulated CPU), the pytest workers. Processes that are killed (SIGKILL in the
kill/resume tests) write nothing, and non-Python programs (java, pdflatex, qemu's own start) are
counted only as the difference between the whole run's CPU and the logged sum.

``--smoke`` runs the same on a test file written to a temporary folder (two tests, one starting
a ``python -c`` child), outside the project's tests, so the run takes seconds.
"""

from __future__ import annotations

import collections
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SITECUSTOMIZE = """
import atexit, os, resource, sys

def _log_cpu() -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    line = " ".join(sys.argv).replace("\\t", " ").replace("\\n", " ")[:400]
    with open(os.path.join({log!r}, f"{{os.getpid()}}.tsv"), "a", encoding="utf-8") as out:
        out.write(f"{{usage.ru_utime + usage.ru_stime:.2f}}\\t{{line}}\\n")

atexit.register(_log_cpu)
"""

SMOKE_TESTS = """
import subprocess
import sys


def test_child_process():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_in_worker():
    assert sum(range(10)) == 45
"""


def command_kind(argv: str) -> str:
    """A short name for a logged command line (what the summary groups by)."""
    words = argv.split()
    stage = words.index("stage") + 1 if "stage" in words else len(words)
    if stage < len(words):
        return "halluscope stage " + words[stage]
    if "snakemake" in argv[:200]:
        return "snakemake -n" if " -n" in argv else "snakemake"
    if words and Path(words[0]).name == "dvc" and len(words) > 1:
        return "dvc " + words[1]
    if words and Path(words[0]).parent.name == "pytest":
        return "pytest (the main process)"
    if words[:1] == ["-c"]:
        return "python -c (pytest-xdist workers, tests' model processes)"
    return " ".join(Path(w).name for w in words[:2]) or "?"


def main(pytest_args: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        site, log = Path(tmp, "site"), Path(tmp, "log")
        site.mkdir()
        log.mkdir()
        (site / "sitecustomize.py").write_text(SITECUSTOMIZE.format(log=str(log)), "utf-8")
        if pytest_args == ["--smoke"]:
            smoke = Path(tmp, "smoke", "test_cpu_smoke.py")
            smoke.parent.mkdir()
            smoke.write_text(SMOKE_TESTS, "utf-8")
            pytest_args = ["-p", "no:cacheprovider", str(smoke)]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        # the Makefile's PYTEST options, with its two workers (one per core here)
        command = [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadfile",
                   "--no-loadscope-reorder", *(pytest_args or ["-m", "slow"])]  # fmt: skip
        status = subprocess.run(command, cwd=ROOT, env=env).returncode
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        total = children.ru_utime + children.ru_stime
        kinds: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
        for path in log.glob("*.tsv"):
            for line in path.read_text(encoding="utf-8").splitlines():
                seconds, _, argv = line.partition("\t")
                kind = kinds[command_kind(argv)]
                kind[0] += 1
                kind[1] += float(seconds)
    logged = sum(cpu for _, cpu in kinds.values())
    print(
        f"\npytest exit status {status}; CPU of the whole run {total:.0f} s, of which Python "
        f"processes logged {logged:.0f} s (the rest: java, pdflatex, git, killed processes)"
    )
    print(f"{'CPU s':>8} {'procs':>6}  command")
    for kind, (count, cpu) in sorted(kinds.items(), key=lambda item: -item[1][1]):
        print(f"{cpu:8.1f} {count:6d}  {kind}")
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
