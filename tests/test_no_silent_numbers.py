"""No silent wrong number on the own-captions path, and errors before any job (issue 48,
items 6-11): each case below printed numbers with exit 0, or failed at a late job, before.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from halluscope.config import ConfigError, load_with_overlays
from halluscope.data.fetch import default_mirror
from halluscope.io import InputError

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MIRROR = default_mirror()
GT = "coco/chair_gt_objects_pattern.json"
needs_gt = pytest.mark.skipif(
    MIRROR is None or not (MIRROR / GT).is_file(),
    reason="needs ../shared/data (CHAIR's MSCOCO ground truth)",
)
# MSCOCO 2014 val image ids with CHAIR ground truth
IMAGES = (281533, 139, 285)


def halluscope(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "halluscope"), *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def overlay(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "overlay.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_caption_files_of_other_images_are_refused(tmp_path: Path) -> None:
    """One file per instruction: the profile scores the first file's images, so a second file
    of other images would score one caption of twenty without a word."""
    a = write_jsonl(tmp_path / "a.jsonl", [{"image_id": i, "caption": "a dog"} for i in IMAGES])
    b = write_jsonl(tmp_path / "b.jsonl", [{"image_id": 139, "caption": "a cat"}])
    out = tmp_path / "p.yaml"
    proc = halluscope(
        "captions-profile", "q", "--captions", f"i01={a}", "--captions", f"i02={b}", "--out",
        str(out),
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert f"{b}: no caption for 2 of its images" in proc.stderr and not out.exists()


@needs_gt
def test_caption_files_of_the_same_images_in_another_order_are_accepted(tmp_path: Path) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", [{"image_id": i, "caption": "a dog"} for i in IMAGES])
    records = [{"image_id": i, "caption": "a cat"} for i in reversed(IMAGES)]
    b = write_jsonl(tmp_path / "b.jsonl", records)
    out = tmp_path / "p.yaml"
    proc = halluscope(
        "captions-profile", "q", "--captions", f"i01={a}", "--captions", f"i02={b}", "--out",
        str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")
    assert "synonyms: chair/synonyms.txt" in text  # CHAIR's own list by default


@needs_gt
def test_caption_image_ids_without_ground_truth_are_refused(tmp_path: Path) -> None:
    bad = write_jsonl(tmp_path / "c.jsonl", [{"image_id": 1, "caption": "a dog"}])
    proc = halluscope("captions-profile", "q", "--captions", str(bad), "--out", str(tmp_path / "p"))
    assert proc.returncode == 2 and f"{bad}: 1 image ids have no MSCOCO ground truth" in proc.stderr


def test_a_record_with_caption_and_text_is_read_one_way_everywhere(tmp_path: Path) -> None:
    """``caption`` when present, else ``text``: the pipeline's replay, ``halluscope chair`` and
    ``halluscope objects`` (the pipeline read ``text``, the hand-check ``caption``)."""
    from halluscope.commands.chair import read_captions
    from halluscope.commands.objects import read_captions as object_captions
    from halluscope.models.base import Request
    from halluscope.models.replay import ReplayBackend

    record = {"image_id": 139, "caption": "a dog on a couch", "text": "a cat"}
    path = write_jsonl(tmp_path / "c.jsonl", [record])
    request = Request("r", image_id="139", messages=({"role": "user", "content": "Describe"},))
    reply = ReplayBackend(path).generate([request])[0]
    assert reply.text == "a dog on a couch"
    assert read_captions(path) == [("139", "a dog on a couch")]
    assert object_captions(path)[0][1] == "a dog on a couch"


def test_chair_refuses_a_duplicate_image_id_as_the_pipeline_does(tmp_path: Path) -> None:
    from halluscope.commands.chair import read_captions
    from halluscope.models.replay import ReplayBackend

    path = write_jsonl(
        tmp_path / "c.jsonl",
        [{"image_id": 139, "caption": "a dog"}, {"image_id": 139, "caption": "a cat"}],
    )
    for read in (read_captions, ReplayBackend):
        with pytest.raises(InputError, match=r"c.jsonl:2: duplicate caption for image '139'"):
            read(path)


def test_a_byte_order_mark_is_accepted_and_line_numbers_agree(tmp_path: Path) -> None:
    from halluscope.commands.chair import read_captions
    from halluscope.models.replay import ReplayBackend

    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + b'{"image_id": 139, "caption": "a dog"}\n')
    assert read_captions(bom) == [("139", "a dog")]
    assert ReplayBackend(bom).image_ids == ["139"]
    cut = tmp_path / "cut.jsonl"
    cut.write_text('{"image_id": 1, "caption": "a"}\n{"image_id": 2, "caption": "b"}\n'
                   '{"image_id": 3, "caption":\n')  # fmt: skip
    for read in (read_captions, ReplayBackend):
        with pytest.raises(InputError, match=r"cut.jsonl:3: malformed JSON"):
            read(cut)


def test_table1_instructions_that_are_not_generated_are_refused(tmp_path: Path) -> None:
    path = overlay(
        tmp_path, "generate: {instructions: [i01]}\ntables: {table1_instructions: [i02]}\n"
    )
    with pytest.raises(ConfigError, match=r"tables.table1_instructions: none of i02 is generated"):
        load_with_overlays(ROOT / "params.yaml", [path])
    partly = overlay(tmp_path, "generate: {instructions: [i01]}\n")  # Table 1 pools i01 alone
    assert load_with_overlays(ROOT / "params.yaml", [partly])["generate"]["instructions"] == ["i01"]


@pytest.mark.parametrize(
    "frequent, message",
    [
        ("[person, car, chair]", "lists 3 classes, fewer than caos.k_max"),
        ("[person, person, car]", "'person' is listed twice"),
        ("[person, carr]", "'carr' is not an MSCOCO class name"),
    ],
)
def test_a_short_or_odd_frequent_list_is_refused_naming_the_key(
    tmp_path: Path, frequent: str, message: str
) -> None:
    path = overlay(tmp_path, f"caos: {{frequent: {frequent}}}\n")
    with pytest.raises(ConfigError, match="caos.frequent") as err:
        load_with_overlays(ROOT / "params.yaml", [path])
    assert message in str(err.value)


def test_check_params_names_a_missing_image_folder(tmp_path: Path) -> None:
    path = overlay(tmp_path, f"data: {{images: {tmp_path / 'absent'}}}\n")
    proc = halluscope("check-params", str(path))
    assert proc.returncode == 2 and "data.images: folder" in proc.stderr and "absent" in proc.stderr


def test_a_lexicon_that_is_not_utf8_is_named_with_its_line(tmp_path: Path) -> None:
    from halluscope.objects.ood_nouns import load_lexicon

    lexicon = tmp_path / "nouns.txt"
    lexicon.write_bytes(b"lamp\nsofa\ncaf\xe9\n")
    with pytest.raises(InputError, match=r"nouns.txt:3: not valid UTF-8"):
        load_lexicon(str(lexicon))


def test_dangling_and_looping_links_under_results_are_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Snakefile's record of built outputs walks ``results/`` on every run: a user's
    broken link there gave a traceback and blocked every Snakemake command."""
    from halluscope.provenance import record, replaced_outputs

    monkeypatch.chdir(tmp_path)
    results = tmp_path / "results" / "tables"
    results.mkdir(parents=True)
    (results / "a.csv").write_text("x\n")
    (results / "dangling.csv").symlink_to(tmp_path / "absent.csv")
    (results / "loop.csv").symlink_to(results / "loop.csv")
    assert record("demo", ["results"]) == 1  # a.csv, and neither link
    assert replaced_outputs("demo", ["results"]) == []
    (results / "a.csv").write_text("y\n")
    assert replaced_outputs("demo", ["results"]) == ["results/tables/a.csv"]


@needs_gt
def test_coco_id_check_reads_replay_files_as_their_models_do(tmp_path: Path) -> None:
    """The check before any job reads each replay file with its model's ``answer_field``, and
    leaves out a recording keyed by ``key_fields`` (HallusionBench's five ids: no image ids);
    before, both failed to parse in a COCO profile."""
    from halluscope.commands.params import check_coco_ids

    keyed = write_jsonl(
        tmp_path / "hb.jsonl",
        [{"category": "VS", "subcategory": "chart", "set_id": 0, "figure_id": 0,
          "question_id": 0, "model_prediction": "Yes."}],
    )  # fmt: skip
    good = write_jsonl(tmp_path / "a.jsonl", [{"image_id": i, "answer": "a dog"} for i in IMAGES])
    bad = write_jsonl(tmp_path / "b.jsonl", [{"image_id": 1, "answer": "a dog"}])
    listed = write_jsonl(tmp_path / "l.jsonl", [{"image_id": i, "caption": "a"} for i in IMAGES])

    def config(path: Path) -> dict:
        return {
            "data": {"dataset": "coco", "image_list": str(listed)},
            "generate": {"models": ["hb", "own"]},
            "models": {
                "hb": {"backend": "replay", "path": str(keyed), "answer_field": "model_prediction",
                       "key_fields": ["category", "subcategory", "set_id", "figure_id",
                                      "question_id"]},
                "own": {"backend": "replay", "path": str(path), "answer_field": "answer"},
            },
        }  # fmt: skip

    check_coco_ids(config(good), "overlay.yaml")
    with pytest.raises(ConfigError, match=f"{bad}: 1 image ids have no MSCOCO ground truth"):
        check_coco_ids(config(bad), "overlay.yaml")
