"""The named K orders of CAOS (caos.frequent): what each contains and where it comes from."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from halluscope.benchmarks.caos.k_order import frequent_objects
from halluscope.objects.coco import COCO_CLASSES, COCO_IMAGE_ORDER, FREQUENT_ORDERS

GT_FILE = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "coco"
    / ("chair_gt_objects_pattern.json")
)


def test_orders_are_permutations_of_the_80_classes() -> None:
    for name, order in FREQUENT_ORDERS.items():
        assert sorted(order) == sorted(COCO_CLASSES), name


def test_top3_of_each_order() -> None:
    assert frequent_objects("coco")[:3] == ["person", "car", "chair"]
    assert frequent_objects("coco-instances")[:3] == ["person", "car", "chair"]
    assert frequent_objects("coco-images")[:3] == ["person", "dining table", "car"]
    assert frequent_objects("paper-examples")[:3] == ["person", "dining table", "chair"]
    assert frequent_objects(["kite", "dog"]) == ["kite", "dog"]


def test_unknown_order_is_named() -> None:
    with pytest.raises(ValueError, match="coco-image.*valid: coco, coco-instances"):
        frequent_objects("coco-image")


@pytest.mark.skipif(not GT_FILE.exists(), reason="needs ../shared/data/coco (not shipped)")
def test_image_order_recounted_from_the_chair_ground_truth() -> None:
    """COCO_IMAGE_ORDER is the count of images whose CHAIR GT holds the class, recounted."""
    gt = json.loads(GT_FILE.read_text())["imid_to_objects"]
    counts = collections.Counter(name for objs in gt.values() for name in set(objs))
    assert len(gt) == 123_287
    assert tuple(sorted(counts, key=lambda c: -counts[c])) == COCO_IMAGE_ORDER
