"""Timing of the LLM object extractor: one request at a time against batched decoding.

Both runs read the same 40 real captions (the first 4 records of each of the ten POPE caption
files ``pope/captions/Instruction{1,2}_<model>.json`` in the data mirror) with the extract
stage's own extractor and settings: ``extract.llm`` and ``models.<extract.llm.model>`` of the
profile overlay (``--profile``, default ``config/profiles/pope-captions-llm500.yaml``) over
``params.yaml``, with ``--threads`` llama.cpp threads and the cache batch ``--batch-size`` (what
one ``generate`` call receives). Each run is a fresh process with a fresh temporary response
cache, back to back:

- one at a time: ``n_seq: 1`` (``Llama.create_chat_completion``, today's path);
- batched: ``n_seq: --n-seq`` (:mod:`halluscope.models.llamacpp_batched`).

Times include model loading. Derived weights (``weights: Q8_0``) are derived before the clock
starts. The last line printed is one JSON object: ``{"n", "requests", "one_cps", "batched_cps",
"ratio", "identical_replies", "valid_json", "threads", "n_seq", "batch_size"}`` (``requests``:
the distinct LLM requests of the ``n`` captions, as the cache keys them; ``identical_replies``:
those whose reply, text and finish, is the same bytes in both runs).

Run: ``python timings/bench_llm_stages.py [--threads 2] [--n-seq 16] [--batch-size 32] [--smoke]``

``--smoke`` (no data mirror needed; about 20 s of CPU, mostly model loading): the same two runs
on the captions of the first four demo images (``data/demo/annotations.yaml``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

FILES = [
    f"Instruction{i}_{m}.json"
    for i in (1, 2)
    for m in ("instructblip", "llava", "minigpt-4", "mmgpt", "mplug")
]


def mirror() -> Path:
    """The data mirror holding ``pope/captions`` (``$HALLUSCOPE_DATA_MIRROR`` or ../shared/data)."""
    env = os.environ.get("HALLUSCOPE_DATA_MIRROR")
    return Path(env) if env else ROOT.parent / "shared" / "data"


def captions(per_file: int = 4) -> list[str]:
    """The first ``per_file`` caption texts of each POPE caption file (concatenated JSON)."""
    out: list[str] = []
    decoder = json.JSONDecoder()
    for name in FILES:
        text = (mirror() / "pope" / "captions" / name).read_text(encoding="utf-8")
        pos, got = 0, 0
        while got < per_file:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            record, pos = decoder.raw_decode(text, pos)
            out.append(str(record["text"]))
            got += 1
    return out


def demo_captions(n: int) -> list[str]:
    """The captions of the first ``n`` demo images (the smoke run's input)."""
    import yaml

    demo = yaml.safe_load((ROOT / "data/demo/annotations.yaml").read_text(encoding="utf-8"))
    return [" ".join(rec["caption"].split()) for rec in demo["images"][:n]]


def load_config(profile: Path | None) -> dict[str, Any]:
    """``params.yaml`` overlaid by ``profile`` (merged as Snakemake merges config files)."""
    import yaml

    from halluscope.config import overlay

    config = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    if profile is not None:
        overlay(config, yaml.safe_load(profile.read_text(encoding="utf-8")))
    config["extract"]["method"] = "rule+lexicon+llm"
    config["extract"]["llm_instructions"] = "all"
    return config


def bench_config(profile: Path | None, threads: int, n_seq: int, batch_size: int) -> dict:
    """The profile's extractor settings with the run's threads, sequences and cache batch."""
    config = load_config(profile)
    config["extract"]["llm"]["batch_size"] = batch_size
    spec = config["models"][config["extract"]["llm"]["model"]]
    spec.update(n_threads=threads, n_seq=n_seq)
    return config


def settings(config: dict[str, Any]) -> Any:
    """The extractor LLM of instruction i01
    (:func:`halluscope.benchmarks.caos.captions.extract.instruction_llm`)."""
    from halluscope.benchmarks.caos.captions.extract import instruction_llm

    llm = instruction_llm(config, "i01")
    assert llm is not None
    return llm


def extract(config: dict[str, Any], texts: list[str], cache_dir: str) -> list[dict[str, Any]]:
    """Object records of ``texts`` with the extract stage's own extractor (one process)."""
    from halluscope.benchmarks.caos.captions.extract import _extractor

    ext = config["extract"]
    extractor = _extractor(
        ext["synonyms"],
        ext["variant"],
        ext["ood_lexicon"],
        "rule+lexicon+llm",
        settings(config),
        Path(cache_dir),
    )
    return extractor.extract(texts)


def _worker(args: tuple[dict[str, Any], list[str], str]) -> list[dict[str, Any]]:
    return extract(*args)


def replies(cache_dir: str) -> dict[str, tuple[str, Any]]:
    """The LLM replies a run cached: request id -> (text, finish reason)."""
    out = {}
    for path in Path(cache_dir).rglob("*.json"):
        response = json.loads(path.read_text(encoding="utf-8"))["response"]
        out[response["request_id"]] = (response["text"], response["meta"].get("finish_reason"))
    return out


def timed(config: dict[str, Any], texts: list[str]) -> tuple[float, list[dict], dict]:
    """Seconds, object records and replies of one run in a fresh process and cache."""
    with tempfile.TemporaryDirectory(prefix="bench-llm-cache-") as cache:
        ctx = multiprocessing.get_context("spawn")
        start = time.perf_counter()
        with ctx.Pool(1) as pool:
            (records,) = pool.map(_worker, [(config, texts, cache)])
        seconds = time.perf_counter() - start
        return seconds, records, replies(cache)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--profile", type=Path, default=ROOT / "config/profiles/pope-captions-llm500.yaml"
    )
    parser.add_argument("--per-file", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads, both runs")
    parser.add_argument("--n-seq", type=int, default=16, help="sequences of the batched run")
    parser.add_argument("--batch-size", type=int, default=32, help="requests per generate call")
    parser.add_argument(
        "--smoke", action="store_true", help="four demo captions instead of the POPE captions"
    )
    args = parser.parse_args(argv)
    texts = demo_captions(4) if args.smoke else captions(args.per_file)
    one = bench_config(args.profile, args.threads, 1, args.batch_size)
    batched = bench_config(args.profile, args.threads, args.n_seq, args.batch_size)
    spec = one["models"][one["extract"]["llm"]["model"]]
    if spec.get("weights", "shipped") != "shipped":  # derive once, outside the clock
        from halluscope.models.llamacpp import bundled_model_path, derived_weights

        derived_weights(bundled_model_path(str(spec["model"])), str(spec["weights"]))
    one_s, _, one_replies = timed(one, texts)
    batched_s, records, batched_replies = timed(batched, texts)
    print(
        "settings:",
        json.dumps({"llm": dict(settings(one).params), "grammar": settings(one).grammar,
                    "weights": spec.get("weights", "shipped")}),
        file=sys.stderr,
    )  # fmt: skip
    result = {
        "n": len(texts),
        "requests": len(one_replies),
        "one_cps": round(len(texts) / one_s, 3),
        "batched_cps": round(len(texts) / batched_s, 3),
        "ratio": round(one_s / batched_s, 3),
        "identical_replies": sum(
            batched_replies.get(key) == value for key, value in one_replies.items()
        ),
        "valid_json": sum(bool(r["llm"]["valid"]) for r in records),
        "threads": args.threads,
        "n_seq": args.n_seq,
        "batch_size": args.batch_size,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
