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
