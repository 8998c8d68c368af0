"""``halluscope objects``: the pipeline's rule+lexicon objects per caption, with the hand-check
commands' conventions (errors name file, line and field, exit 2, nothing written; one summary
line on stderr)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from halluscope.benchmarks.caos.captions.extract import extract_texts
from halluscope.cli import main

CAPTIONS = [
    {"image_id": 1, "caption": "A dog sits next to a trash can. A cat can be seen on the couch."},
    {"image_id": "2", "text": "The picture shows a man holding a camera near a coffee table."},
]


def write_lines(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def run(capsys: pytest.CaptureFixture, *argv: Any) -> tuple[int, str]:
    code = main(["objects", *map(str, argv)])
    return code, capsys.readouterr().err


def test_objects_per_caption_with_gt(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    captions = write_lines(tmp_path / "c.jsonl", CAPTIONS)
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps({"imid_to_objects": {"1": ["dog"], "2": ["person"]}}))
    out = tmp_path / "o.json"
    code, err = run(capsys, "--captions", captions, "--gt", gt, "--out", out)
    assert code == 0, err
    doc = json.loads(out.read_text())
    first, second = doc["captions"]
    assert (first["image_id"], first["line"], second["image_id"], second["line"]) == (
        "1", 1, "2", 2,
    )  # fmt: skip
    assert [(o["name"], o["surface"], o["in_gt"]) for o in first["in_domain"]] == [
        ("dog", "dog", True),
        ("cat", "cat", False),
        ("couch", "couch", False),
    ]
    (can,) = first["out_of_domain"]
    caption = CAPTIONS[0]["caption"]
    assert (can["name"], can["source"], caption[can["start"] : can["end"]]) == (
        "can", "lexicon", "can",
    )  # fmt: skip
    assert can["start"] == caption.index("trash can") + len("trash ")
    assert [(o["surface"], o["reason"]) for o in first["rejected"]] == [("can", "not_noun")]
    assert [o["name"] for o in second["in_domain"]] == ["person", "dining table"]
    assert [o["name"] for o in second["out_of_domain"]] == ["camera"]
    assert {(o["surface"], o["reason"]) for o in second["rejected"]} == {
        ("picture", "the_image"),
        ("coffee", "modifier"),
    }
    assert doc["counts"]["in_domain"] == 5 and doc["counts"]["out_of_domain"] == 2
    assert err.strip().splitlines() == [
        f"halluscope objects: 2 captions, 5 in-domain and 2 out-of-domain objects "
        f"(3 lexicon matches dropped by the noun check) -> {out}"
    ]


def test_same_objects_as_the_extract_stage(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The command lists exactly the objects the stage writes, from a pipeline caption file."""
    from halluscope.benchmarks.caos.captions import extract

    texts = [list(c.values())[1] for c in CAPTIONS]
    responses = write_lines(
        tmp_path / "i01.jsonl",
        [{"image_id": c["image_id"], "text": t} for c, t in zip(CAPTIONS, texts, strict=True)],
    )
    settings = extract.ExtractSettings("rule+lexicon", "builtin", "pattern", "builtin")
    extract.run(settings, responses, tmp_path / "objects.jsonl")
    stage = [json.loads(line)["objects"] for line in (tmp_path / "objects.jsonl").open()]
    out = tmp_path / "o.json"
    assert run(capsys, "--captions", responses, "--out", out)[0] == 0
    shown = json.loads(out.read_text())["captions"]
    keys = ("name", "surface", "position", "in_domain", "source")
    for objects, row in zip(stage, shown, strict=True):
        listed = sorted(row["in_domain"] + row["out_of_domain"], key=lambda o: o["start"])
        assert [{k: o[k] for k in keys} for o in listed] == objects
        assert all("in_gt" not in o for o in listed)  # no --gt
    assert extract_texts(texts)[0]["objects"] == stage[0]


def test_concatenated_json_objects_are_read(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    captions = tmp_path / "c.json"
    captions.write_text(
        "\n".join(json.dumps({"image_id": i, "text": "A tree."}, indent=1) for i in (1, 2))
    )
    out = tmp_path / "o.json"
    assert run(capsys, "--captions", captions, "--out", out)[0] == 0
    rows = json.loads(out.read_text())["captions"]
    assert [(r["line"], [o["name"] for o in r["out_of_domain"]]) for r in rows] == [
        (1, ["tree"]),
        (5, ["tree"]),
    ]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([CAPTIONS[0], {"caption": "A tree."}], ":2: record 2: no 'image_id' field"),
        (
            [CAPTIONS[0], {"image_id": 3, "caption": 5}],
            "field 'caption': expected a string, got a int",
        ),
        ([{"image_id": 3}], ":1: record 1: field 'text': expected a string, got missing"),
        ([CAPTIONS[0], [1, 2]], ":2: record 2: expected a JSON object, got list"),
    ],
)
def test_bad_caption_record_names_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture, lines: list, message: str
) -> None:
    captions = write_lines(tmp_path / "c.jsonl", lines)
    out = tmp_path / "o.json"
    code, err = run(capsys, "--captions", captions, "--out", out)
    assert code == 2 and "Traceback" not in err
    assert f"halluscope objects: error: {captions}" in err and message in err, err
    assert not out.exists()


def test_malformed_json_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    captions = tmp_path / "c.jsonl"
    captions.write_text(json.dumps(CAPTIONS[0]) + '\n{"image_id": 2, "caption": \n')
    out = tmp_path / "o.json"
    code, err = run(capsys, "--captions", captions, "--out", out)
    assert code == 2 and f"{captions}:2: record 2: malformed JSON" in err, err
    assert not out.exists()


def test_missing_gt_and_empty_captions_and_bad_lexicon(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    captions = write_lines(tmp_path / "c.jsonl", CAPTIONS)
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps({"1": ["dog"]}))
    out = tmp_path / "o.json"
    code, err = run(capsys, "--captions", captions, "--gt", gt, "--out", out)
    assert code == 2 and f"{gt}: no ground truth for image id '2' ({captions}:2;" in err, err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, err = run(capsys, "--captions", empty, "--out", out)
    assert code == 2 and "--captions" in err and "(the file is empty)" in err, err
    code, err = run(capsys, "--captions", captions, "--lexicon", tmp_path / "no.txt", "--out", out)
    assert code == 2 and f"--lexicon: {tmp_path / 'no.txt'}: file not found" in err, err
    code, err = run(capsys, "--captions", tmp_path, "--out", out)
    assert code == 2 and f"--captions: {tmp_path}: is a directory" in err, err
    assert not out.exists()


def test_lexicon_file_is_used(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    captions = write_lines(tmp_path / "c.jsonl", [{"image_id": 1, "caption": "A lighthouse."}])
    lexicon = tmp_path / "lex.txt"
    lexicon.write_text("# nouns\nlighthouse\n")
    out = tmp_path / "o.json"
    assert run(capsys, "--captions", captions, "--lexicon", lexicon, "--out", out)[0] == 0
    (row,) = json.loads(out.read_text())["captions"]
    assert [o["name"] for o in row["out_of_domain"]] == ["lighthouse"]
