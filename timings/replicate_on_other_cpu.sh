#!/usr/bin/env bash
# On demand (about 45 min on 2 cores): does a clean demo build on ANOTHER CPU reproduce the
# committed dvc.lock? Every pipeline job runs on an emulated CPU (qemu-user, TCG), by default an
# AMD EPYC-Rome: vendor AuthenticAMD, AVX2 and FMA but no AVX-512, where this machine may be an
# Intel with AVX-512. torch, oneDNN, MKL and OpenBLAS read the emulated CPUID and would choose
# other kernels if they were not pinned; llama.cpp runs its pinned x86-64-v3 build.
#
# Usage: timings/replicate_on_other_cpu.sh [--dry-run] [QEMU_CPU] [SAMPLE]   (qemu-x86_64 -cpu help)
# Needs: qemu-user (Debian: apt-get install qemu-user) and the project's .venv (make install).
#
# llama.cpp under TCG decodes about one token in 10 s, and the demo asks it for a few hundred
# replies, so the emulated build takes the native build's llama.cpp replies from the response
# cache except SAMPLE of them (default 3), which it decodes itself:
#   1. clone A, native: `snakemake --cores 2 results/tables/ all`, `dvc commit` (as make demo);
#   2. clone B: A's cached llama.cpp replies minus the sample; the same build, Snakemake natively
#      and each job's `halluscope` through qemu-x86_64 (the simulated LVLMs, MiniLM, GloVe,
#      every score, table, figure and report are computed on the emulated CPU);
#   3. every output hash of A and of B against the committed dvc.lock, and B's decoded sample
#      against A's replies, byte for byte.
# Prints what torch sees natively and emulated, job counts, wall times, and IDENTICAL or what
# differs (exit 1). The repository and its .venv are not changed.
#
# --dry-run (seconds; the smoke run of tests/test_timings_smoke.py, since a real run takes most
# of an hour): checks the arguments, the virtualenv and the emulator (this venv's Python started
# on the emulated CPU; a missing qemu is reported, not fatal), writes the job wrapper and checks
# its syntax, runs the cache-sampling step on an empty cache and the final comparison on the
# committed dvc.lock against itself, and prints the clone and build commands instead of running
# them.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DRY_RUN=0
if [ "${1:-}" = "--dry-run" ]; then
    DRY_RUN=1
    shift
fi
usage="usage: $0 [--dry-run] [QEMU_CPU] [SAMPLE]"
[ $# -le 2 ] || { echo "$usage" >&2; exit 2; }
CPU=${1:-EPYC-Rome}
SAMPLE=${2:-3}
[[ "$SAMPLE" =~ ^[0-9]+$ ]] || { echo "$usage: SAMPLE must be a count, got '$SAMPLE'" >&2; exit 2; }
VENV=$ROOT/.venv
for tool in python halluscope snakemake dvc; do
    [ -x "$VENV/bin/$tool" ] || { echo "$VENV/bin/$tool missing: make install" >&2; exit 2; }
done
if ! QEMU=$(command -v qemu-x86_64); then
    [ "$DRY_RUN" = 1 ] || { echo "qemu-x86_64 missing: apt-get install qemu-user" >&2; exit 2; }
    echo "dry run: qemu-x86_64 missing (apt-get install qemu-user): a real run stops here"
    QEMU=qemu-x86_64
elif ! { "$QEMU" -cpu help || true; } | awk -v cpu="$CPU" '$2 == cpu {ok = 1} END {exit !ok}'; then
    # (qemu-x86_64 -cpu help exits with status 1 after printing the list)
    echo "$usage: qemu-x86_64 knows no CPU '$CPU' (qemu-x86_64 -cpu help)" >&2
    exit 2
fi
WORK=$(mktemp -d)
trap 'if [ $? = 0 ]; then rm -rf "$WORK"; else echo "kept for a look: $WORK" >&2; fi' EXIT

clone() {
    if [ "$DRY_RUN" = 1 ]; then
        echo "dry run: would run: git clone -q $ROOT $WORK/$1 && ln -s $VENV $WORK/$1/.venv"
        mkdir -p "$WORK/$1/results/cache"
        return
    fi
    git clone -q "$ROOT" "$WORK/$1"
    ln -s "$VENV" "$WORK/$1/.venv"
}

build() {  # build DIR BIN_DIR: the demo build of make demo, with BIN_DIR first on PATH
    if [ "$DRY_RUN" = 1 ]; then
        echo "dry run: would run in $1: PATH=$2:$VENV/bin:\$PATH PYTHONPATH=$1/src" \
            "snakemake --cores 2 results/tables/ all && dvc commit --force --quiet"
        cp "$ROOT/dvc.lock" "$1/dvc.lock"  # what the comparison reads: the committed lock
        return
    fi
    local start=$SECONDS
    (
        cd "$1"
        export PATH="$2:$VENV/bin:$PATH" PYTHONPATH="$1/src"
        snakemake --cores 2 results/tables/ all >"$1.log" 2>&1 || { tail -40 "$1.log" >&2; exit 1; }
        dvc commit --force --quiet
    )
    echo "$(basename "$1"): built in $((SECONDS - start)) s" >&2
}

# The job's halluscope on the emulated CPU; TCG's one-line notes about CPUID bits it does not
# emulate (rdseed, sha-ni, ...) are dropped, everything else the job prints is kept.
mkdir "$WORK/emulated" "$WORK/native"
# QEMU's TCG sometimes stops a job with SIGSEGV where the same job runs natively (seen in the
# MiniLM-loading Tri-HE judge and a matplotlib figure job): such a job is run again natively
# and listed, so the run says which outputs were not computed on the emulated CPU.
cat >"$WORK/emulated/halluscope" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$WORK/emulated-jobs.txt"
status=0
"$QEMU" -cpu "$CPU" "$VENV/bin/python" "$VENV/bin/halluscope" "\$@" \
    2> >(grep -v "TCG doesn't support requested feature" >&2) || status=\$?
if [ "\$status" = 139 ]; then
    echo "\${*:1:2}" >>"$WORK/native-fallback.txt"
    exec "$VENV/bin/halluscope" "\$@"
fi
exit "\$status"
EOF
chmod +x "$WORK/emulated/halluscope"

if [ "$DRY_RUN" = 1 ]; then
    bash -n "$WORK/emulated/halluscope"
    echo "dry run: job wrapper $WORK/emulated/halluscope written, syntax checked"
    if [ "$QEMU" != qemu-x86_64 ]; then  # found: this venv's Python starts on the emulated CPU
        echo "dry run: emulated $CPU runs $("$QEMU" -cpu "$CPU" "$VENV/bin/python" -c \
            'import platform; print("Python", platform.python_version())' 2>/dev/null)"
    fi
else
    probe='import torch; print(torch.backends.cpu.get_cpu_capability())'
    echo "torch sees: native $("$VENV/bin/python" -c "$probe"), emulated $CPU" \
        "$("$QEMU" -cpu "$CPU" "$VENV/bin/python" -c "$probe" 2>/dev/null)" >&2
fi

clone A
build "$WORK/A" "$WORK/native"
clone B
"$VENV/bin/python" - "$WORK/A/results/cache" "$WORK/B/results/cache" "$SAMPLE" \
    >"$WORK/sample.txt" <<'PY'
import json, shutil, sys
from pathlib import Path

native, emulated, sample = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
llama = sorted(
    p for p in native.rglob("*.json")
    if json.loads(p.read_text())["response"]["identity"]["backend"] == "llamacpp"
)
for path in llama[sample:]:
    target = emulated / path.relative_to(native)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, target)
print("\n".join(str(p.relative_to(native)) for p in llama[:sample]))
print(f"llama.cpp replies: {len(llama)}, decoded on the emulated CPU: {sample}", file=sys.stderr)
PY
build "$WORK/B" "$WORK/emulated"
if [ "$DRY_RUN" = 1 ]; then
    echo "dry run: the comparison, on the committed dvc.lock against itself:"
else
    echo "emulated jobs: $(wc -l <"$WORK/emulated-jobs.txt"); stopped by the emulator and run" \
        "natively: $(cat "$WORK/native-fallback.txt" 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ')" >&2
fi

"$VENV/bin/python" - "$ROOT/dvc.lock" "$WORK" "$CPU" <<'PY'
import sys
from pathlib import Path

import yaml

def outs(path):
    stages = yaml.safe_load(path.read_text(encoding="utf-8"))["stages"]
    return {o["path"]: o.get("md5") for s in stages.values() for o in s.get("outs", [])}

lock, work, cpu = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
committed, problems = outs(lock), []
for name, label in (("A", "native"), ("B", f"emulated {cpu}")):
    built = outs(work / name / "dvc.lock")
    differ = sorted(p for p in committed.keys() | built.keys() if committed.get(p) != built.get(p))
    problems += [f"{label} build: {p} differs from dvc.lock" for p in differ]
for rel in (work / "sample.txt").read_text().split():
    a, b = work / "A/results/cache" / rel, work / "B/results/cache" / rel
    if not b.exists() or a.read_bytes() != b.read_bytes():
        problems.append(f"llama.cpp reply {rel}: emulated {'differs' if b.exists() else 'missing'}")
if problems:
    sys.exit("DIFFERENT:\n" + "\n".join(problems))
print(f"IDENTICAL: all {len(committed)} outputs of dvc.lock, natively and on an emulated {cpu};"
      " the llama.cpp replies decoded there equal the native ones")
PY
