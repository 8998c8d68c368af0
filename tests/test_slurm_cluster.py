"""profiles/slurm on a real SLURM cluster: the demo through sbatch, the same bytes as a local run.

`make slurm-test` sets HALLUSCOPE_SLURM_TEST=1 and runs this module; elsewhere it is skipped (it
starts daemons as root and takes about half an hour on 2 cores). The module fixture starts the
single-node cluster of scripts/slurm_cluster.sh (partitions `cpu` and `gpu`, one pretend GPU) and
always stops it. One demo run through `snakemake --profile profiles/slurm` is checked for: one
SLURM job per rule instance, outputs byte-identical to a local run of the same copy, a job killed
with scancel resubmitted and the run complete, a GPU request routed to the `gpu` partition; then
a request no partition can meet fails naming the rule.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from pipeline_helpers import ROOT, built_copy, copy_project, env, sha256s

pytestmark = pytest.mark.skipif(
    os.environ.get("HALLUSCOPE_SLURM_TEST") != "1",
    reason="starts a SLURM cluster as root: run `make slurm-test`",
)

CLUSTER = ROOT / "scripts" / "slurm_cluster.sh"
SLURM_DIR = Path(os.environ.get("HALLUSCOPE_SLURM_DIR", "/tmp/halluscope-slurm"))
# The whole demo; HALLUSCOPE_SLURM_TARGETS (space-separated) runs a part of it instead.
TARGETS = tuple(os.environ.get("HALLUSCOPE_SLURM_TARGETS", "results/tables/ all").split())
# What differs between this test cluster and a site (README): no accounting database, so the
# executor polls squeue (MinJobAge keeps finished jobs for a day); no accounts; the test
# cluster's own partition limits; short first status check; SLURM logs kept to be read here.
TEST_CLUSTER_FLAGS = (
    "--slurm-partition-config",
    str(SLURM_DIR / "partitions.yaml"),
    "--slurm-status-command",
    "squeue",
    "--slurm-init-seconds-before-status-checks",
    "3",
    "--slurm-no-account",
    "--slurm-keep-successful-logs",
)
# The demo's models need no GPU; one rule asks for one here to prove the `gpu` route. The
# simulated LVLMs compute nothing on a device, so their bytes cannot change.
GPU_RULE = "pope_answers"
# The job killed with scancel: an LLM extraction, long enough to be caught running.
KILL_RULE = "extract"


def cluster_env() -> dict[str, str]:
    return {
        **env(),
        "SLURM_CONF": str(SLURM_DIR / "slurm.conf"),
        "HALLUSCOPE_SLURM_DIR": str(SLURM_DIR),
    }


def slurm(*cmd: str) -> str:
    return subprocess.run(cmd, env=cluster_env(), capture_output=True, text=True, check=True).stdout


def load() -> str:
    """The load average (1, 5, 15 min): the times printed here depend on it."""
    return "load " + " ".join(Path("/proc/loadavg").read_text().split()[:3])


def job_records() -> list[dict[str, str]]:
    """Every job the test cluster knows (finished ones too, for MinJobAge)."""
    out = slurm(
        "squeue",
        "--states=all",
        "--noheader",
        "-O",
        "JobID:20,State:20,Partition:20,tres-per-job:40,Comment:400",
    )
    records = []
    for line in out.splitlines():
        jobid, state, partition, tres, comment = line.split(maxsplit=4)
        records.append(
            {
                "jobid": jobid,
                "state": state,
                "partition": partition,
                "tres": tres,
                "comment": comment.strip(),
            }
        )
    return records


def rule_of(comment: str) -> str:
    """The rule of an executor comment `rule_<name>[_wildcards_<values>]`."""
    return re.sub(r"^rule_", "", comment).split("_wildcards_")[0]


def snakemake_cmd(*args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "snakemake",
        "--profile",
        "profiles/slurm",
        *TEST_CLUSTER_FLAGS,
        *args,
    ]


@pytest.fixture(scope="module")
def cluster():
    subprocess.run([str(CLUSTER), "stop"], env=cluster_env(), check=False, capture_output=True)
    subprocess.run([str(CLUSTER), "start"], env=cluster_env(), check=True)
    try:
        yield SLURM_DIR
    finally:
        subprocess.run([str(CLUSTER), "stop"], env=cluster_env(), check=False)


@pytest.fixture(scope="module")
def local_build(tmp_path_factory) -> Path:
    """The reference: the same demo, built locally (no executor) from a fresh copy."""
    started = time.monotonic()
    root = built_copy(tmp_path_factory.mktemp("local") / "halluscope", *TARGETS)
    print(f"local reference build: {time.monotonic() - started:.0f} s, {load()}")
    return root


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> Counter:
    """Rule -> jobs of the demo that run a command (Snakemake runs `all` itself)."""
    root = copy_project(tmp_path_factory.mktemp("plan") / "halluscope")
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", *TARGETS],
        cwd=root,
        env=env(),
        capture_output=True,
        text=True,
        check=True,
    )
    jobs = Counter(re.findall(r"^rule (\w+):", proc.stdout + proc.stderr, re.M))
    del jobs["all"]  # no command: the target rule never reaches an executor
    return jobs


@pytest.fixture(scope="module")
def slurm_build(cluster, local_build, tmp_path_factory) -> dict:
    """The demo through the SLURM executor, one job of KILL_RULE cancelled while it runs."""
    root = copy_project(tmp_path_factory.mktemp("slurm") / "halluscope")
    log = root.parent / "snakemake.log"
    started = time.monotonic()
    with open(log, "w") as out:
        proc = subprocess.Popen(
            snakemake_cmd("--set-resources", f"{GPU_RULE}:gpu=1", "--", *TARGETS),
            cwd=root,
            env=cluster_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
        killed = None
        while proc.poll() is None:
            if killed is None:
                running = [
                    r
                    for r in job_records()
                    if r["state"] == "RUNNING" and rule_of(r["comment"]) == KILL_RULE
                ]
                if running:
                    killed = running[0]
                    time.sleep(2)  # well inside the job (the job step has started)
                    slurm("scancel", killed["jobid"])
            time.sleep(2)
    return {
        "root": root,
        "returncode": proc.returncode,
        "log": log.read_text(),
        "killed": killed,
        "records": job_records(),
        "seconds": time.monotonic() - started,
        "load": load(),
    }


def test_demo_runs_through_slurm(slurm_build):
    print(
        f"SLURM demo run: {slurm_build['seconds']:.0f} s, {len(slurm_build['records'])} jobs,"
        f" {slurm_build['load']}"
    )
    assert slurm_build["returncode"] == 0, slurm_build["log"][-5000:]


def test_every_rule_instance_is_one_completed_slurm_job(slurm_build, planned):
    done = [r for r in slurm_build["records"] if r["state"] == "COMPLETED"]
    comments = Counter(r["comment"] for r in done)
    assert [c for c, n in comments.items() if n > 1] == []  # one job per rule instance
    assert Counter(rule_of(c) for c in comments) == planned
    # nothing ran but these jobs and the one cancelled (no failures, no extra submissions)
    others = [r for r in slurm_build["records"] if r["state"] != "COMPLETED"]
    assert [r["jobid"] for r in others] == [slurm_build["killed"]["jobid"]]


def test_outputs_byte_identical_to_local_run(slurm_build, local_build):
    def files(root: Path) -> list[str]:
        return sorted(
            str(p.relative_to(root))
            for name in ("results", "metrics")
            for p in (root / name).rglob("*")
            if p.is_file()
        )

    slurm_root = slurm_build["root"]
    assert files(slurm_root) == files(local_build)
    names = files(local_build)
    assert names
    local, remote = sha256s(local_build, names), sha256s(slurm_root, names)
    assert [n for n in names if local[n] != remote[n]] == []


def test_scancelled_job_is_reported_and_resubmitted(slurm_build):
    killed = slurm_build["killed"]
    assert killed is not None, f"no {KILL_RULE} job was seen running"
    records = {r["jobid"]: r for r in slurm_build["records"]}
    assert records[killed["jobid"]]["state"] == "CANCELLED"
    again = [
        r
        for r in slurm_build["records"]
        if r["comment"] == killed["comment"] and r["state"] == "COMPLETED"
    ]
    assert len(again) == 1 and int(again[0]["jobid"]) > int(killed["jobid"])
    log = slurm_build["log"]
    assert f"Error in rule {KILL_RULE}:" in log
    assert f"SLURM-job '{killed['jobid']}' failed, SLURM status is: 'CANCELLED'" in log
    assert "Trying to restart job" in log


def test_gpu_requests_go_to_the_gpu_partition(slurm_build):
    for r in slurm_build["records"]:
        if rule_of(r["comment"]) == GPU_RULE:
            assert (r["partition"], r["tres"]) == ("gpu", "gres:gpu:1"), r
        else:
            assert (r["partition"], r["tres"]) == ("cpu", "N/A"), r


def test_unmeetable_request_fails_naming_the_rule(slurm_build):
    """Memory no partition has: the executor finds no partition, sbatch refuses, the run stops
    with the rule's name and SLURM's reason (run last: it reruns a job of the built copy)."""
    target = "results/responses/demo/sim-precise/i01.jsonl"
    proc = subprocess.run(
        snakemake_cmd(
            "--set-resources", "generate:mem_mb=100000000", "--forcerun", "generate", "--", target
        ),
        cwd=slurm_build["root"],
        env=cluster_env(),
        capture_output=True,
        text=True,
    )
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "No suitable partition found for job generate" in text
    assert "Error in rule generate:" in text
    assert "Memory specification can not be satisfied" in text
