"""``halluscope chair`` against the reference CHAIR outputs (HALC runs, pattern variant).

Inputs are built from the reference files in ../shared/data (never copied into the repository):
the captions as JSONL, GT = the prebuilt CHAIR ground truth of MSCOCO 2014.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
RUNS = sorted((SHARED / "halc" / "chair").glob("*/*_chair_results.json"))

needs_shared = pytest.mark.skipif(
    not SHARED.exists(), reason="reference data ../shared/data is not present on this machine"
)


@needs_shared
@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.parent.name)
def test_cli_matches_reference(run: Path, tmp_path: Path) -> None:
    ref = json.loads(run.read_text())
    captions = tmp_path / "captions.jsonl"
    captions.write_text(
        "".join(
            json.dumps({"image_id": s["image_id"], "caption": s["caption"]}) + "\n"
            for s in ref["sentences"]
        )
    )
    out = tmp_path / "out.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "halluscope.cli",
            "chair",
            "--captions",
            str(captions),
            "--gt",
            str(SHARED / "coco/chair_gt_objects_pattern.json"),
            "--synonyms",
            str(SHARED / "chair/synonyms.txt"),
            "--variant",
            "pattern",
            "--out",
            str(out),
        ],
        check=True,
    )
    result = json.loads(out.read_text())
    assert result["variant"] == "pattern" and result["synonyms"].endswith("synonyms.txt")
    same = sum(
        Counter(ours["mentions"]) == Counter(s["mscoco_generated_words"])
        and Counter(ours["hallucinated"]) == Counter(p[1] for p in s["mscoco_hallucinated_words"])
        for ours, s in zip(result["captions"], ref["sentences"], strict=True)
    )
    assert same / len(ref["sentences"]) >= 0.995
    for key in ("CHAIRs", "CHAIRi"):
        assert round(result["overall"][key], 3) == round(ref["overall_metrics"][key], 3)


def test_cli_errors_name_file_and_record(tmp_path: Path) -> None:
    captions = tmp_path / "c.jsonl"
    captions.write_text('{"image_id": 1, "caption": "a dog"}\n{"image_id": 2}\n')
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps({"1": ["dog"], "2": ["cat"]}))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "halluscope.cli",
            "chair",
            "--captions",
            str(captions),
            "--gt",
            str(gt),
            "--out",
            str(tmp_path / "o.json"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert f"{captions}:2:" in proc.stderr and "'caption' or 'text'" in proc.stderr


LLAVA = SHARED / "halc/chair/llava-1.5_greedy_beams"


def _chair(captions: Path, out: Path, *extra: str) -> dict:
    from halluscope.cli import main

    argv = ["chair", "--captions", str(captions), "--gt",
            str(SHARED / "coco/chair_gt_objects_pattern.json"), "--synonyms",
            str(SHARED / "chair/synonyms.txt"), "--out", str(out), *extra]  # fmt: skip
    assert main(argv) == 0
    return json.loads(out.read_text())


@pytest.mark.skipif(not LLAVA.exists(), reason="HALC LLaVA-1.5 captions (../shared/data) absent")
def test_chair_s_interval_of_real_captions_is_wilson_of_the_caption_flags(tmp_path: Path) -> None:
    """500 LLaVA-1.5 greedy captions, one per image: the CHAIR_S interval is Wilson's interval
    of the per-caption hallucination flags, computed here independently; CHAIR_I and recall
    get a bootstrap interval around their value; the same input gives the same bytes."""
    from halluscope.metrics.intervals import proportion_interval, wilson

    ref = json.loads(next(LLAVA.glob("*_chair_results.json")).read_text())
    captions = tmp_path / "captions.jsonl"
    captions.write_text(
        "".join(
            json.dumps({"image_id": s["image_id"], "caption": s["caption"]}) + "\n"
            for s in ref["sentences"]
        )
    )
    doc = _chair(captions, tmp_path / "a.json")
    flags = [c["CHAIRs"] for c in doc["captions"]]
    assert len(flags) == 500 and len({c["image_id"] for c in doc["captions"]}) == 500
    got = doc["intervals"]["overall"]["CHAIRs"]
    expected = proportion_interval(flags)
    lo, hi = wilson(sum(flags), len(flags), 0.95)
    assert (got["lo"], got["hi"]) == (expected.lo, expected.hi) == (round(lo, 6), round(hi, 6))
    assert got["method"] == "wilson" and got["n_units"] == 500 and got["level"] == 0.95
    assert (got["lo"], got["hi"]) == (0.172857, 0.243626)  # CHAIR_S 0.206 of 500 captions
    for key, interval in doc["intervals"]["overall"].items():
        assert interval["lo"] <= doc["overall"][key] <= interval["hi"], key
        assert interval["hi"] - interval["lo"] > 0.01, key
    assert (tmp_path / "a.json").read_bytes() == _bytes(captions, tmp_path / "b.json")


def _bytes(captions: Path, out: Path) -> bytes:
    _chair(captions, out)
    return out.read_bytes()


def _small(tmp_path: Path, out: str, *extra: str) -> tuple[dict, bytes]:
    from halluscope.cli import main

    captions = tmp_path / "c.jsonl"
    rows = [("dog", "A dog on a couch."), ("cat", "A cat next to a car."), ("dog", "A dog."),
            ("car", "A car and a person."), ("cat", "A cat on a bed with a dog.")]  # fmt: skip
    captions.write_text(
        "".join(json.dumps({"image_id": i, "caption": c}) + "\n" for i, (_, c) in enumerate(rows))
    )
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps({str(i): [g, "couch"] for i, (g, _) in enumerate(rows)}))
    path = tmp_path / out
    argv = ["chair", "--captions", captions, "--gt", gt, "--out", path, *extra]
    assert main([str(a) for a in argv]) == 0
    return json.loads(path.read_text()), path.read_bytes()


def test_chair_intervals_contain_the_values_and_are_deterministic(tmp_path: Path) -> None:
    doc, first = _small(tmp_path, "a.json")
    _, second = _small(tmp_path, "b.json")
    assert first == second
    assert set(doc["intervals"]["overall"]) == {"CHAIRs", "CHAIRi", "recall"}
    for key, interval in doc["intervals"]["overall"].items():
        assert set(interval) == {"lo", "hi", "level", "method", "unit", "n_units"}
        assert interval["lo"] <= doc["overall"][key] <= interval["hi"], key
        assert interval["unit"] == "image" and interval["n_units"] == 5
    assert doc["intervals"]["overall"]["CHAIRs"]["method"] == "wilson"
    assert doc["intervals"]["overall"]["CHAIRi"]["method"] == "bca"
    assert doc["interval_settings"]["resamples"] == 2000 and doc["interval_settings"]["seed"] == 0
    plain, _ = _small(tmp_path, "c.json", "--no-intervals")
    assert "intervals" not in plain and "interval_settings" not in plain
    assert plain == {k: v for k, v in doc.items() if not k.startswith("interval")}
    narrow, _ = _small(tmp_path, "d.json", "--level", "0.8", "--seed", "3")
    s, n = doc["intervals"]["overall"]["CHAIRs"], narrow["intervals"]["overall"]["CHAIRs"]
    assert s["lo"] < n["lo"] <= n["hi"] < s["hi"] and n["level"] == 0.8


@pytest.mark.parametrize(
    ("flag", "value"), [("--level", "1.5"), ("--resamples", "10"), ("--seed", "-1")]
)
def test_a_bad_interval_setting_names_its_flag(tmp_path: Path, flag: str, value: str, capsys):
    from halluscope.cli import main

    captions = tmp_path / "c.jsonl"
    captions.write_text('{"image_id": 1, "caption": "A dog."}\n')
    gt = tmp_path / "gt.json"
    gt.write_text('{"1": ["dog"]}')
    argv = ["chair", "--captions", captions, "--gt", gt, "--out", tmp_path / "o.json", flag, value]
    assert main([str(a) for a in argv]) == 2
    assert f"error: {flag}:" in capsys.readouterr().err
    assert not (tmp_path / "o.json").exists()
