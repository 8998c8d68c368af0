"""Timing of the LLM object extractor: its plain settings vs the configured fast setup.

Both runs read the same 40 real captions (the first 4 records of each of the ten POPE caption
files ``pope/captions/Instruction{1,2}_<model>.json`` in the data mirror) and start from a fresh
temporary response cache, back to back:

- baseline: the shipped Q4_1 SmolLM2, one process, ``n_threads`` 1, ``extract.llm`` of
  ``params.yaml`` without the speed options (schema-constrained replies, the grammar checked
  over the whole vocabulary, no stop rule: :func:`baseline_config`);
- configured: ``extract.llm`` and ``models.<extract.llm.model>`` of the profile overlay
  (``--profile``, default ``config/profiles/pope-captions-llm500.yaml``) over ``params.yaml``,
  in ``--workers`` processes (each single-sequence, one thread) over interleaved shares of the
  captions. Derived weights (``weights: Q8_0``) are derived before the clock starts.

Times include model loading (and worker start-up). The last line printed is one JSON object:
``{"n", "baseline_cps", "cps", "ratio", "valid_json", "baseline_valid_json",
"added_objects_same"}`` (``added_objects_same``: captions whose object list after the tally
equals the baseline's). ``--baseline-only`` runs the baseline alone.

Run: ``python timings/bench_llm_stages.py [--workers 2] [--baseline-only] [--smoke]``

``--smoke`` (no data mirror needed; about 20 s of CPU, mostly model loading): the same two
runs on the captions of the first two demo images (``data/demo/annotations.yaml``), one per
worker.
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


def baseline_config() -> dict[str, Any]:
    """The extractor without its speed options: ``params.yaml`` with the shipped Q4_1 weights on
    one thread, the schema grammar scanned over the whole vocabulary per token
    (``greedy_grammar: false``) and no stop rule (the demo's own settings use the speed options,
    so the baseline names its settings instead of reading them)."""
    config = load_config(None)
    config["extract"]["llm"].update(grammar="schema", stop_rule="none", json_schema=True)
    spec = config["models"][config["extract"]["llm"]["model"]]
    spec.update(weights="shipped", n_threads=1, greedy_grammar=False)
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


def timed(config: dict[str, Any], texts: list[str], workers: int) -> tuple[float, list[dict]]:
    with tempfile.TemporaryDirectory(prefix="bench-llm-cache-") as cache:
        start = time.perf_counter()
        if workers <= 1:
            records = extract(config, texts, cache)
        else:
            # interleaved shares (caption i to worker i % workers): the files differ in caption
            # length, so contiguous halves leave one worker idle; fixed, so reruns are identical
            shares = [texts[k::workers] for k in range(workers)]
            ctx = multiprocessing.get_context("spawn")
            with ctx.Pool(len(shares)) as pool:
                parts = pool.map(_worker, [(config, share, cache) for share in shares])
            records = [parts[i % workers][i // workers] for i in range(len(texts))]
        return time.perf_counter() - start, records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--profile", type=Path, default=ROOT / "config/profiles/pope-captions-llm500.yaml"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--per-file", type=int, default=4)
    parser.add_argument("--baseline-only", action="store_true")
    parser.add_argument(
        "--smoke", action="store_true", help="two demo captions instead of the POPE captions"
    )
    args = parser.parse_args(argv)
    texts = demo_captions(2) if args.smoke else captions(args.per_file)
    base_config = baseline_config()
    base_s, base_records = timed(base_config, texts, 1)
    result: dict[str, Any] = {
        "n": len(texts),
        "baseline_cps": round(len(texts) / base_s, 3),
        "baseline_valid_json": sum(bool(r["llm"]["valid"]) for r in base_records),
    }
    if not args.baseline_only:
        config = load_config(args.profile)
        spec = config["models"][config["extract"]["llm"]["model"]]
        if spec.get("weights", "shipped") != "shipped":  # derive once, outside the clock
            from halluscope.models.llamacpp import bundled_model_path, derived_weights

            derived_weights(bundled_model_path(str(spec["model"])), str(spec["weights"]))
        secs, records = timed(config, texts, args.workers)
        result.update(
            cps=round(len(texts) / secs, 3),
            ratio=round(base_s / secs, 3),
            valid_json=sum(bool(r["llm"]["valid"]) for r in records),
            added_objects_same=sum(
                a["objects"] == b["objects"] for a, b in zip(records, base_records, strict=True)
            ),
            settings={
                "llm": dict(settings(config).params),
                "grammar": settings(config).grammar,
                "weights": spec.get("weights", "shipped"),
                "workers": args.workers,
            },
        )
    if "settings" in result:
        print("configured:", json.dumps(result["settings"]), file=sys.stderr)
    order = [
        "n",
        "baseline_cps",
        "cps",
        "ratio",
        "valid_json",
        "baseline_valid_json",
        "added_objects_same",
    ]
    print(json.dumps({k: result[k] for k in order if k in result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
