"""The demo dataset: images load from installed packages, annotations validate, export is stable."""

from __future__ import annotations

import copy
import hashlib
import json
import struct
from pathlib import Path
from typing import Any

import pytest
import yaml

from halluscope.data.demo import (
    COCO_CLASSES,
    DEMO_IMAGES,
    export_items,
    load_annotations,
    load_demo_image,
)

ROOT = Path(__file__).resolve().parents[1]
ANNOTATIONS = ROOT / "data" / "demo" / "annotations.yaml"

# (width, height) as shipped by the packages; a change means the package changed its sample data.
EXPECTED_SIZES = {
    "astronaut": (512, 512),
    "chelsea": (451, 300),
    "coffee": (600, 400),
    "rocket": (640, 427),
    "stereo_motorcycle": (741, 500),
    "camera": (512, 512),
    "china": (640, 427),
    "flower": (640, 427),
    "grace_hopper": (512, 600),
}


@pytest.fixture(scope="module")
def annotations() -> list[dict[str, Any]]:
    return load_annotations(ANNOTATIONS)


@pytest.mark.parametrize("image_id", sorted(EXPECTED_SIZES))
def test_demo_image_loads_as_rgb(image_id: str) -> None:
    image = load_demo_image(image_id)
    assert image.mode == "RGB"
    assert image.size == EXPECTED_SIZES[image_id]


def test_demo_image_ids_are_the_nine_documented_ones() -> None:
    assert set(DEMO_IMAGES) == set(EXPECTED_SIZES)


def test_unknown_image_id_lists_valid_ids() -> None:
    with pytest.raises(ValueError, match="astronaut.*grace_hopper"):
        load_demo_image("lena")


def test_coco_classes_are_the_80_canonical_names() -> None:
    assert len(COCO_CLASSES) == 80 == len(set(COCO_CLASSES))
    for name in ("person", "motorcycle", "dining table", "potted plant", "tv", "hair drier"):
        assert name in COCO_CLASSES


def test_annotation_file_is_valid_and_complete(annotations: list[dict[str, Any]]) -> None:
    assert [record["id"] for record in annotations] == list(DEMO_IMAGES)
    for record in annotations:
        spec = DEMO_IMAGES[record["id"]]
        assert record["source"]["package"] == spec.package, record["id"]
        assert record["source"]["loader"] == spec.loader, record["id"]
        assert set(record["coco"]) <= set(COCO_CLASSES), record["id"]
        # The annotation guidelines of DATACARD.md.
        assert 3 <= len(record["other"]) <= 10, record["id"]
        assert 2 <= len(record["relations"]) <= 5, record["id"]
        assert record["caption"].endswith("."), record["id"]
        for name in record["other"]:
            assert name == name.lower() and name not in COCO_CLASSES, (record["id"], name)


def _png_chunk_types(data: bytes) -> list[bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    types, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        types.append(data[offset + 4 : offset + 8])
        offset += 12 + length
    return types


def test_export_items_is_byte_identical(
    annotations: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    images_rel = Path("results/data/demo/images")
    items_rel = Path("results/data/demo/items.jsonl")
    roots = [tmp_path / "first", tmp_path / "second"]
    for root in roots:
        root.mkdir()
        monkeypatch.chdir(root)
        export_items(annotations, images_rel, items_rel)

    first, second = roots
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert len(files) == len(annotations) + 1  # no temp files left behind
    for rel in files:
        assert (first / rel).read_bytes() == (second / rel).read_bytes(), rel

    lines = (first / items_rel).read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines]
    assert [item["image_id"] for item in items] == [record["id"] for record in annotations]
    for line, item, record in zip(lines, items, annotations, strict=True):
        assert line == json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))
        assert item["image"] == f"results/data/demo/images/{record['id']}.png"
        png = (first / item["image"]).read_bytes()
        assert item["image_sha256"] == hashlib.sha256(png).hexdigest()
        assert set(_png_chunk_types(png)) <= {b"IHDR", b"IDAT", b"IEND"}  # no metadata
        assert item["gt_objects"] == sorted(record["coco"])
        assert item["relations"] == record["relations"]


def _malformed(document: dict[str, Any], case: str) -> tuple[dict[str, Any], str]:
    """Break one record of a copy of the real file; return it and the record label to expect."""
    broken = copy.deepcopy(document)
    records = broken["images"]
    if case == "duplicate id":
        records[3]["id"] = records[1]["id"]
        return broken, f"record 3 (id '{records[1]['id']}')"
    if case == "unknown coco class":
        records[2]["coco"] = [*records[2]["coco"], "spaceship"]
        return broken, f"record 2 (id '{records[2]['id']}')"
    if case == "relation of 2 elements":
        records[4]["relations"][0] = records[4]["relations"][0][:2]
        return broken, f"record 4 (id '{records[4]['id']}')"
    if case == "missing key":
        del records[5]["caption"]
        return broken, f"record 5 (id '{records[5]['id']}')"
    raise AssertionError(case)


@pytest.mark.parametrize(
    "case", ["duplicate id", "unknown coco class", "relation of 2 elements", "missing key"]
)
def test_malformed_annotations_raise_naming_file_and_record(tmp_path: Path, case: str) -> None:
    document = yaml.safe_load(ANNOTATIONS.read_text(encoding="utf-8"))
    broken, label = _malformed(document, case)
    path = tmp_path / "annotations.yaml"
    path.write_text(yaml.safe_dump(broken, sort_keys=False), encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_annotations(path)
    message = str(info.value)
    assert str(path) in message
    assert label in message


def test_unquoted_on_is_reported_as_a_yaml_boolean(tmp_path: Path) -> None:
    path = tmp_path / "annotations.yaml"
    path.write_text(
        "images:\n"
        "  - id: mug\n"
        "    source: {package: p, loader: l, license: CC0}\n"
        "    caption: A mug on a table.\n"
        "    coco: [cup, dining table]\n"
        "    other: [coaster]\n"
        "    relations:\n"
        "      - [cup, on, dining table]\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"record 0 \(id 'mug'\).*boolean"):
        load_annotations(path)
