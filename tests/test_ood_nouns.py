"""The noun check of out-of-domain lexicon matches (:mod:`halluscope.objects.nouns`): its rules on
hand-written captions, window tagging equal to whole-caption tagging, and its precision on 440
mentions of the real captions labelled by hand (``tests/data/ood_mentions.jsonl``, provenance in
``tests/data/ood_mentions.md``)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from halluscope.benchmarks.caos.captions.extract import extract_texts
from halluscope.io import read_json_records
from halluscope.objects.nouns import REASONS, WINDOW, NounCheck, _windows, load_tagger

ROOT = Path(__file__).resolve().parents[1]
LABELLED = ROOT / "tests" / "data" / "ood_mentions.jsonl"
SHARED = ROOT.parent / "shared" / "data"
needs_captions = pytest.mark.skipif(
    not (SHARED / "pope" / "captions").is_dir(), reason=f"reference data {SHARED} is absent"
)
FIELDS = {
    "file", "question_id", "image_id", "name", "surface", "start", "end", "excerpt_start",
    "excerpt", "label", "note", "split",
}  # fmt: skip


def lexicon_objects(caption: str) -> list[tuple[str, str]]:
    """(name, surface) of the out-of-domain objects the pipeline keeps in ``caption``."""
    (record,) = extract_texts([caption])
    return [(o["name"], o["surface"]) for o in record["objects"] if o["source"] == "lexicon"]


def rejected(caption: str) -> list[tuple[str, str]]:
    (record,) = extract_texts([caption], audit=True)
    return [(o["surface"], o["reason"]) for o in record["lexicon_rejected"]]


# ------------------------------------------------------------------------------------------------
# the rules on hand-written captions


def test_modal_can_is_not_an_object_but_trash_cans_are() -> None:
    caption = (
        "A bench can be seen near a trash can. Several people can also be spotted. "
        "There is a garbage can."
    )
    assert lexicon_objects(caption) == [("can", "can"), ("can", "can")]
    assert [r for r in rejected(caption) if r[0] == "can"] == [("can", "not_noun")] * 2


def test_questions_with_can_are_modal() -> None:
    assert lexicon_objects("What can you see in the image? Can you see any trees?") == [
        ("tree", "trees")
    ]


def test_verbs_are_not_objects() -> None:
    caption = "The crowd watches from the stands, and a man is wearing a watch."
    assert lexicon_objects(caption) == [("watch", "watch")]
    assert ("watches", "not_noun") in rejected(caption)


def test_compound_modifier_is_not_an_object_but_its_head_is() -> None:
    caption = "A coffee table stands near a street sign and a water bottle."
    assert lexicon_objects(caption) == [("sign", "sign")]
    assert {r for r in rejected(caption)} == {
        ("coffee", "modifier"),
        ("street", "modifier"),
        ("water", "modifier"),
    }


def test_modifier_of_a_place_or_part_is_kept() -> None:
    caption = "The image captures a beach scene, with a man on a street corner near a tree trunk."
    assert [n for n, _ in lexicon_objects(caption)] == ["beach", "street", "tree"]


@pytest.mark.parametrize(
    ("caption", "kept"),
    [
        ("The picture shows a dog on a couch.", []),
        ("This is a picture of a dog.", []),
        ("The people are posing for a picture.", []),
        ("A dog sits near a picture on a shelf.", [("picture", "picture"), ("shelf", "shelf")]),
        ("The dog is in the center of the frame.", []),
        ("A mirror with a wooden frame.", [("mirror", "mirror"), ("frame", "frame")]),
        ("A man is looking at the camera.", []),
        ("A man is holding a camera.", [("camera", "camera")]),
    ],
)
def test_the_picture_and_its_camera_are_not_objects(caption: str, kept: list) -> None:
    assert lexicon_objects(caption) == kept


def test_figurative_and_material_uses() -> None:
    caption = "The vase is made of blue glass and shows no signs of wear. A stop sign."
    assert rejected(caption) == [("glass", "material"), ("signs", "figurative")]
    assert lexicon_objects(caption) == []  # "stop sign" is the MSCOCO class, not the lexicon's


def test_reasons_are_counted_in_the_stage_stats(tmp_path: Path) -> None:
    from halluscope.benchmarks.caos.captions import extract

    responses = tmp_path / "r.jsonl"
    responses.write_text(
        json.dumps({"image_id": 1, "text": "A truck can be seen near a trash can."}) + "\n"
    )
    settings = extract.ExtractSettings("rule+lexicon", "builtin", "pattern", "builtin")
    stats = extract.run(settings, responses, tmp_path / "o.jsonl")
    assert stats["lexicon_kept"] == 1 and stats["lexicon_rejected_not_noun"] == 1
    assert set(REASONS) == {k.removeprefix("lexicon_rejected_") for k in stats if "rejected_" in k}
    (record,) = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [(o["name"], o["source"]) for o in record["objects"]] == [
        ("truck", "rule"),
        ("can", "lexicon"),
    ]
    assert "lexicon_rejected" not in record  # the audit trail is the command's, not the stage's


# ------------------------------------------------------------------------------------------------
# windows


def test_windows_are_whole_chunks_around_each_match_and_merge() -> None:
    words = [f"w{i}" for i in range(40)]
    caption = " ".join(words)
    start = caption.index("w20")
    (window,) = _windows(caption, [(start, start + 3)])
    assert caption[window[0] : window[1]].split() == words[20 - WINDOW : 21 + WINDOW]
    near = caption.index("w22")
    assert len(_windows(caption, [(start, start + 3), (near, near + 3)])) == 1


def test_window_tags_equal_whole_caption_tags() -> None:
    """The rules read the tag of a match's last word and of the three tokens after it; tagged in
    a window they are the tags of a whole-caption pass."""
    captions = [
        "The image shows a kitchen with a white sink. A trash can is next to the toilet, and "
        "several bottles can be seen on the counter near the coffee maker. The walls are painted "
        "white, and there is a window above the sink, with a picture hanging beside it.",
        "Two men in suits stand in front of a building while a crowd watches from the street. "
        "One of them is looking at the camera, and the other is holding a sign that reads "
        "'Welcome'. Trees line the road in the background.",
    ]
    nlp = load_tagger()
    for caption in captions:
        whole = {t.idx: t.tag_ for t in nlp(caption)}
        check = NounCheck(nlp)
        (record,) = extract_texts([caption], audit=True)
        matches = [
            o for o in [*record["objects"], *record["lexicon_rejected"]] if o["source"] == "lexicon"
        ]
        assert len(matches) >= 5
        for o in matches:
            start = _starts(caption, o)
            end = start + len(o["surface"])
            check.reason(caption, start, end, o["name"])
            a, b = next(w for w in check._windows[caption] if w[0] <= start and end <= w[1])
            tagged = check._tagged[caption[a:b]]
            head = max(i for i, s in enumerate(tagged.starts) if s <= end - 1 - a)
            for k in range(head, min(head + 4, len(tagged.starts))):
                assert tagged.tags[k] == whole[a + tagged.starts[k]], (o, k)


TAG_WITHOUT_TORCH = """
import json, sys
from halluscope.objects.nouns import load_tagger
nlp = load_tagger()
texts = json.loads(sys.stdin.read())
tags = [[t.tag_ for t in d] for d in nlp.pipe(texts)]
print(json.dumps({"torch": "torch" in sys.modules, "tags": tags}))
"""


def test_tagger_loaded_without_torch_tags_as_with_it() -> None:
    """A job that has not imported torch loads the tagger with torch hidden from thinc (2 CPU
    seconds less per extraction job); the tags of every labelled excerpt are the same as those of
    a tagger loaded beside torch (as in this test process)."""
    import subprocess
    import sys

    import torch  # noqa: F401  # this process: the tagger loads with torch present

    texts = sorted({r["excerpt"] for r in labelled()})
    proc = subprocess.run(
        [sys.executable, "-c", TAG_WITHOUT_TORCH],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(proc.stdout)
    assert result["torch"] is False  # the job never imported torch
    nlp = load_tagger()
    assert result["tags"] == [[t.tag_ for t in d] for d in nlp.pipe(texts)]
    assert "torch" in sys.modules and sys.modules["torch"] is not None


# ------------------------------------------------------------------------------------------------
# the labelled real mentions


def labelled() -> list[dict]:
    return [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]


def test_labelled_set_is_committed_and_well_formed() -> None:
    rows = labelled()
    assert len(rows) >= 300
    assert all(set(r) == FIELDS for r in rows)
    assert {r["label"] for r in rows} == {"object", "not_object"}
    assert all(r["note"] for r in rows if r["label"] == "not_object")
    keys = [(r["file"], r["question_id"], r["start"]) for r in rows]
    assert len(set(keys)) == len(keys)
    for r in rows:
        offset = r["start"] - r["excerpt_start"]
        assert r["excerpt"][offset : offset + len(r["surface"])] == r["surface"]
        assert len(r["excerpt"]) <= 80 + len(r["surface"]) + 40


@needs_captions
def test_noun_check_precision_on_labelled_real_mentions(record_property) -> None:
    rows = labelled()
    captions: dict[str, dict[object, str]] = {}
    for name in sorted({r["file"] for r in rows}):
        captions[name] = {
            rec["question_id"]: rec["text"] for rec in read_json_records(SHARED / name)
        }
    texts = []
    for r in rows:
        text = captions[r["file"]][r["question_id"]]
        assert text[r["excerpt_start"] :].startswith(r["excerpt"]), r  # the labelled caption
        texts.append(text)
    distinct = list(dict.fromkeys(texts))
    records = dict(zip(distinct, extract_texts(distinct), strict=True))
    counts: Counter[tuple[str, bool]] = Counter()
    for r, text in zip(rows, texts, strict=True):
        kept = {
            o["surface"]
            for o in records[text]["objects"]
            if o["source"] == "lexicon" and _starts(text, o) == r["start"]
        }
        counts[(r["label"], bool(kept))] += 1
    tp, fp = counts[("object", True)], counts[("not_object", True)]
    fn = counts[("object", False)]
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    record_property("precision", precision)
    record_property("recall", recall)
    print(f"noun check on {len(rows)} labelled mentions: precision {precision:.3f}, "
          f"recall {recall:.3f} (tp {tp}, fp {fp}, fn {fn})")  # fmt: skip
    assert precision >= 0.97
    assert recall >= 0.9  # a check that drops every match would be precise and useless


def _starts(text: str, obj: dict) -> int:
    from halluscope.objects.parser import tokenize

    return tokenize(text)[obj["position"]].start
