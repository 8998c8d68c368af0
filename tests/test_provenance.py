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
from halluscope.provenance import describe, mark_incomplete, record_built, replaced_outputs

ROOTS = ["results/x/demo"]
_replaced = replaced_outputs(ROOTS)
if _replaced:
    print(describe(_replaced), file=sys.stderr)
    mark_incomplete({r.output for r in _replaced})

onsuccess:
    record_built(ROOTS)

rule all:
    input: "results/x/demo/table.txt"

rule score:
    output: "results/x/demo/score.txt"
    params: k=config["top_k"]
    shell: "echo k={params.k} > {output}"

rule table:
    input: "results/x/demo/score.txt"
    output: directory("results/x/demo/tables")
    params: k=config["top_k"]
    shell:
        "mkdir -p {output} && cp {input} {output}/t.txt && "
        "echo label-k={params.k} >> {output}/t.txt"

rule final:
    input: "results/x/demo/tables"
    output: "results/x/demo/table.txt"
    shell: "cat {input}/t.txt > {output}"
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
    assert _snakemake(tmp_path, 5).returncode == 0
    return tmp_path


def _read(root: Path, name: str) -> str:
    return (root / "results/x/demo" / name).read_text(encoding="utf-8")


def test_replaced_output_is_rebuilt_with_the_current_params(workflow: Path) -> None:
    k5 = {n: _read(workflow, n) for n in ("score.txt", "table.txt", "tables/t.txt")}
    assert _snakemake(workflow, 3, "--rerun-incomplete").returncode == 0  # params changed
    assert _read(workflow, "table.txt") == "k=3\nlabel-k=3\n"
    for name, text in k5.items():  # what `dvc checkout` of the k=5 lock does
        (workflow / "results/x/demo" / name).write_text(text, encoding="utf-8")
    proc = _snakemake(workflow, 3, "--rerun-incomplete")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "results/x/demo/score.txt  (rule score)" in proc.stderr
    assert "results/x/demo/tables/t.txt  (rule table)" in proc.stderr
    assert _read(workflow, "table.txt") == "k=3\nlabel-k=3\n"
    dry = _snakemake(workflow, 3, "-n")
    assert "Nothing to be done" in dry.stdout + dry.stderr


def test_without_rerun_incomplete_the_run_stops_naming_the_file(workflow: Path) -> None:
    score = workflow / "results/x/demo/score.txt"
    score.write_text("k=9\n", encoding="utf-8")
    proc = _snakemake(workflow, 5, "-n")
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "results/x/demo/score.txt" in text and "--rerun-incomplete" in text


def test_a_touch_that_keeps_the_bytes_is_not_a_replacement(workflow: Path) -> None:
    score = workflow / "results/x/demo/score.txt"
    os.utime(score, (score.stat().st_atime + 60, score.stat().st_mtime + 60))  # `dvc commit`
    dry = _snakemake(workflow, 5, "-n")
    text = dry.stdout + dry.stderr
    assert "replaced after Snakemake built them" not in text
    assert "Nothing to be done" in text
