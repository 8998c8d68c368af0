"""CHAIR over all 20,000 POPE captions (5 LVLMs x 2 instructions x 2,000 images).

Target: under 10 seconds on 2 cores (parsing + scoring, reading the files included). Needs the
caption files and the CHAIR GT (mirror ../shared/data or the download cache).

Usage: python timings/bench_chair.py [--smoke]

``--smoke`` (seconds, no mirror needed): the same reading and scoring over a hand-made stand-in
of those eleven files, written to a temporary folder: the demo's annotated images
(``data/demo/annotations.yaml``), their caption once per caption file and their MSCOCO objects
as the GT.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from halluscope.data.coco import load_gt
from halluscope.data.fetch import resolve
from halluscope.io import read_json_records
from halluscope.metrics.chair import chair_scores
from halluscope.objects.parser import ObjectParser

ROOT = Path(__file__).resolve().parents[1]
MODELS = ["instructblip", "llava", "minigpt-4", "mmgpt", "mplug"]
GT = "coco/chair_gt_objects_pattern.json"
CAPTIONS = [f"pope/captions/Instruction{i}_{m}.json" for i in (1, 2) for m in MODELS]


def smoke_inputs(folder: Path) -> None:
    """Write the stand-in files under ``folder`` at the mirror's relative paths (the caption
    files as POPE ships them: concatenated JSON records, one per image)."""
    import yaml

    demo = yaml.safe_load((ROOT / "data/demo/annotations.yaml").read_text(encoding="utf-8"))
    images = demo["images"]
    (folder / GT).parent.mkdir(parents=True)
    gt = {"imid_to_objects": {rec["id"]: rec["coco"] for rec in images}}
    (folder / GT).write_text(json.dumps(gt), encoding="utf-8")
    (folder / CAPTIONS[0]).parent.mkdir(parents=True)
    for rel in CAPTIONS:
        records = [
            {"question_id": n, "image_id": rec["id"], "text": " ".join(rec["caption"].split())}
            for n, rec in enumerate(images)
        ]
        text = "\n".join(json.dumps(r, indent=4) for r in records) + "\n"
        (folder / rel).write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="hand-made demo input (seconds)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-chair-") as tmp:
        if args.smoke:
            smoke_inputs(Path(tmp))
            gt_path, files = Path(tmp) / GT, [Path(tmp) / rel for rel in CAPTIONS]
        else:
            gt_path, files = resolve(GT), [resolve(rel) for rel in CAPTIONS]
        bench(gt_path, files)


def bench(gt_path: Path, files: list[Path]) -> None:
    """Time reading ``files`` and scoring CHAIR against the GT of ``gt_path``, and print it."""
    gt = load_gt(gt_path)
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
