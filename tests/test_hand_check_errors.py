"""Hand-check commands: clear errors for duplicate POPE question ids and non-UTF-8 synonym files,
``--out`` refusing symlinks, paths that are not regular files (the shared atomic writer) and the
command's own inputs; ground-truth names read as caption words; JSON lines in a text questions
file; and one true warning line for empty POPE answers and CAOS objects without a vector.
"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
from pathlib import Path

import pytest

from halluscope.cli import main
from halluscope.data.coco import load_gt
from halluscope.io import InputError, _write_target, atomic_write_text, write_json
from halluscope.objects.coco import COCO_CLASSES
from halluscope.objects.parser import ObjectParser

QUESTION = "Is there a {} in the image?"
OBJECTS = ("dog", "cat", "car", "cup")


def question(qid: int, obj: str, label: str = "yes") -> dict:
    return {"question_id": qid, "image": "a.jpg", "text": QUESTION.format(obj), "label": label}


def write_lines(path: Path, lines: list) -> Path:
    """One JSON record per line; ``""`` gives a blank line (skipped by the readers)."""
    path.write_text("".join((json.dumps(x) if x != "" else "") + "\n" for x in lines))
    return path


def error_of(capsys: pytest.CaptureFixture, argv: list) -> str:
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


# ------------------------------------------------------------------------------------------------
# pope: duplicate question ids


@pytest.mark.parametrize("answers_by", ["id", "list"])
def test_pope_duplicate_question_id_names_both_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture, answers_by: str
) -> None:
    # lines 1-2 questions 1-2, line 3 blank, line 4 question 3, line 5 question 2 again
    lines = [
        question(1, "dog"),
        question(2, "cat", "no"),
        "",
        question(3, "car"),
        question(2, "cup"),
    ]
    questions = write_lines(tmp_path / "q.jsonl", lines)
    records = [x for x in lines if x != ""]
    if answers_by == "id":
        answers = write_lines(
            tmp_path / "a.jsonl",
            [{"question_id": q["question_id"], "text": "Yes"} for q in records],
        )
    else:
        answers = tmp_path / "a.json"
        answers.write_text(json.dumps([{"question": q["text"], "answer": "Yes"} for q in records]))
    out = tmp_path / "o.json"
    err = error_of(capsys, ["pope", "--questions", questions, "--answers", answers, "--out", out])
    assert f"{questions}: duplicate question id 2 at lines 2 and 5" in err, err
    assert "no answer" not in err
    assert not out.exists()


def test_pope_ids_compare_as_strings(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    lines = [question(7, "dog"), {**question(8, "cat"), "question_id": "7"}]
    questions = write_lines(tmp_path / "q.jsonl", lines)
    answers = write_lines(tmp_path / "a.jsonl", [{"question_id": 7, "text": "Yes"}])
    err = error_of(
        capsys,
        ["pope", "--questions", questions, "--answers", answers, "--out", tmp_path / "o.json"],
    )
    assert "duplicate question id 7 at lines 1 and 2" in err, err


def test_pope_unique_ids_still_score(tmp_path: Path) -> None:
    lines = [question(1, "dog"), "", question(2, "cat", "no")]
    questions = write_lines(tmp_path / "q.jsonl", lines)
    answers = write_lines(
        tmp_path / "a.jsonl", [{"question_id": 2, "text": "No"}, {"question_id": 1, "text": "Yes"}]
    )
    out = tmp_path / "o.json"
    assert (
        main(["pope", "--questions", str(questions), "--answers", str(answers), "--out", str(out)])
        == 0
    )
    assert json.loads(out.read_text())["accuracy"] == 1.0


# ------------------------------------------------------------------------------------------------
# chair --synonyms: a file that is not UTF-8


def chair_inputs(tmp_path: Path) -> tuple[Path, Path]:
    captions = write_lines(tmp_path / "c.jsonl", [{"image_id": 1, "caption": "A dog on a couch."}])
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps({"1": ["dog"]}))
    return captions, gt


def test_chair_non_utf8_synonyms_name_file_line_and_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    captions, gt = chair_inputs(tmp_path)
    synonyms = tmp_path / "synonyms.txt"
    head = b"dog, puppy\ncat, kitty\n"
    synonyms.write_bytes(head + b"couch, caf\xe9 sofa\n")  # Latin-1 e-acute
    out = tmp_path / "o.json"
    err = error_of(
        capsys,
        ["chair", "--captions", captions, "--gt", gt, "--synonyms", synonyms, "--out", out],
    )
    offset = len(head) + len(b"couch, caf")
    assert f"{synonyms}:3: synonyms file is not valid UTF-8 (byte offset {offset}" in err, err
    assert not out.exists()


def test_chair_utf8_synonyms_still_load(tmp_path: Path) -> None:
    captions, gt = chair_inputs(tmp_path)
    synonyms = tmp_path / "synonyms.txt"
    synonyms.write_text("dog, puppy\ncouch, café sofa, sofa\n", encoding="utf-8")
    out = tmp_path / "o.json"
    argv = ["chair", "--captions", captions, "--gt", gt, "--synonyms", synonyms, "--out", out]
    assert main([str(a) for a in argv]) == 0
    assert json.loads(out.read_text())["captions"][0]["mentions"] == ["dog", "couch"]


# ------------------------------------------------------------------------------------------------
# --out: symlinks and non-regular files are refused


def pope_argv(tmp_path: Path, out: Path) -> list:
    questions = write_lines(tmp_path / "q.jsonl", [question(1, "dog")])
    answers = write_lines(tmp_path / "a.jsonl", [{"question_id": 1, "text": "Yes"}])
    return ["pope", "--questions", questions, "--answers", answers, "--out", out]


def test_out_symlink_is_refused_and_its_target_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    target_dir = tmp_path / "elsewhere"
    target_dir.mkdir()
    target = target_dir / "scores.json"
    target.write_text("old\n")
    link = tmp_path / "out.json"
    link.symlink_to(os.path.relpath(target, tmp_path))  # a relative link, resolved from its folder
    err = error_of(capsys, pope_argv(tmp_path, link))
    assert f"{link}: is a symlink (to {os.path.relpath(target, tmp_path)}); refusing" in err, err
    assert link.is_symlink() and os.readlink(link) == os.path.relpath(target, tmp_path)
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in target_dir.iterdir()) == ["scores.json"]  # no temp file left
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_dangling_symlink_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "new" / "scores.json")
    with pytest.raises(InputError, match="is a symlink"):
        write_json(link, {"a": 1})
    assert link.is_symlink() and not (tmp_path / "new").exists()


def test_symlink_chain_and_loop_are_refused(tmp_path: Path) -> None:
    target = tmp_path / "final.txt"
    (tmp_path / "middle").symlink_to(target)
    (tmp_path / "first").symlink_to(tmp_path / "middle")
    with pytest.raises(InputError, match="first: is a symlink"):
        atomic_write_text(tmp_path / "first", "through two links\n")
    assert not target.exists()
    (tmp_path / "loop_a").symlink_to(tmp_path / "loop_b")
    (tmp_path / "loop_b").symlink_to(tmp_path / "loop_a")
    with pytest.raises(InputError, match="loop_a: is a symlink"):
        atomic_write_text(tmp_path / "loop_a", "x")


def make_fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda p: p.mkdir() or p, "a directory"),
        (make_fifo, "a FIFO"),
    ],
    ids=["directory", "fifo"],
)
def test_out_that_is_not_a_regular_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture, make, kind: str
) -> None:
    out = make(tmp_path / "out.json")
    err = error_of(capsys, pope_argv(tmp_path, out))
    assert re.search(rf"{re.escape(str(out))}: exists and is {kind}, not a regular file", err), err
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())
    # and a symlink to it: refused as a symlink, the link and what it points to kept
    link = tmp_path / "link.json"
    link.symlink_to(out)
    err = error_of(capsys, pope_argv(tmp_path, link))
    assert f"{link}: is a symlink (to {out})" in err, err
    assert link.is_symlink() and os.readlink(link) == str(out)


def test_out_device_is_refused() -> None:
    """Checked on the writer's target resolution only: a regression must not be able to replace
    ``/dev/null`` (as root, renaming over it would)."""
    with pytest.raises(InputError, match=r"/dev/null: exists and is a device, not a regular file"):
        _write_target(Path(os.devnull))


def test_out_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(InputError, match=r"s\.sock: exists and is a socket"):
            write_json(path, {"a": 1})
        assert stat.S_ISSOCK(path.stat().st_mode)


# ------------------------------------------------------------------------------------------------
# --out naming one of the command's inputs: refused, the input kept


def no_temp_files(folder: Path) -> bool:
    return not any(p.name.endswith(".tmp") for p in folder.rglob("*"))


def same_file_cases(folder: Path) -> dict[str, tuple[list, str, Path]]:
    """argv (``OUT`` standing for the output), the input flag it collides with and that input,
    every input named relative to ``folder``."""
    captions, gt = (p.relative_to(folder) for p in chair_inputs(folder))
    write_lines(folder / "q.jsonl", [question(1, "dog")])
    write_lines(folder / "a.jsonl", [{"question_id": 1, "text": "Yes"}])
    (folder / "vectors.txt").write_text("3 2\nperson 1 0\ncar 0 1\ndog 1 1\n")
    write_lines(folder / "o.jsonl", [{"id": "c", "gt": ["person"], "objects": []}])
    (folder / "questions.txt").write_text("How many dogs are there?\n")
    (folder / "lexicon.txt").write_text("zorblax\n")
    chair = ["chair", "--captions", captions, "--gt", gt, "--out", "OUT"]
    pope = ["pope", "--questions", "q.jsonl", "--answers", "a.jsonl", "--out", "OUT"]
    caos = ["caos", "--objects", "o.jsonl", "--vectors", "vectors.txt", "--frequent", "person"]
    return {
        "chair-captions": (chair, "--captions", captions),
        "chair-gt": (chair, "--gt", gt),
        "pope-answers": (pope, "--answers", Path("a.jsonl")),
        "caos-vectors": ([*caos, "--k", "1", "--out", "OUT"], "--vectors", Path("vectors.txt")),
        "lexdiv": (
            ["lexdiv", "--questions", "questions.txt", "--out", "OUT"],
            "--questions",
            Path("questions.txt"),
        ),
        "objects-lexicon": (  # a str flag: "builtin" or a file
            ["objects", "--captions", captions, "--lexicon", "lexicon.txt", "--out", "OUT"],
            "--lexicon",
            Path("lexicon.txt"),
        ),
    }


@pytest.mark.parametrize(
    "case",
    ["chair-captions", "chair-gt", "pope-answers", "caos-vectors", "lexdiv", "objects-lexicon"],
)
@pytest.mark.parametrize("spelling", ["same", "dot-slash", "absolute"])
def test_out_that_is_an_input_is_refused_naming_both(
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    spelling: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    argv, flag, path = same_file_cases(tmp_path)[case]
    out = {"same": path, "dot-slash": Path(f"./{path}"), "absolute": tmp_path / path}[spelling]
    before = path.read_bytes()
    err = error_of(capsys, [out if a == "OUT" else a for a in argv])
    assert err == (
        f"halluscope {argv[0]}: error: --out {out} is the input {flag} {path}: refusing to "
        "overwrite an input; give --out another file\n"
    ), err
    assert path.read_bytes() == before
    assert no_temp_files(tmp_path)


def test_out_that_is_a_hard_link_to_an_input_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    captions, gt = chair_inputs(tmp_path)
    out = tmp_path / "result.json"
    os.link(captions, out)
    before = captions.read_bytes()
    err = error_of(capsys, ["chair", "--captions", captions, "--gt", gt, "--out", out])
    assert f"--out {out} is the input --captions {captions}: refusing to overwrite" in err, err
    assert captions.read_bytes() == before


def test_out_beside_the_inputs_is_still_written(tmp_path: Path) -> None:
    captions, gt = chair_inputs(tmp_path)
    out = tmp_path / "chair.json"
    out.write_text("an earlier result\n")  # an existing output that is no input: replaced
    assert main(["chair", "--captions", str(captions), "--gt", str(gt), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["overall"]["n_captions"] == 1


# ------------------------------------------------------------------------------------------------
# ground-truth names read as caption words; names outside the vocabulary refused

CAPTIONS_9 = (
    "A man and a boy wait.",
    "A man stands on the street.",
    "A man sits.",
    "A man runs.",
    "A man smiles.",
    "A man and a woman talk.",
    "A man holds a surfboard.",  # the one hallucination
    "The sky is blue.",
    "Green grass grows.",
)


def chair_of(tmp_path: Path, names: list[str], capsys: pytest.CaptureFixture) -> tuple[dict, str]:
    """(overall scores, stderr) of ``halluscope chair`` on :data:`CAPTIONS_9`, every image's GT
    being ``names``."""
    captions = write_lines(
        tmp_path / "c9.jsonl",
        [{"image_id": i, "caption": c} for i, c in enumerate(CAPTIONS_9, start=1)],
    )
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps({str(i): names for i in range(1, 10)}))
    out = tmp_path / "chair.json"
    assert main(["chair", "--captions", str(captions), "--gt", str(gt), "--out", str(out)]) == 0
    return json.loads(out.read_text())["overall"], capsys.readouterr().err


@pytest.mark.parametrize("names", [["Person"], ["people"], [" PERSON ", "person"]])
def test_chair_gt_names_are_normalised_as_caption_words(
    tmp_path: Path, capsys: pytest.CaptureFixture, names: list[str]
) -> None:
    """``Person`` read as written made every mention a hallucination (CHAIR_S 0.778, CHAIR_I
    1.000); read as a caption word it is ``person`` (CHAIR_S 1/9, CHAIR_I 1/10)."""
    expected, _ = chair_of(tmp_path, ["person"], capsys)
    assert (expected["CHAIRs"], expected["CHAIRi"]) == (pytest.approx(1 / 9), pytest.approx(0.1))
    overall, err = chair_of(tmp_path, names, capsys)
    assert overall == expected
    assert re.search(r"CHAIR_S 0\.111 \[[\d.]+, [\d.]+\], CHAIR_I 0\.100", err), err


def test_chair_gt_name_outside_the_vocabulary_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    captions, _ = chair_inputs(tmp_path)
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps({"imid_to_objects": {"1": ["dog", "spaceship"]}}))
    out = tmp_path / "o.json"
    err = error_of(capsys, ["chair", "--captions", captions, "--gt", gt, "--out", out])
    assert err.startswith(
        f"halluscope chair: error: {gt}: imid_to_objects key '1': 'spaceship' is not an MSCOCO "
        "object of the synonym table"
    ), err
    assert not out.exists()


def test_gt_class_names_are_kept_as_written(tmp_path: Path) -> None:
    """The pipeline reads GT files without a parser; with one, every class name of the table
    (the only names the pipeline's GT holds) maps to itself, in both normalisation variants."""
    path = tmp_path / "gt.json"
    path.write_text(json.dumps({"7": list(COCO_CLASSES), "8": ["Dining Tables", "TV", "buses"]}))
    assert load_gt(path)["7"] == sorted(COCO_CLASSES)
    assert load_gt(path)["8"] == ["Dining Tables", "TV", "buses"]  # no parser: as written
    for variant in ("pattern", "lemmatizer"):
        gt = load_gt(path, ObjectParser(None, variant))
        assert gt == {"7": sorted(COCO_CLASSES), "8": ["bus", "dining table", "tv"]}


# ------------------------------------------------------------------------------------------------
# lexdiv: JSON lines in a text questions file


def test_lexdiv_txt_with_json_lines_names_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    questions = tmp_path / "q.txt"
    questions.write_text('How many dogs are there?\n\n{"question": "What is on the table?"}\n')
    out = tmp_path / "lexdiv.json"
    err = error_of(capsys, ["lexdiv", "--questions", questions, "--out", out])
    assert err.startswith(
        f"halluscope lexdiv: error: {questions}:3: a JSON object in a .txt questions file"
    ), err
    assert "name the file .jsonl to read its 'question' field" in err
    assert not out.exists()


def test_lexdiv_txt_with_braces_in_a_question_is_read(tmp_path: Path) -> None:
    questions = tmp_path / "q.txt"
    questions.write_text("{What} is on the table?\n[1, 2] or 3?\n")
    out = tmp_path / "lexdiv.json"
    assert main(["lexdiv", "--questions", str(questions), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["overall"]["questions"] == 2


# ------------------------------------------------------------------------------------------------
# pope: empty answers


@pytest.mark.parametrize(("parser", "read_as_yes"), [("original", True), ("opera", True),
                                                     ("strict", False)])  # fmt: skip
def test_pope_empty_answers_are_counted_in_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture, parser: str, read_as_yes: bool
) -> None:
    lines = [question(i, obj, "yes" if i % 2 else "no") for i, obj in enumerate(OBJECTS, 1)]
    questions = write_lines(tmp_path / "q.jsonl", lines)
    texts = ["", "", " ", "No"]
    answers = write_lines(
        tmp_path / "a.jsonl",
        [{"question_id": i, "text": t} for i, t in enumerate(texts, start=1)],
    )
    out = tmp_path / "o.json"
    argv = ["pope", "--questions", questions, "--answers", answers, "--parser", parser]
    assert main([str(a) for a in [*argv, "--out", out]]) == 0
    err = capsys.readouterr().err
    warning = (
        f"halluscope pope: warning: 3 of 4 answers are empty: the {parser} parser reads them "
        'as "yes", as the reference evaluation does\n'
    )
    assert (warning in err) is read_as_yes, err
    scores = json.loads(out.read_text())
    if read_as_yes:  # the numbers stay the reference's
        assert (scores["yes_ratio"], scores["accuracy"]) == (0.75, 0.75)
    else:
        assert scores["unparsed"] == 3


# ------------------------------------------------------------------------------------------------
# caos: hallucinated objects without a vector


@pytest.mark.parametrize(
    ("objects", "warning"),
    [
        (
            [[("zorblax", False)]],
            "1 hallucinated object has no vector in {vectors} and no score (listed under "
            "'missing'): 'zorblax'; no caption has a scored one: every CAOS score is undefined "
            "(null)",
        ),
        (
            [[("dog", False), ("zorblax", False)], [("blorp", False), ("zorblax", False)]],
            "2 hallucinated objects have no vector in {vectors} and no score (listed under "
            "'missing'): 'zorblax', 'blorp'",
        ),
        (
            [[("dog", True), ("zorblax", True)]],
            "no caption has a hallucinated object: every CAOS score is undefined (null)",
        ),
    ],
    ids=["only-unscored", "some-unscored", "none-hallucinated"],
)
def test_caos_warning_says_why_a_hallucination_has_no_score(
    tmp_path: Path, capsys: pytest.CaptureFixture, objects: list, warning: str
) -> None:
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("4 3\nperson 1 0 0\ncar 0 1 0\nchair 0 0 1\ndog 1 1 0\n")
    records = [
        {
            "id": f"c{i}",
            "gt": ["person"],
            "objects": [{"name": n, "in_domain": n == "dog", "present": p} for n, p in caption],
        }
        for i, caption in enumerate(objects, start=1)
    ]
    path = write_lines(tmp_path / "objects.jsonl", records)
    out = tmp_path / "caos.json"
    argv = ["caos", "--objects", path, "--vectors", vectors, "--frequent", "person,car,chair"]
    assert main([str(a) for a in [*argv, "--k", "2", "--out", out]]) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if ": warning: " in line]
    assert warnings == [f"halluscope caos: warning: {warning.format(vectors=vectors)}"], err
    rows = json.loads(out.read_text())["captions"]
    without = {n for caption in objects for n, _ in caption if n != "dog"}
    assert {n for row in rows for n in row["missing"]} == without
