"""CHAIR over all 20,000 POPE captions (5 LVLMs x 2 instructions x 2,000 images).

Target: under 10 seconds on 2 cores (parsing + scoring, reading the files included). Needs the
caption files and the CHAIR GT (mirror ../shared/data or the download cache).

Usage: python timings/bench_chair.py
"""

from __future__ import annotations

import time

from halluscope.data.coco import load_gt
from halluscope.data.fetch import resolve
from halluscope.io import read_json_records
from halluscope.metrics.chair import chair_scores
from halluscope.objects.parser import ObjectParser

MODELS = ["instructblip", "llava", "minigpt-4", "mmgpt", "mplug"]


def main() -> None:
    gt = load_gt(resolve("coco/chair_gt_objects_pattern.json"))
    files = [resolve(f"pope/captions/Instruction{i}_{m}.json") for i in (1, 2) for m in MODELS]
    start = time.perf_counter()
    records = []
    for path in files:
        for rec in read_json_records(path):
            records.append((rec["question_id"], rec["text"], gt[str(rec["image_id"])]))
    result = chair_scores(records, ObjectParser())
    elapsed = time.perf_counter() - start
    overall = result["overall"]
    print(
        f"CHAIR over {len(records):,} captions: {elapsed:.2f} s "
        f"({len(records) / elapsed:,.0f} captions/s; CHAIR_S {overall['CHAIRs']:.3f}, "
        f"CHAIR_I {overall['CHAIRi']:.3f}); target < 10 s"
    )


if __name__ == "__main__":
    main()
