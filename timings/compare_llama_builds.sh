#!/usr/bin/env bash
# On demand (compiles llama.cpp once more, ~10 min on 2 cores): does another instruction-set
# level of llama.cpp give the demo's LLM extraction the same bytes as the pinned build?
#
# Usage: timings/compare_llama_builds.sh [CMAKE_ARGS]   (default: -DGGML_NATIVE=ON, i.e. the
#        level a plain `pip install llama-cpp-python` would pick on this CPU)
#
# Builds llama-cpp-python (the locked version) with CMAKE_ARGS into a temporary folder, runs the
# extraction of 12 demo captions (empty response cache, 1 thread) with the installed pinned build
# and with the other one, and prints both digests and times. Nothing in .venv changes.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
OTHER_ARGS=${1:--DGGML_NATIVE=ON}
VERSION=$(sed -n 's/^llama_cpp_python==//p' requirements.lock)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "building llama-cpp-python $VERSION with: $OTHER_ARGS" >&2
CMAKE_ARGS="$OTHER_ARGS" "$PY" -m pip install --quiet --no-cache-dir --no-binary llama-cpp-python \
    --no-deps --target "$WORK/site" "llama-cpp-python==$VERSION"

"$PY" - "$WORK" <<'EOF'
import json, os, subprocess, sys, time
from pathlib import Path

work = Path(sys.argv[1])
script = """
import sys, time, tempfile
from pathlib import Path
sys.path.insert(0, "tests")
from test_kernel_pinning import _extract, _responses
import llama_cpp
tmp = Path(tempfile.mkdtemp())
start = time.perf_counter()
extra = {"HALLUSCOPE_NATIVE_KERNELS": "1"} if sys.argv[1] == "native" else {}
digest = _extract(tmp, "cmp", _responses(tmp / "r.jsonl", 12), 1, extra)
print(digest, round(time.perf_counter() - start, 1), llama_cpp.llama_print_system_info().decode())
"""
def run(extra_path, native):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if extra_path:
        env["PYTHONPATH"] = str(extra_path) + os.pathsep + env.get("PYTHONPATH", "")
    if native:
        env["HALLUSCOPE_NATIVE_KERNELS"] = "1"  # let the stage use the unpinned build
    mode = "native" if native else "pinned"
    out = subprocess.run(
        [sys.executable, "-c", script, mode], env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    return out.stdout.strip().splitlines()[-1]

pinned = run(None, False)
other = run(work / "site", True)
print("pinned:", pinned)
print("other: ", other)
print("IDENTICAL" if pinned.split()[0] == other.split()[0] else "DIFFERENT")
EOF
