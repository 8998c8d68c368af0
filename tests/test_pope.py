"""POPE: answer parsers, scores, question building, and parity with the published numbers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from halluscope.benchmarks.pope.metric import (
    PARSERS,
    build_questions,
    cooccurrence,
    object_frequency,
    parse_answer,
    parse_opera,
    parse_original,
    parse_strict,
    pope_scores,
    question_text,
)
from halluscope.cli import main
from halluscope.objects.coco import COCO_CLASSES

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason=f"reference data folder {SHARED} is absent (../shared/data)"
)
HALC = SHARED / "halc" / "pope"
HALC_Q = HALC / "coco_num_images_500_num_samples_3_pope_random_questions.json"
HALC_A = HALC / (
    "minigpt4_pretrain-llama2_coco_num_images_500_num_samples_3_generated_pope_random_answers.json"
)
QUESTION = re.compile(r"Is there an? (.+) in the im(?:a|an)ge\?")


def _object(text: str) -> str:
    match = QUESTION.fullmatch(text)
    assert match, text
    return match.group(1)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ------------------------------------------------------------------------------------ parsers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yes, there is a dog in the image.", "yes"),
        ("No, there is no dog.", "no"),
        ("No.", "no"),
        ("There is not a dog in the image.", "no"),
        ("no", "no"),
        ("NO", "yes"),  # case-sensitive word list: No, not, no
        ("Not really.", "yes"),  # 'Not' is not in the list
        ("There isn't a dog in the image.", "yes"),  # the original ignores n't
        ("Yes. But there is no cat.", "yes"),  # only the first sentence counts
        ("I think not, the image shows a cat.", "no"),  # comma removed: 'not' is a word
        ("nope", "yes"),
        ("", "yes"),  # never fails
        ("Yes\nno", "yes"),  # split on ' ' only: 'Yes\nno' is one word
    ],
)
def test_original_parser(text: str, expected: str) -> None:
    assert parse_original(text) == expected
    assert parse_answer(text, "original") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yes, there is a dog.", "yes"),
        ("There isn't a dog in the image.", "no"),  # n't counts
        ("The dog doesn't appear.", "no"),
        ("Yes. But there is no cat.", "no"),  # the whole answer counts
        ("NO", "no"),  # OPERA's list has NO
        ("Not really", "yes"),
        ("no.", "no"),  # '.' is deleted before splitting
        ("Nothing notable", "yes"),
        ("", "yes"),
    ],
)
def test_opera_parser(text: str, expected: str) -> None:
    assert parse_opera(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yes", "yes"),
        ("yes.", "yes"),
        ("  **No**, there is none.", "no"),
        ("YES, a dog.", "yes"),
        ("No", "no"),
        ("Nope.", None),
        ("There is no dog.", None),  # does not start with yes/no
        ("Yesterday I saw a dog", None),  # 'yes' must be a whole word
        ("noodles", None),
        ("", None),
    ],
)
def test_strict_parser(text: str, expected: str | None) -> None:
    assert parse_strict(text) == expected


def test_unknown_parser_is_named() -> None:
    with pytest.raises(ValueError, match="unknown POPE parser 'vcd'"):
        parse_answer("yes", "vcd")


# ------------------------------------------------------------------------------------- scores


def test_scores_by_hand() -> None:
    labels = ["yes", "yes", "yes", "no", "no", "no"]
    preds = ["yes", "no", None, "yes", "no", None]
    s = pope_scores(labels, preds)
    assert (s.tp, s.fn, s.fp, s.tn, s.unparsed, s.n) == (1, 1, 1, 1, 2, 6)
    assert s.accuracy == pytest.approx(2 / 6)  # unparsed are wrong
    assert s.precision == pytest.approx(1 / 2)  # unparsed is not a yes prediction
    assert s.recall == pytest.approx(1 / 3)  # unparsed positive is a miss
    assert s.f1 == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))
    assert s.yes_ratio == pytest.approx(2 / 4)  # over parsed answers
    assert set(s.as_dict()) == {
        "accuracy",
        "precision",
        "recall",
        "f1",
        "yes_ratio",
        "n",
        "unparsed",
    }


def test_scores_zero_denominators_and_bad_labels() -> None:
    s = pope_scores(["no", "no"], ["no", "no"])
    assert (s.precision, s.recall, s.f1, s.accuracy, s.yes_ratio) == (0.0, 0.0, 0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="label 1"):
        pope_scores(["maybe"], ["yes"])
    with pytest.raises(ValueError, match="2 labels but 1"):
        pope_scores(["yes", "no"], ["yes"])


# -------------------------------------------------------------------------- question building

GT = {
    "img1": ["person", "dog", "frisbee", "car"],
    "img2": ["person", "car", "traffic light", "bus"],
    "img3": ["person", "dog", "car", "bench"],
    "img4": ["cat", "couch", "remote", "tv"],
    "img5": ["person", "umbrella"],  # fewer than n = 3 objects: skipped
}


@pytest.mark.parametrize("setting", ["random", "popular", "adversarial"])
def test_questions_balanced_alternating_and_negatives_absent(setting: str) -> None:
    qs = build_questions(GT, setting, n=3, seed=7)
    assert len(qs) == 4 * 6
    assert [q["question_id"] for q in qs] == list(range(1, 25))
    assert [q["label"] for q in qs] == ["yes", "no"] * 12
    assert set(qs[0]) == {"question_id", "image", "text", "label"}
    for image in ("img1", "img2", "img3", "img4"):
        mine = [q for q in qs if q["image"] == image]
        objs = [_object(q["text"]) for q in mine]
        assert len(set(objs)) == 6  # no object asked twice
        for q, obj in zip(mine, objs, strict=True):
            assert (obj in GT[image]) == (q["label"] == "yes")
            assert obj in COCO_CLASSES
    assert "img5" not in {q["image"] for q in qs}


@pytest.mark.parametrize("setting", ["random", "popular", "adversarial"])
def test_questions_deterministic_by_seed(setting: str) -> None:
    assert build_questions(GT, setting, seed=3) == build_questions(GT, setting, seed=3)
    seeds = {json.dumps(build_questions(GT, setting, seed=s)) for s in range(10)}
    assert len(seeds) > 1  # the seed drives the positives (and the random negatives)


def test_random_negatives_are_uniform_over_vocabulary() -> None:
    gt = {f"i{k}": ["person", "dog", "car"] for k in range(3000)}
    qs = build_questions(gt, "random", n=3, seed=0)
    negs = Counter(_object(q["text"]) for q in qs if q["label"] == "no")
    assert set(negs) == set(COCO_CLASSES) - {"person", "dog", "car"}  # all 77 reachable
    mean = 9000 / 77
    assert all(0.6 * mean < c < 1.4 * mean for c in negs.values())


def test_popular_picks_most_frequent_absent_objects() -> None:
    freq = object_frequency(GT)
    assert freq["person"] == 4 and freq["car"] == 3 and freq["dog"] == 2
    qs = build_questions(GT, "popular", n=3, seed=0)
    negs = [_object(q["text"]) for q in qs if q["image"] == "img4" and q["label"] == "no"]
    # person (4 images), car (3), dog (2): the three most frequent, most frequent first
    assert negs == ["person", "car", "dog"]
    negs = [_object(q["text"]) for q in qs if q["image"] == "img2" and q["label"] == "no"]
    # person and car are present; then dog (2), then the 1-image ties in COCO category order
    # (bus, traffic light present; img5 counts although it is skipped for having 2 objects)
    assert negs == ["dog", "bench", "cat"]


def test_adversarial_picks_cooccurring_objects() -> None:
    co = cooccurrence(GT)
    assert co["dog"] == {"person": 2, "car": 2, "frisbee": 1, "bench": 1}
    gt = {"x": ["dog", "cat", "tv"], **GT}  # counts are taken over this mapping, x included
    qs = build_questions(gt, "adversarial", n=3, seed=0, positives="first")
    pairs = [(_object(qs[i]["text"]), _object(qs[i + 1]["text"])) for i in (0, 2, 4)]
    assert pairs == [
        ("dog", "person"),  # person and car co-occur twice with dog; person is more frequent
        ("cat", "couch"),  # tv (2) is present; couch and remote (1 each): category order
        ("tv", "remote"),  # cat, dog present; couch already asked
    ]


def test_exhausted_ranking_falls_back_to_seeded_draw() -> None:
    gt = {"a": ["zebra", "giraffe", "person"], "b": ["zebra", "giraffe", "dog"]}
    qs = build_questions(gt, "adversarial", n=3, seed=1, positives="first")
    negs = [_object(q["text"]) for q in qs[:6] if q["label"] == "no"]
    assert negs[0] == "dog"  # zebra co-occurs with giraffe (present), person (present), dog
    assert all(n not in gt["a"] for n in negs) and len(set(negs)) == 3


def test_question_text_and_typo_flag() -> None:
    assert question_text("dog") == "Is there a dog in the image?"
    assert question_text("orange") == "Is there an orange in the image?"
    # the original release has the typo in the "an" template only
    assert question_text("orange", typo=True) == "Is there an orange in the imange?"
    assert question_text("dog", typo=True) == "Is there a dog in the image?"
    qs = build_questions({"i": ["apple", "oven", "umbrella"]}, "popular", typo=True)
    assert all(q["text"].endswith("imange?") for q in qs if q["label"] == "yes")


@needs_shared
def test_question_text_matches_released_files() -> None:
    """halc/pope has the old typo (typo=True); the current POPE release is typo-free.

    The current release has one hand-edit slip: "Is there an traffic light in the image?".
    """
    for q in _jsonl(HALC_Q):
        assert question_text(_object(q["text"]), typo=True) == q["text"]
    differ = []
    for setting in ("random", "popular", "adversarial"):
        for q in _jsonl(SHARED / "pope" / "questions" / f"coco_pope_{setting}.json"):
            if question_text(_object(q["text"])) != q["text"]:
                differ.append((setting, q["text"]))
    assert differ == [("random", "Is there an traffic light in the image?")]


def test_bad_inputs_are_named() -> None:
    with pytest.raises(ValueError, match="unknown POPE setting"):
        build_questions(GT, "hard")
    with pytest.raises(ValueError, match="'img'.*'unicorn'"):
        build_questions({"img": ["unicorn", "dog", "cat"]}, "random")


@needs_shared
@pytest.mark.parametrize("setting", ["popular", "adversarial"])
def test_reproduces_released_pope_files(setting: str) -> None:
    """With POPE's released stats and positives, popular/adversarial give POPE's negatives.

    The images' full object sets are not released; the CHAIR GT (pattern build) stands in.
    Adversarial differs only where the positive's co-occurrence list is used up and POPE draws
    at random (3 of 1,500 negatives).
    """
    stats = SHARED / "pope" / "stats"
    freq = json.loads((stats / "coco_ground_truth_objects.json").read_text())
    lists = json.loads((stats / "coco_co_occur.json").read_text())
    co = {a: {b: len(row) - j for j, b in enumerate(row)} for a, row in lists.items()}
    ref = _jsonl(SHARED / "pope" / "questions" / f"coco_pope_{setting}.json")
    chair = json.loads((SHARED / "coco" / "chair_gt_objects_pattern.json").read_text())
    gt: dict[str, list[str]] = {}
    for q in ref:
        if q["label"] == "yes":
            gt.setdefault(q["image"], []).append(_object(q["text"]))
    for image, objs in gt.items():
        extra = chair["imid_to_objects"][str(int(image[-16:-4]))]
        objs.extend(o for o in extra if o not in objs)
    ours = build_questions(gt, setting, positives="first", frequency=freq, cooc=co)
    assert len(ours) == len(ref) == 3000
    diff = [(a, b) for a, b in zip(ours, ref, strict=True) if a != b]
    if setting == "popular":
        assert diff == []
    else:
        assert len(diff) == 3
        for a, b in diff:
            pos = _object(ours[a["question_id"] - 2]["text"])
            assert a["label"] == "no" and _object(b["text"]) not in lists[pos]
            assert _object(a["text"]) not in gt[a["image"]]


# ------------------------------------------------------------------------------------ the CLI


@needs_shared
def test_cli_original_parser_matches_published_numbers(tmp_path: Path) -> None:
    out = tmp_path / "scores.json"
    cmd = [sys.executable, "-m", "halluscope.cli", "pope", "--questions", str(HALC_Q)]
    cmd += ["--answers", str(HALC_A), "--parser", "original", "--out", str(out)]
    subprocess.run(cmd, check=True)
    text = out.read_text()
    got = json.loads(text)
    assert list(got) == sorted(got)
    assert set(got) == {
        "accuracy",
        "precision",
        "recall",
        "f1",
        "yes_ratio",
        "n",
        "unparsed",
        "parser",
        "intervals",
        "interval_settings",
        "by_image",
    }
    assert (got["n"], got["unparsed"], got["parser"]) == (3000, 0, "original")
    assert len(got["by_image"]["counts"]) == 500
    # 6 questions on each of 500 images: the image is the unit, its questions move together
    for key, interval in got["intervals"].items():
        assert interval["lo"] - 1e-6 <= got[key] <= interval["hi"] + 1e-6, key
        assert interval["n_units"] == 500 and interval["unit"] == "image", key
    assert got["intervals"]["accuracy"]["method"] == "wilson (effective n)"
    assert got["intervals"]["f1"]["method"] == "bca"
    rounded = {k: round(got[k], 4) for k in ("accuracy", "precision", "recall", "f1", "yes_ratio")}
    assert rounded == {
        "accuracy": 0.5363,
        "precision": 0.5190,
        "recall": 0.9940,
        "f1": 0.6819,
        "yes_ratio": 0.9577,
    }


@needs_shared
@pytest.mark.parametrize(
    ("parser", "expected"),
    [
        ("opera", (0.5397, 0.5210, 0.9860, 0.6817, 0.9463, 0)),
        ("strict", (0.4890, 0.5325, 0.9660, 0.6866, 0.9934, 261)),
    ],
)
def test_cli_other_parsers_on_halc(tmp_path: Path, parser: str, expected: tuple) -> None:
    out = tmp_path / "s.json"
    argv = ["pope", "--questions", str(HALC_Q), "--answers", str(HALC_A)]
    assert main([*argv, "--parser", parser, "--out", str(out)]) == 0
    got = json.loads(out.read_text())
    keys = ("accuracy", "precision", "recall", "f1", "yes_ratio")
    assert (*(round(got[k], 4) for k in keys), got["unparsed"]) == expected
    assert set(PARSERS) == {"original", "opera", "strict"}


def _write(path: Path, records: list, jsonl: bool = True) -> Path:
    if jsonl:
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    else:
        path.write_text(json.dumps(records))
    return path


QS = [
    {"question_id": 1, "image": "a.jpg", "text": "Is there a dog in the image?", "label": "yes"},
    {"question_id": 2, "image": "a.jpg", "text": "Is there a cat in the image?", "label": "no"},
]


def test_cli_answers_by_question_id(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.jsonl", QS)
    a = _write(
        tmp_path / "a.jsonl",
        [{"question_id": "2", "text": "No."}, {"question_id": 1, "text": "Yes"}],
    )
    out = tmp_path / "o.json"
    assert main(["pope", "--questions", str(q), "--answers", str(a), "--out", str(out)]) == 0
    got = json.loads(out.read_text())
    assert (got["accuracy"], got["n"], got["parser"]) == (1.0, 2, "original")


@pytest.mark.parametrize(
    ("answers", "jsonl", "message"),
    [
        ([{"question": "Is there a dog in the image?", "answer": "Yes"}], False, "1 answers but"),
        (
            [
                {"question": "Is there a dog in the image?", "answer": "Yes"},
                {"question": "Is there a cow in the image?", "answer": "No"},
            ],
            False,
            "record 2: question 'Is there a cow in the image\\?' does not match",
        ),
        ([{"question_id": 1, "text": "Yes"}], True, "no answer to .* record 2 \\(question_id 2\\)"),
        (
            [{"question_id": 1, "text": "a"}, {"question_id": 1, "text": "b"}],
            True,
            "record 2: second answer to question_id 1",
        ),
        (
            [
                {"question_id": 1, "text": "a"},
                {"question_id": 2, "text": "b"},
                {"question_id": 9, "text": "c"},
            ],
            True,
            "question_id 9 is not in",
        ),
    ],
)
def test_cli_misaligned_answers_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture, answers: list, jsonl: bool, message: str
) -> None:
    q = _write(tmp_path / "q.jsonl", QS)
    a = _write(tmp_path / "a.json", answers, jsonl=jsonl)
    out = tmp_path / "o.json"
    assert main(["pope", "--questions", str(q), "--answers", str(a), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "a.json" in err and re.search(message, err), err
    assert not out.exists()


def test_cli_malformed_questions_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps(QS[0]) + "\n{oops\n")
    a = _write(tmp_path / "a.jsonl", [{"question_id": 1, "text": "Yes"}])
    assert (
        main(["pope", "--questions", str(q), "--answers", str(a), "--out", str(tmp_path / "o")])
        == 2
    )
    assert "q.jsonl:2: malformed JSON" in capsys.readouterr().err


def test_cli_build(tmp_path: Path) -> None:
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps({"imid_to_objects": {"42": ["person", "dog", "car"], "7": ["cat"]}}))
    outs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.jsonl"
        argv = ["pope-build", "--gt", str(gt), "--setting", "popular", "--seed", "5"]
        argv += ["--image-template", "COCO_val2014_{id:0>12}.jpg", "--out", str(out)]
        assert main(argv) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    qs = _jsonl(tmp_path / "a.jsonl")
    assert len(qs) == 6 and qs[0]["image"] == "COCO_val2014_000000000042.jpg"
    assert [q["label"] for q in qs] == ["yes", "no"] * 3


def test_cli_build_from_items_with_image_sample(tmp_path: Path) -> None:
    items = [
        {"image_id": f"im{k}", "gt_objects": ["person", "dog", "car", "cat"][: 2 + k % 3]}
        for k in range(10)
    ]
    gt = _write(tmp_path / "items.jsonl", items)
    out = tmp_path / "q.jsonl"
    argv = ["pope-build", "--gt", str(gt), "--setting", "adversarial", "--n", "3"]
    assert main([*argv, "--images", "4", "--out", str(out)]) == 0
    qs = _jsonl(out)
    assert len(qs) == 4 * 6 and len({q["image"] for q in qs}) == 4
    assert main([*argv, "--images", "9", "--out", str(out)]) == 2  # only 6 images have 3 objects
