"""Snakemake timings on a complete demo run (targets: no-op < 5 s; figure edit < 20 s).

Copies the project into a temporary folder, runs the demo once (not timed), then times
1. a no-op ``snakemake --cores 2 results/tables/ all``;
2. editing one figure parameter (``figures.dpi``) and rebuilding the figures.

Usage: python timings/bench_pipeline.py [--build DIR]

``--build DIR`` starts from a copy of a built demo (its results, metrics and Snakemake
metadata; e.g. the test suite's shared build) instead of building one, so only the two timed
steps run: the smoke run of tests/test_timings_smoke.py.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from pipeline_helpers import copy_of_build, copy_project, planned_jobs, snakemake  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, help="a built demo to start from (copied)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.build is not None:
            root = copy_of_build(args.build.resolve(), Path(tmp) / "halluscope")
            print(f"complete demo run: copied from {args.build} (set-up, not a target)")
            # a build made by other code or params than this checkout's is no no-op
            print(f"  jobs before the no-op: {planned_jobs(root, 'results/tables/', 'all')}")
        else:
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
