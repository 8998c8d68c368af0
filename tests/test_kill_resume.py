"""SIGKILL in the middle of a model-calling stage, then a rerun: identical final output.

The generation stage runs as a real subprocess on synthetic items (one request per batch, so
the cache grows while it runs) and is killed at seeded random moments; the rerun must give a
file byte-identical to an uninterrupted run, and no half-written output ever exists.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from halluscope.io import read_jsonl, write_jsonl

N_ITEMS = 400
COCO = ["person", "dog", "cat", "car", "chair", "cup", "bottle", "bench", "tie", "boat"]


def make_items(path: Path) -> None:
    rng = random.Random(7)
    write_jsonl(
        path,
        [
            {
                "image_id": f"img{i:04d}",
                "image": None,
                "image_sha256": None,
                "gt_objects": sorted(rng.sample(COCO, 2)),
                "other_objects": ["tree"],
                "relations": [],
                "caption": "",
                "source": {},
            }
            for i in range(N_ITEMS)
        ],
    )


def generate_cmd(items: Path, cache: Path, out: Path) -> list[str]:
    from halluscope.benchmarks.caos.captions.generate import GenerateSettings
    from halluscope.stages.llm import LLMSettings

    block = {"seed": 0, "max_new_tokens": 64, "temperature": 0.0, "batch_size": 1}
    llm = LLMSettings.from_generation(
        "sim-verbose",
        {"backend": "sim", "preset": "sim-verbose"},
        {**block, "template_version": "v1", "cache_mode": "live"},
    )
    instruction = "Provide a brief description of the given image."
    return [
        sys.executable,
        "-m",
        "halluscope.cli",
        "stage",
        "generate",
        "--items",
        str(items),
        "--settings",
        GenerateSettings(llm, "i01", instruction).to_json(),
        "--cache",
        str(cache),
        "--out",
        str(out),
    ]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, bytes]:
    root = tmp_path_factory.mktemp("ref")
    make_items(root / "items.jsonl")
    out = root / "out.jsonl"
    subprocess.run(
        generate_cmd(root / "items.jsonl", root / "cache", out), check=True, capture_output=True
    )
    return root / "items.jsonl", out.read_bytes()


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_sigkill_then_rerun_gives_identical_output(reference, tmp_path: Path, seed: int) -> None:
    items, expected = reference
    cache, out = tmp_path / "cache", tmp_path / "out.jsonl"
    delay = random.Random(seed).uniform(0.8, 3.0)
    proc = subprocess.Popen(
        generate_cmd(items, cache, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # never a half file: the output is either absent or complete
    if out.exists():
        assert out.read_bytes() == expected
    leftovers = [p for p in cache.rglob("*") if p.is_file() and not p.name.endswith(".json")]
    for p in leftovers:  # temp files of an interrupted write are never read as entries
        assert p.name.endswith(".tmp"), p
    cached = sum(1 for _ in cache.rglob("*.json")) if cache.exists() else 0
    subprocess.run(generate_cmd(items, cache, out), check=True, capture_output=True)
    assert out.read_bytes() == expected
    assert len(read_jsonl(out)) == N_ITEMS
    assert sum(1 for _ in cache.rglob("*.json")) == N_ITEMS  # no record lost or duplicated
    assert cached <= N_ITEMS


@pytest.mark.slow  # five new processes loading SmolLM2 and spaCy: the whole-model tier
def test_sigkill_during_llm_extraction_then_rerun(tmp_path: Path) -> None:
    """The LLM extraction stage (real SmolLM2) killed mid-run resumes to the same bytes."""
    import yaml

    from halluscope.benchmarks.caos.captions.extract import ExtractSettings, instruction_llm

    root = Path(__file__).resolve().parents[1]
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    llm = instruction_llm(params, "i01")
    settings = ExtractSettings("rule+lexicon+llm", "builtin", "pattern", "builtin", llm).to_json()
    captions = [
        "A man in a spacesuit holds a helmet next to a flag.",
        "A cat with long whiskers lies on a red blanket near a lamp.",
        "A cup of coffee on a saucer with a spoon on a wooden table.",
        "A rocket on the launch pad under a cloudy sky.",
        "A motorcycle parked beside a bench, a shelf and a bottle.",
        "A photographer with a camera on a tripod in a grass field.",
    ]
    responses = tmp_path / "responses.jsonl"
    write_jsonl(
        responses,
        [
            {"image_id": f"img{i}", "instruction_id": "i01", "model": "m", "text": text, "meta": {}}
            for i, text in enumerate(captions)
        ],
    )

    def cmd(cache: Path, out: Path) -> list[str]:
        return [
            sys.executable,
            "-m",
            "halluscope.cli",
            "stage",
            "extract",
            "--responses",
            str(responses),
            "--settings",
            settings,
            "--cache",
            str(cache),
            "--out",
            str(out),
        ]

    subprocess.run(
        cmd(tmp_path / "ref-cache", tmp_path / "ref.jsonl"), check=True, capture_output=True
    )
    expected = (tmp_path / "ref.jsonl").read_bytes()
    for seed in (1, 2):
        cache, out = tmp_path / f"cache{seed}", tmp_path / f"out{seed}.jsonl"
        proc = subprocess.Popen(
            cmd(cache, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(random.Random(seed).uniform(2.0, 5.0))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert not out.exists() or out.read_bytes() == expected
        subprocess.run(cmd(cache, out), check=True, capture_output=True)
        assert out.read_bytes() == expected
