"""Hand-check commands: clear errors for duplicate POPE question ids and non-UTF-8 synonym files,
and ``--out`` refusing symlinks and paths that are not regular files (the shared atomic writer).
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
from halluscope.io import InputError, _write_target, atomic_write_text, write_json

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
