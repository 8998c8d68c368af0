"""data.limit keeps the first N images of a real dataset (the LLM-extraction overlay uses it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from halluscope.stages.data import coco_items

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.mark.skipif(
    not (SHARED / "coco" / "chair_gt_objects_pattern.json").is_file(),
    reason="needs ../shared/data (the POPE caption list and CHAIR ground truth)",
)
def test_pope_captions_limit_keeps_the_first_images() -> None:
    every = coco_items("pope-captions", {})
    first = coco_items("pope-captions", {"limit": 5})
    assert len(every) == 2000
    assert [i["image_id"] for i in first] == [i["image_id"] for i in every[:5]]
