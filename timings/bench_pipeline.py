"""Snakemake timings on a complete demo run (targets: no-op < 5 s; figure edit < 20 s).

Copies the project into a temporary folder, runs the demo once (not timed), then times
1. a no-op ``snakemake --cores 2 results/tables/ all``;
2. editing one figure parameter (``figures.dpi``) and rebuilding the figures.

Usage: python timings/bench_pipeline.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from pipeline_helpers import copy_project, planned_jobs, snakemake  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_project(Path(tmp) / "halluscope")
        t = time.perf_counter()
        snakemake(root, "--cores", "2", "results/tables/", "all")
        print(f"complete demo run: {time.perf_counter() - t:.1f} s (set-up, not a target)")
        t = time.perf_counter()
        snakemake(root, "--cores", "2", "results/tables/", "all")
        print(f"no-op snakemake: {time.perf_counter() - t:.2f} s (target < 5 s)")
        params = yaml.safe_load((root / "params.yaml").read_text())
        params["figures"]["dpi"] = params["figures"]["dpi"] + 50
        (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        print(f"  jobs after the edit: {planned_jobs(root, 'results/tables/', 'all')}")
        t = time.perf_counter()
        snakemake(root, "--cores", "2", "results/tables/", "all")
        print(
            f"figure parameter edit -> rebuilt figures: {time.perf_counter() - t:.1f} s "
            "(target < 20 s)"
        )


if __name__ == "__main__":
    main()
