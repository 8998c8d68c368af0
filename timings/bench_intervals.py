"""The cost of the intervals at paper scale: 140,000 synthetic captions on 2,000 images.

Why: the issue allows paper-scale scoring with intervals at most 1.2 times the time without
(``timings/bench_paper_scale.py``: < 60 s on 2 cores), so every table cell's interval and every
pair of models must fit in a few seconds. The table here has the shape of CAOS Table 1 at paper
scale, 5 models x 14 instructions x 2,000 images, one caption per (model, instruction, image),
with the per-caption counts CHAIR and CAOS pool (drawn at random: scoring is not timed). Timed:
grouping the rows by image, the cluster bootstrap of 11 statistics for every (model,
instruction) cell and every model's pooled row, and the paired comparison of every pair of
models (pooled, CHAIR_S and CAOS_avg), with the default settings (2,000 resamples, BCa).

Usage: python timings/bench_intervals.py [--images 2000] [--models 5] [--instructions 14]
       python timings/bench_intervals.py --smoke      (50 images x 3 instructions x 2 models)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from halluscope.metrics.intervals import (
    IntervalSettings,
    UnitTable,
    bootstrap,
    compare_systems,
    ratio,
)


def captions(n_images: int, n_models: int, n_instructions: int) -> dict[str, np.ndarray]:
    """One row per caption: its model, instruction, image and the counts a summary pools."""
    rng = np.random.Generator(np.random.PCG64(0))
    shape = (n_models, n_instructions, n_images)
    model, instruction, image = (a.ravel() for a in np.indices(shape))
    n = model.size
    mentions = rng.integers(1, 8, n)
    hallucinated = rng.binomial(mentions, 0.05 + 0.03 * model)
    has = (hallucinated > 0).astype(np.float64)
    return {
        "model": model,
        "instruction": instruction,
        "image": image,
        "n_mentions": mentions.astype(np.float64),
        "n_hallucinated": hallucinated.astype(np.float64),
        "chair_s": has,
        "n_gt": rng.integers(1, 6, n).astype(np.float64),
        "n_gt_mentioned": rng.integers(0, 3, n).astype(np.float64),
        "caos_t": has * rng.uniform(0.2, 0.9, n),
        "caos_x": has * rng.uniform(0.2, 0.9, n),
        "caos_k": has * rng.uniform(0.1, 0.8, n),
    }


COLUMNS = ("n_mentions", "n_hallucinated", "chair_s", "n_gt", "n_gt_mentioned")
CAOS = ("caos_t", "caos_x", "caos_k")


def statistics() -> dict:
    """The statistics of one CAOS Table 1 row as functions of per-image sums."""
    return {
        "CHAIR_S": ratio("chair_s", "n"),
        "CHAIR_I": ratio("n_hallucinated", "n_mentions"),
        "precision": lambda t: 1 - t["n_hallucinated"] / t["n_mentions"],
        "recall": ratio("n_gt_mentioned", "n_gt"),
        "objects_per_caption": ratio("n_mentions", "n"),
        "CAOS_T": ratio("caos_t", "chair_s"),
        "CAOS_X": ratio("caos_x", "chair_s"),
        "CAOS_K": ratio("caos_k", "chair_s"),
        "CAOS_TX": ratio("caos_t", "caos_x"),
        "CAOS_XK": ratio("caos_x", "caos_k"),
        "CAOS_avg": lambda t: (t["caos_t"] + t["caos_x"] + t["caos_k"]) / (3 * t["chair_s"]),
    }


def table(rows: dict[str, np.ndarray], keep: np.ndarray) -> UnitTable:
    """The per-image sums of the rows ``keep`` selects."""
    columns = {c: rows[c][keep] for c in (*COLUMNS, *CAOS)}
    columns["n"] = np.ones(int(keep.sum()))
    return UnitTable.from_rows(rows["image"][keep].tolist(), columns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--instructions", type=int, default=14)
    parser.add_argument("--smoke", action="store_true", help="50 images x 3 x 2 (seconds)")
    args = parser.parse_args()
    if args.smoke:
        args.images, args.models, args.instructions = 50, 2, 3
    rows = captions(args.images, args.models, args.instructions)
    settings = IntervalSettings()
    stats = statistics()
    start = time.perf_counter()
    cells = {}
    for m in range(args.models):
        for i in range(args.instructions):
            keep = (rows["model"] == m) & (rows["instruction"] == i)
            cells[m, i] = bootstrap(table(rows, keep), stats, settings)
    pooled_tables = {f"model{m}": table(rows, rows["model"] == m) for m in range(args.models)}
    pooled = {name: bootstrap(t, stats, settings) for name, t in pooled_tables.items()}
    pairs = [compare_systems(pooled_tables, stats[s], settings) for s in ("CHAIR_S", "CAOS_avg")]
    elapsed = time.perf_counter() - start
    n_rows = rows["model"].size
    n_intervals = (len(cells) + len(pooled)) * len(stats)
    print(
        f"intervals over {n_rows:,} captions on {args.images:,} images: {elapsed:.2f} s "
        f"({n_intervals:,} intervals of {len(cells) + len(pooled)} rows, "
        f"{sum(len(p) for p in pairs)} paired comparisons; "
        f"{settings.resamples:,} resamples, {settings.method})"
    )
    first = pooled["model0"]["CHAIR_S"]
    print(f"model0 CHAIR_S {first.estimate:.3f} [{first.lo:.3f}, {first.hi:.3f}]")


if __name__ == "__main__":
    main()
