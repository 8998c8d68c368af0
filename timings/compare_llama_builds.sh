#!/usr/bin/env bash
# On demand (compiles llama.cpp once more, ~10 min on 2 cores): does another instruction-set
# level of llama.cpp give the demo's LLM extraction the same bytes as the pinned build?
#
# Usage: timings/compare_llama_builds.sh [--dry-run] [CMAKE_ARGS]   (default: -DGGML_NATIVE=ON,
#        i.e. the level a plain `pip install llama-cpp-python` would pick on this CPU)
#
# Builds llama-cpp-python (the locked version) with CMAKE_ARGS into a temporary folder, runs the
# extraction of 12 demo captions (empty response cache, 1 thread) with the installed pinned build
# and with the other one, and prints both digests and times. Nothing in .venv changes.
#
# --dry-run (seconds; the smoke run of tests/test_timings_smoke.py, since the build alone takes
# minutes): checks the arguments, prints the build command instead of running it, and runs the
# pinned side on 1 caption (the comparison's own code, with the installed build).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
DRY_RUN=0
if [ "${1:-}" = "--dry-run" ]; then
    DRY_RUN=1
    shift
fi
case "${1:-}" in
    -D*|"") ;;
    *) echo "usage: $0 [--dry-run] [CMAKE_ARGS]   (CMAKE_ARGS: -D options, got '$1')" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "usage: $0 [--dry-run] [CMAKE_ARGS]   (quote CMAKE_ARGS as one word)" >&2; exit 2; }
OTHER_ARGS=${1:--DGGML_NATIVE=ON}
VERSION=$(sed -n 's/^llama_cpp_python==//p' requirements.lock)
[ -n "$VERSION" ] || { echo "no llama_cpp_python==VERSION line in requirements.lock" >&2; exit 2; }
[ -x "$PY" ] || { echo "$PY missing: make install (or PYTHON=...)" >&2; exit 2; }
CAPTIONS=12
[ "$DRY_RUN" = 0 ] || CAPTIONS=1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

BUILD=(env "CMAKE_ARGS=$OTHER_ARGS" "$PY" -m pip install --quiet --no-cache-dir
       --no-binary llama-cpp-python --no-deps --target "$WORK/site" "llama-cpp-python==$VERSION")
if [ "$DRY_RUN" = 1 ]; then
    echo "dry run: would build: ${BUILD[*]}"
else
    echo "building llama-cpp-python $VERSION with: $OTHER_ARGS" >&2
    "${BUILD[@]}"
fi

"$PY" - "$WORK" "$DRY_RUN" "$CAPTIONS" <<'PY'
import json, os, subprocess, sys, time
from pathlib import Path

work, dry_run, captions = Path(sys.argv[1]), sys.argv[2] == "1", sys.argv[3]
script = """
import sys, time, tempfile
from pathlib import Path
sys.path.insert(0, "tests")
from test_kernel_pinning import _extract, _responses
import llama_cpp
tmp = Path(tempfile.mkdtemp())
start = time.perf_counter()
extra = {"HALLUSCOPE_NATIVE_KERNELS": "1"} if sys.argv[1] == "native" else {}
digest = _extract(tmp, "cmp", _responses(tmp / "r.jsonl", int(sys.argv[2])), 1, extra)
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
        [sys.executable, "-c", script, mode, captions], env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    return out.stdout.strip().splitlines()[-1]

pinned = run(None, False)
print("pinned:", pinned)
if dry_run:
    print(f"dry run: the other build's run (PYTHONPATH={work / 'site'}) and the comparison skipped")
    sys.exit(0)
other = run(work / "site", True)
print("other: ", other)
print("IDENTICAL" if pinned.split()[0] == other.split()[0] else "DIFFERENT")
PY
