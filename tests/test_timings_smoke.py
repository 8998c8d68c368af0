"""Every script of ``timings/`` runs: each at its smoke size, as a subprocess, exit 0 and the
lines of its figures in their printed shape (never a timing value: those depend on the machine).

Why: the scripts import the library's internals (settings types, backend helpers, test
helpers) and nothing else runs them, so a refactoring breaks them silently. The smoke sizes run
the scripts' own code paths on small inputs: hand-made or demo data where a script reads the
data mirror (the mirror is pointed at an empty folder here, so none is read), and a dry run for
the scripts that need another CPU or a second build (``replicate_on_other_cpu.sh``,
``compare_llama_builds.sh``, ``bench_dag_time.py``). The tests that load llama.cpp or MiniLM in
several processes, or need the demo build, are in the slow tier.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pipeline_helpers import ROOT, env

TIMINGS = ROOT / "timings"
NUMBER = r"-?[\d,]+(?:\.\d+)?"  # a figure as the scripts print it (1,234.5)


def script_env() -> dict[str, str]:
    """The tests' environment without this pytest-xdist worker's own variables (one script
    starts a pytest run of its own)."""
    return {k: v for k, v in env().items() if not k.startswith(("PYTEST_XDIST", "PYTEST_CUR"))}


def run_timing(tmp_path: Path, script: str, *args: str) -> list[str]:
    """Run ``timings/<script>`` with ``args`` from the project root; the stdout lines."""
    cmd = [sys.executable, str(TIMINGS / script)] if script.endswith(".py") else [TIMINGS / script]
    mirror = tmp_path / "empty-mirror"
    mirror.mkdir(exist_ok=True)
    extra = {"HALLUSCOPE_DATA_MIRROR": str(mirror), "PYTHON": sys.executable}
    proc = subprocess.run(
        [*map(str, cmd), *args],
        cwd=ROOT,
        env={**script_env(), **extra},
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, f"{script} {args}:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc.stdout.splitlines()


def assert_lines(lines: list[str], *patterns: str) -> None:
    """Each pattern matches a whole line of ``lines``, in this order (other lines may come
    between them)."""
    rest = iter(lines)
    for pattern in patterns:
        assert any(re.fullmatch(pattern, line) for line in rest), (pattern, lines)


def demo_images() -> int:
    data = yaml.safe_load((ROOT / "data/demo/annotations.yaml").read_text(encoding="utf-8"))
    return len(data["images"])


# ------------------------------------------------------------------------------ fast tier


def test_bench_backends(tmp_path: Path) -> None:
    lines = run_timing(tmp_path, "bench_backends.py", "--smoke")
    assert_lines(
        lines,
        rf"cache get: 500 lookups over 50 entries in {NUMBER} s = {NUMBER} lookups/s \(.*\)",
        rf"cache resolve \(all hits, incl\. key hashing\): 50 requests in {NUMBER} s = "
        rf"{NUMBER} requests/s",
        rf"openai backend: {NUMBER} ms/request \(1 in flight, batches of 8\); bare httpx2 POST: "
        rf"{NUMBER} ms/request; backend overhead: {NUMBER} ms/request \(.*\)",
        rf"openai backend, 8 in flight, batches of 64: {NUMBER} ms/request = {NUMBER} requests/s",
    )


def test_bench_caos(tmp_path: Path) -> None:
    lines = run_timing(tmp_path, "bench_caos.py", "--smoke")
    assert_lines(
        lines, rf"glove: 200 captions in {NUMBER} s = {NUMBER} captions/s \(CAOS_avg={NUMBER}\)"
    )


def test_bench_chair_on_hand_made_input(tmp_path: Path) -> None:
    lines = run_timing(tmp_path, "bench_chair.py", "--smoke")
    captions = 10 * demo_images()  # every demo caption once per caption file
    assert_lines(
        lines,
        rf"CHAIR over {captions} captions: {NUMBER} s \({NUMBER} captions/s; CHAIR_S {NUMBER}, "
        rf"CHAIR_I {NUMBER}\); target < 10 s",
    )


def test_bench_paper_scale(tmp_path: Path) -> None:
    lines = run_timing(tmp_path, "bench_paper_scale.py", "--smoke")
    assert_lines(
        lines,
        rf"generated 280 captions in {NUMBER} s \(not timed\)",
        rf"  CAOS glove: {NUMBER} s incl\. loading \(CAOS_avg {NUMBER}\)",
        rf"CHAIR {NUMBER} s \(CHAIR_S {NUMBER}\); object lists {NUMBER} s",
        rf"TOTAL scoring 280 captions: {NUMBER} s; peak RSS {NUMBER} MB",
    )


def test_bench_profiles_on_the_demo_data(tmp_path: Path) -> None:
    lines = run_timing(tmp_path, "bench_profiles.py", "--smoke")
    assert_lines(
        lines, rf"demo \(results/data/demo/items\.jsonl\): {NUMBER} s from scratch(, peak RSS .*)?"
    )


def test_bench_dag_time_dry_run(tmp_path: Path) -> None:
    """A real run builds the demo twice from scratch: the dry run checks the revisions, exports
    them and writes the per-stage shim. HEAD against itself, so that a shallow clone runs it."""
    lines = run_timing(
        tmp_path, "bench_dag_time.py", "--dry-run", "--per-stage", "--base", "HEAD~0"
    )
    exported = r"{}: exported \d+ files to \S+/{}-0; would run PATH=\S+/\.timing-shim:\.\.\. "
    assert_lines(
        lines,
        r"HEAD~0: commit [0-9a-f]{40}",
        r"HEAD: commit [0-9a-f]{40}",
        exported.format("HEAD~0", "base") + r"PYTHONPATH=\S+ .* results/tables/ all",
        exported.format("HEAD", "head") + r"PYTHONPATH=\S+ .* results/tables/ all",
    )
    proc = subprocess.run(
        [sys.executable, str(TIMINGS / "bench_dag_time.py"), "--dry-run", "--base", "no-such-rev"],
        cwd=ROOT,
        env=script_env(),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "'no-such-rev' is no commit" in proc.stderr


def test_cpu_by_command(tmp_path: Path) -> None:
    lines = run_timing(tmp_path, "cpu_by_command.py", "--smoke")
    assert_lines(
        lines,
        rf"pytest exit status 0; CPU of the whole run {NUMBER} s, of which Python processes "
        rf"logged {NUMBER} s \(.*\)",
        r"   CPU s  procs  command",
    )
    rows = [line for line in lines if re.fullmatch(rf" *{NUMBER} +\d+  .+", line)]
    kinds = {line.split(maxsplit=2)[2] for line in rows}
    assert "pytest (the main process)" in kinds
    assert any(kind.startswith("python -c") for kind in kinds), rows


def test_file_seconds(tmp_path: Path) -> None:
    """A hand-made JUnit report (two files of the suite), written elsewhere than the committed
    tests/file_seconds.json."""
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.test_fetch" name="a" time="1.25"/>'
        '<testcase classname="tests.test_fetch" name="b" time="0.5"/>'
        '<testcase classname="tests.test_chair" name="c" time="2"/>'
        "</testsuite></testsuites>",
        encoding="utf-8",
    )
    out = tmp_path / "file_seconds.json"
    lines = run_timing(tmp_path, "file_seconds.py", str(report), "--out", str(out))
    assert_lines(lines, rf"wrote {re.escape(str(out))}: 2 test files, {NUMBER} s in all")
    assert json.loads(out.read_text(encoding="utf-8")) == {
        "tests/test_chair.py": 2.0,
        "tests/test_fetch.py": 1.8,
    }


def test_replicate_on_other_cpu_dry_run(tmp_path: Path) -> None:
    """A real run takes most of an hour on an emulated CPU: the dry run checks the arguments, the
    emulator, the job wrapper and the final comparison (the committed lock against itself)."""
    lines = run_timing(tmp_path, "replicate_on_other_cpu.sh", "--dry-run", "EPYC-Rome", "2")
    assert_lines(
        lines,
        r"dry run: job wrapper \S+/emulated/halluscope written, syntax checked",
        r"dry run: would run: git clone .*/A && ln -s .*",
        r"dry run: would run in \S+/A: PATH=\S+/native:.* snakemake --cores 2 results/tables/ all"
        r" && dvc commit --force --quiet",
        r"dry run: would run: git clone .*/B && ln -s .*",
        r"dry run: would run in \S+/B: PATH=\S+/emulated:.* snakemake --cores 2 .*",
        r"IDENTICAL: all \d+ outputs of dvc\.lock, natively and on an emulated EPYC-Rome; .*",
    )
    if not any(line.startswith("dry run: qemu-x86_64 missing") for line in lines):
        assert_lines(lines, r"dry run: emulated EPYC-Rome runs Python 3\.\d+\.\d+")
    for bad in (["--dry-run", "EPYC-Rome", "three"], ["--dry-run", "a", "1", "extra"]):
        proc = subprocess.run(
            [str(TIMINGS / "replicate_on_other_cpu.sh"), *bad],
            cwd=ROOT,
            env=script_env(),
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 2 and proc.stderr.startswith("usage: "), (bad, proc.stderr)


# ------------------------------------------------------------------------------ slow tier


@pytest.mark.slow  # llama.cpp in two processes (one at a time, batched)
def test_bench_llm_stages_on_demo_captions(tmp_path: Path) -> None:
    lines = run_timing(tmp_path, "bench_llm_stages.py", "--smoke", "--n-seq", "4")
    result = json.loads(lines[-1])
    assert list(result) == [
        "n",
        "requests",
        "one_cps",
        "batched_cps",
        "ratio",
        "identical_replies",
        "valid_json",
        "threads",
        "n_seq",
        "batch_size",
    ]
    assert result["n"] == 4 and result["n_seq"] == 4
    assert result["requests"] == 4  # four distinct captions
    assert result["identical_replies"] == 4  # batched decoding keeps every byte
    assert 0 <= result["valid_json"] <= 4
    assert all(result[k] > 0 for k in ("one_cps", "batched_cps", "ratio"))


@pytest.mark.slow  # MiniLM in two processes, llama.cpp in a third
def test_bench_kernel_pinning(tmp_path: Path) -> None:
    lines = run_timing(tmp_path, "bench_kernel_pinning.py", "--smoke")
    minilm = r"MiniLM {} +80 names: best {} s \({} names/s\), digests \['[0-9a-f]{{12}}'\]"
    assert_lines(
        lines,
        minilm.format(r"pinned \(AVX2, MKL strict\)", NUMBER, NUMBER),
        minilm.format("native", NUMBER, NUMBER),
        rf"LLM extraction \(installed build, 1 thread\): 1 captions in {NUMBER} s wall .*",
    )


@pytest.mark.slow  # llama.cpp in the stage process the pinned side starts
def test_compare_llama_builds_dry_run(tmp_path: Path) -> None:
    """A real run compiles llama.cpp (~10 min): the dry run prints the build command and runs the
    pinned side on one caption."""
    lines = run_timing(tmp_path, "compare_llama_builds.sh", "--dry-run")
    assert_lines(
        lines,
        r"dry run: would build: env CMAKE_ARGS=-DGGML_NATIVE=ON \S+ -m pip install .* "
        r"llama-cpp-python==\d+\.\d+\.\d+",
        rf"pinned: [0-9a-f]{{64}} {NUMBER} .+",  # digest, seconds, llama.cpp's system info
        r"dry run: the other build's run \(PYTHONPATH=\S+\) and the comparison skipped",
    )
    proc = subprocess.run(
        [str(TIMINGS / "compare_llama_builds.sh"), "--dry-run", "GGML_NATIVE=ON"],
        cwd=ROOT,
        env=script_env(),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stderr.startswith("usage: ")


@pytest.mark.slow  # needs the demo build; reruns its figure jobs
def test_bench_pipeline_from_the_demo_build(tmp_path: Path, demo_build: Path) -> None:
    lines = run_timing(tmp_path, "bench_pipeline.py", "--build", str(demo_build))
    assert_lines(
        lines,
        rf"complete demo run: copied from {re.escape(str(demo_build))} \(set-up, not a target\)",
        r"  jobs before the no-op: \{.*\}",
        rf"no-op snakemake: {NUMBER} s \(target < 5 s\)",
        r"  jobs after the edit: \{.*'figure': \d+.*\}",
        rf"figure parameter edit -> rebuilt figures: {NUMBER} s \(target < 20 s\)",
    )
