"""halluscope.provenance on a real Snakemake workflow: an output replaced behind Snakemake's back
(as `dvc checkout` does) is rebuilt with the current params; a touch that keeps its bytes (as
`dvc commit` does) is not a replacement."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SNAKEFILE = """
from halluscope.provenance import code_param, describe, note, record, replaced_jobs
from halluscope.provenance import replaced_outputs

ROOTS = ["results/x/demo"]
code = code_param("digest", "stage", "demo")

onsuccess:
    record("demo", ROOTS)

rule all:
    input: "results/x/demo/table.txt"

rule score:
    input: "params.txt"
    output: "results/x/{profile}/score.txt"
    params: k=config["top_k"], code=code
    shell: "echo k={params.k} > {output}"

rule table:
    input: "results/x/demo/score.txt"
    output: directory("results/x/demo/tables")
    params: k=config["top_k"], code=code
    shell:
        "mkdir -p {output} && cp {input} {output}/t.txt && "
        "echo label-k={params.k} >> {output}/t.txt"

rule final:
    input: "results/x/demo/tables"
    output: "results/x/demo/table.txt"
    params: code=code
    shell: "cat {input}/t.txt > {output}"

_replaced = replaced_outputs("demo", ROOTS)
if _replaced:
    print(describe(_replaced), file=sys.stderr)
    note("demo", replaced_jobs(workflow.rules, _replaced))
"""


def _snakemake(root: Path, k: int, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]}
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", *extra, "--config", f"top_k={k}"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.fixture()
def workflow(tmp_path: Path) -> Path:
    (tmp_path / "Snakefile").write_text(SNAKEFILE, encoding="utf-8")
    (tmp_path / "params.txt").write_text("an input of rule score\n", encoding="utf-8")
    assert _snakemake(tmp_path, 5).returncode == 0
    return tmp_path


def _read(root: Path, name: str) -> str:
    return (root / "results/x/demo" / name).read_text(encoding="utf-8")


def test_replaced_output_is_rebuilt_with_the_current_params(workflow: Path) -> None:
    k5 = {n: _read(workflow, n) for n in ("score.txt", "table.txt", "tables/t.txt")}
    assert _snakemake(workflow, 3).returncode == 0  # params changed
    assert _read(workflow, "table.txt") == "k=3\nlabel-k=3\n"
    for name, text in k5.items():  # what `dvc checkout` of the k=5 lock does
        (workflow / "results/x/demo" / name).write_text(text, encoding="utf-8")
    dry = _snakemake(workflow, 3, "-n")  # a dry run already plans the rebuild
    assert "results/x/demo/score.txt" in dry.stderr and "rule score" in dry.stdout
    proc = _snakemake(workflow, 3)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "  results/x/demo/tables/t.txt" in proc.stderr
    assert _read(workflow, "table.txt") == "k=3\nlabel-k=3\n"
    assert _read(workflow, "tables/t.txt") == "k=3\nlabel-k=3\n"
    dry = _snakemake(workflow, 3, "-n")
    assert "Nothing to be done" in dry.stdout + dry.stderr


def test_a_replaced_file_alone_in_a_directory_output_reruns_its_job(workflow: Path) -> None:
    """Snakemake takes a directory() output's time from the folder or a marker inside it: the
    whole folder is aged, so its job reruns though its input did not change."""
    (workflow / "results/x/demo/tables/t.txt").write_text("k=9\n", encoding="utf-8")
    proc = _snakemake(workflow, 5)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _read(workflow, "tables/t.txt") == "k=5\nlabel-k=5\n"
    assert _read(workflow, "table.txt") == "k=5\nlabel-k=5\n"


def test_snakemakes_params_trigger_holds(workflow: Path) -> None:
    """What the guard relies on (fails loudly if a Snakemake upgrade changes it): a job whose
    params value changed reruns, and so does what depends on it, with the default triggers."""
    from halluscope.provenance import _job_key, note

    note("demo", [_job_key("stage", {"profile": "demo"})], records=workflow / ".halluscope")
    dry = _snakemake(workflow, 5, "-n")
    text = dry.stdout + dry.stderr
    assert "were replaced" not in text  # the bytes are the ones recorded
    assert "rule score" in text and "rule table" in text and "rule final" in text, text[-2000:]


def test_a_touch_that_keeps_the_bytes_is_not_a_replacement(workflow: Path) -> None:
    score = workflow / "results/x/demo/score.txt"
    os.utime(score, (score.stat().st_atime, score.stat().st_mtime - 60))  # older, same bytes
    dry = _snakemake(workflow, 5, "-n")
    text = dry.stdout + dry.stderr
    assert "were replaced" not in text
    assert "Nothing to be done" in text
