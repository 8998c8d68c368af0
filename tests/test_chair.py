"""CHAIR metric: definitions on toy captions and caption-by-caption parity with reference runs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from halluscope.metrics.chair import caption_chair, chair_scores
from halluscope.objects.coco import load_synonyms
from halluscope.objects.parser import ObjectParser

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
REF_RUNS = sorted((SHARED / "halc" / "chair").glob("*/*_chair_results.json"))


def test_caption_chair_definitions() -> None:
    row = caption_chair(["dog", "cat", "dog", "person"], {"dog", "person", "car"})
    assert row["hallucinated"] == ["cat"]
    assert row["CHAIRs"] == 1
    assert row["CHAIRi"] == pytest.approx(1 / 4)
    assert row["precision"] == pytest.approx(3 / 4)
    assert row["recall"] == pytest.approx(2 / 3)
    assert row["n_gt_mentioned"] == 2 and row["gt"] == ["car", "dog", "person"]
    empty = caption_chair([], {"dog"})
    assert empty["CHAIRs"] == 0 and empty["CHAIRi"] == 0.0 and empty["precision"] is None
    assert empty["recall"] == 0.0
    no_gt = caption_chair(["dog"], set())
    assert no_gt["recall"] == 0.0 and no_gt["CHAIRi"] == 1.0


def test_chair_scores_overall_is_micro_averaged() -> None:
    records = [
        ("a", "A dog and a cat on a couch.", {"dog", "couch"}),  # cat hallucinated
        ("b", "Two dogs. A dog.", {"dog"}),  # 2 mentions, none hallucinated
        ("c", "A sunny day.", {"person"}),  # no mention
    ]
    out = chair_scores(records, ObjectParser())
    caps = out["captions"]
    assert [c["id"] for c in caps] == ["a", "b", "c"]
    assert caps[0]["mentions"] == ["dog", "cat", "couch"]
    assert caps[0]["hallucinated"] == ["cat"]
    assert caps[1]["mentions"] == ["dog", "dog"]
    ov = out["overall"]
    assert ov["normalization"] == "pattern"
    assert ov["n_captions"] == 3 and ov["n_mentions"] == 5 and ov["n_hallucinated"] == 1
    assert ov["CHAIRs"] == pytest.approx(1 / 3)
    assert ov["CHAIRi"] == pytest.approx(1 / 5)
    assert ov["precision"] == pytest.approx(4 / 5)
    assert ov["recall"] == pytest.approx(3 / 4)  # dog+couch of 2, dog of 1, none of 1
    assert ov["precision_macro"] == pytest.approx((2 / 3 + 1) / 2)
    assert ov["recall_macro"] == pytest.approx((1 + 1 + 0) / 3)
    assert ov["objects_per_caption"] == pytest.approx(5 / 3)
    assert ov["unique_objects_per_caption"] == pytest.approx(4 / 3)
    assert ov["n_captions_without_mentions"] == 1
    with pytest.raises(ValueError, match="no captions"):
        chair_scores([], ObjectParser())


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"reference data folder {SHARED} is absent")
@pytest.mark.parametrize("run", REF_RUNS, ids=lambda p: p.parent.name)
def test_reference_chair_parity(run: Path) -> None:
    """Mentions and hallucinated words equal the reference outputs as multisets, caption by
    caption (pattern variant, reference synonym list, GT = the reference GT words)."""
    data = json.loads(run.read_text())
    sents = data["sentences"]
    parser = ObjectParser(load_synonyms(SHARED / "chair" / "synonyms.txt"), variant="pattern")
    records = [(i, s["caption"], set(s["mscoco_gt_words"])) for i, s in enumerate(sents)]
    out = chair_scores(records, parser)
    same = 0
    for ref, row in zip(sents, out["captions"], strict=True):
        ref_hall = [pair[1] for pair in ref["mscoco_hallucinated_words"]]
        same += Counter(row["mentions"]) == Counter(ref["mscoco_generated_words"]) and Counter(
            row["hallucinated"]
        ) == Counter(ref_hall)
        assert row["CHAIRs"] == ref["metrics"]["CHAIRs"]
        assert row["CHAIRi"] == pytest.approx(ref["metrics"]["CHAIRi"])
    share = same / len(sents)
    ov, ref_ov = out["overall"], data["overall_metrics"]
    print(
        f"{run.parent.name}: {same}/{len(sents)} captions equal ({share:.2%}); "
        f"CHAIRs {ov['CHAIRs']:.4f} vs {ref_ov['CHAIRs']:.4f}, "
        f"CHAIRi {ov['CHAIRi']:.4f} vs {ref_ov['CHAIRi']:.4f}"
    )
    assert share >= 0.995
    assert round(ov["CHAIRs"], 3) == round(ref_ov["CHAIRs"], 3)
    assert round(ov["CHAIRi"], 3) == round(ref_ov["CHAIRi"], 3)


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"reference data folder {SHARED} is absent")
def test_reference_chair_with_shipped_ground_truth() -> None:
    """``coco/chair_gt_objects_pattern.json`` is the GT behind the reference runs: scoring with
    it reproduces their overall CHAIR."""
    gt = json.loads((SHARED / "coco" / "chair_gt_objects_pattern.json").read_text())
    imid_to_objects = gt["imid_to_objects"]
    parser = ObjectParser(load_synonyms(SHARED / "chair" / "synonyms.txt"), variant="pattern")
    for run in REF_RUNS:
        data = json.loads(run.read_text())
        records = [
            (s["image_id"], s["caption"], imid_to_objects[str(s["image_id"])])
            for s in data["sentences"]
        ]
        ov = chair_scores(records, parser)["overall"]
        assert ov["CHAIRs"] == pytest.approx(data["overall_metrics"]["CHAIRs"])
        assert ov["CHAIRi"] == pytest.approx(data["overall_metrics"]["CHAIRi"])
