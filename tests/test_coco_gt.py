"""CHAIR ground truth from COCO annotations, and the two accepted GT file formats.

Agreement with the prebuilt ``../shared/data/coco/chair_gt_objects_*.json`` cannot be tested
here: it needs the MSCOCO 2014 annotation files, which are not available offline.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from halluscope.cli import main
from halluscope.data.coco import (
    COCO_ZIP_CAPTIONS,
    COCO_ZIP_INSTANCES,
    build_chair_gt,
    build_chair_gt_document,
    load_gt,
)
from halluscope.io import InputError
from halluscope.objects.coco import load_synonyms

# A synonym table in the reference CHAIR format. "baby" and "seat" are listed on purpose: the
# bigram merge must keep "baby elephant" from counting a person and "toilet seat" a chair.
SYNONYMS = """\
person, man, men, woman, baby, people
dog, puppy
car, automobile
toilet
chair, seat
elephant
sink
"""

INSTANCES = {
    "images": [{"id": 1}, {"id": 2}, {"id": 3}],
    "categories": [
        {"id": 1, "name": "person"},
        {"id": 18, "name": "dog"},
        {"id": 62, "name": "chair"},
        {"id": 70, "name": "toilet"},
    ],
    "annotations": [
        {"id": 10, "image_id": 1, "category_id": 1},
        {"id": 11, "image_id": 1, "category_id": 18},
        {"id": 12, "image_id": 1, "category_id": 1},
        {"id": 13, "image_id": 2, "category_id": 70},
    ],
}

CAPTIONS = {
    "images": [{"id": 1}, {"id": 2}, {"id": 3}],
    "annotations": [
        {"id": 1, "image_id": 1, "caption": "A man walks two dogs past parked cars."},
        {"id": 2, "image_id": 1, "caption": "Two men and their puppies on a street"},
        {"id": 3, "image_id": 2, "caption": "A toilet seat is up in a small bathroom."},
        {"id": 4, "image_id": 2, "caption": "A white toilet next to a sink, its seat down."},
        {"id": 5, "image_id": 3, "caption": "A baby elephant follows adult elephants."},
        {"id": 6, "image_id": 3, "caption": "Elephants walking through tall grass."},
    ],
}

EXPECTED = {
    "1": ["car", "dog", "person"],  # instances person+dog; "cars" from the captions
    "2": ["sink", "toilet"],  # "toilet seat" is the toilet, no chair
    "3": ["elephant"],  # no instance masks; "baby elephant" is no person
}


@pytest.fixture
def coco_files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "instances": tmp_path / "instances_val2014.json",
        "captions": tmp_path / "captions_val2014.json",
        "synonyms": tmp_path / "synonyms.txt",
    }
    paths["instances"].write_text(json.dumps(INSTANCES))
    paths["captions"].write_text(json.dumps(CAPTIONS))
    paths["synonyms"].write_text(SYNONYMS)
    return paths


@pytest.mark.parametrize("variant", ["pattern", "lemmatizer"])
def test_builder_unites_instances_and_caption_objects(
    coco_files: dict[str, Path], variant: str
) -> None:
    synonyms = load_synonyms(coco_files["synonyms"])
    assert build_chair_gt([INSTANCES], [CAPTIONS], variant, synonyms) == EXPECTED


def test_builder_with_builtin_synonyms() -> None:
    assert build_chair_gt([INSTANCES], [CAPTIONS], "pattern", None) == EXPECTED


def test_builder_keeps_images_without_objects() -> None:
    instances = {**INSTANCES, "images": [*INSTANCES["images"], {"id": 4}]}
    captions = {
        **CAPTIONS,
        "annotations": [
            *CAPTIONS["annotations"],
            {"id": 7, "image_id": 4, "caption": "A view of the sky at dusk."},
        ],
    }
    gt = build_chair_gt([instances], [captions], "pattern", None)
    assert gt["4"] == []


def test_builder_unites_several_files() -> None:
    train = {
        "images": [{"id": 1}],
        "categories": INSTANCES["categories"],
        "annotations": [{"id": 99, "image_id": 1, "category_id": 62}],
    }
    gt = build_chair_gt([INSTANCES, train], [CAPTIONS], "pattern", None)
    assert gt["1"] == ["car", "chair", "dog", "person"]


def test_unknown_category_names_the_file(coco_files: dict[str, Path], tmp_path: Path) -> None:
    bad = {**INSTANCES, "categories": [*INSTANCES["categories"], {"id": 90, "name": "dragon"}]}
    path = tmp_path / "instances_bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(InputError, match=r"instances_bad\.json.*dragon"):
        build_chair_gt_document([path], [coco_files["captions"]], "pattern", None)


def test_cli_coco_gt_files_and_zip(coco_files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "gt.json"
    args = ["--variant", "pattern", "--synonyms", str(coco_files["synonyms"])]
    code = main(
        [
            "coco-gt",
            "--instances",
            str(coco_files["instances"]),
            "--captions",
            str(coco_files["captions"]),
            *args,
            "--out",
            str(out),
        ]
    )
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["imid_to_objects"] == EXPECTED
    assert doc["variant"] == "pattern" and doc["synonyms"].startswith("sha256:")
    assert load_gt(out) == EXPECTED

    # the same inputs inside a COCO-style zip (train members empty) give the same objects
    archive = tmp_path / "annotations_trainval2014.zip"
    empty = {"images": [], "categories": INSTANCES["categories"], "annotations": []}
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(COCO_ZIP_INSTANCES[0], json.dumps(empty))
        zf.writestr(COCO_ZIP_INSTANCES[1], json.dumps(INSTANCES))
        zf.writestr(COCO_ZIP_CAPTIONS[0], json.dumps({"images": [], "annotations": []}))
        zf.writestr(COCO_ZIP_CAPTIONS[1], json.dumps(CAPTIONS))
    out_zip = tmp_path / "gt_zip.json"
    assert main(["coco-gt", "--zip", str(archive), *args, "--out", str(out_zip)]) == 0
    assert json.loads(out_zip.read_text())["imid_to_objects"] == EXPECTED
    # deterministic: a rerun gives identical bytes
    again = tmp_path / "gt_again.json"
    assert main(["coco-gt", "--zip", str(archive), *args, "--out", str(again)]) == 0
    assert again.read_bytes() == out_zip.read_bytes()


def test_cli_coco_gt_needs_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coco-gt", "--variant", "pattern", "--out", str(tmp_path / "o.json")]) == 2
    assert "--zip" in capsys.readouterr().err


# ------------------------------------------------------------------------------ load_gt


def test_load_gt_wrapped_format(tmp_path: Path) -> None:
    path = tmp_path / "gt.json"
    path.write_text(
        json.dumps({"imid_to_objects": {"5": ["dog", "cat", "dog"]}, "variant": "pattern"})
    )
    assert load_gt(path) == {"5": ["cat", "dog"]}


def test_load_gt_plain_format(tmp_path: Path) -> None:
    path = tmp_path / "gt.json"
    path.write_text(json.dumps({"139": ["person", "tv"], "285": []}))
    assert load_gt(path) == {"139": ["person", "tv"], "285": []}


@pytest.mark.parametrize(
    "doc, key",
    [
        ({"139": ["person"], "285": "bear"}, "'285'"),
        ({"imid_to_objects": {"7": ["dog", 3]}}, "'7'"),
        ({"imid_to_objects": {"8": None}}, "'8'"),
    ],
)
def test_load_gt_errors_name_file_and_key(tmp_path: Path, doc: dict, key: str) -> None:
    path = tmp_path / "bad_gt.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        load_gt(path)
    assert str(path) in str(info.value) and key in str(info.value)


def test_load_gt_rejects_non_mapping(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    with pytest.raises(InputError, match="list.json"):
        load_gt(path)
