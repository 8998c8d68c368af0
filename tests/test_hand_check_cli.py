"""The hand-check commands as a user meets them: a one-line summary of the result on stderr,
no silent wrong or empty output for bad or degenerate input (exit 2 and nothing written, or a
one-line warning), ``--out`` never written through a symlink, folders and empty files named as
such, and ``halluscope stage --help`` with one line per stage.

Every case runs the ``halluscope`` CLI (its ``main`` function) on small hand-written inputs.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from halluscope.cli import main
from halluscope.stage_command import stage_names

# ------------------------------------------------------------------------------------------------
# one valid input set per command


def write_lines(path: Path, *lines: Any) -> Path:
    """JSONL: a str is written as is (a blank or hand-broken line), anything else as JSON."""
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return path


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def caos_argv(d: Path, out: Path) -> list:
    objects = write_lines(
        d / "objects.jsonl",
        {
            "id": "c1",
            "gt": ["cat"],
            "objects": [
                {"name": "dog", "in_domain": True, "present": False},
                {"name": "car", "in_domain": True, "present": False},
            ],
        },
    )
    vectors = d / "vectors.txt"
    vectors.write_text("4 2\ncat 1 0\ndog 3 4\ncar 0 2\nperson 1 1\n", encoding="utf-8")
    return ["caos", "--objects", objects, "--vectors", vectors, "--frequent", "car,person",
            "--k", "2", "--out", out]  # fmt: skip


def chair_argv(d: Path, out: Path) -> list:
    captions = write_lines(
        d / "captions.jsonl",
        {"image_id": 1, "caption": "A dog on a couch."},
        {"image_id": 2, "caption": "A cat next to a car."},
    )
    gt = write_json(d / "gt.json", {"1": ["dog", "couch"], "2": ["cat"]})
    return ["chair", "--captions", captions, "--gt", gt, "--out", out]


def question(qid: int, obj: str, label: str) -> dict:
    return {"question_id": qid, "image": "a.jpg", "text": f"Is there a {obj} in the image?",
            "label": label}  # fmt: skip


def pope_argv(d: Path, out: Path) -> list:
    questions = write_lines(d / "q.jsonl", question(1, "dog", "yes"), question(2, "cat", "no"))
    answers = write_lines(
        d / "a.jsonl", {"question_id": 1, "text": "Yes."}, {"question_id": 2, "text": "Yes."}
    )
    return ["pope", "--questions", questions, "--answers", answers, "--out", out]


POPE_GT = {"1": ["dog", "cat", "car"], "2": ["person", "dog", "chair"]}


def pope_build_argv(d: Path, out: Path) -> list:
    gt = write_json(d / "gt.json", POPE_GT)
    return ["pope-build", "--gt", gt, "--setting", "popular", "--n", "2", "--out", out]


def trihe_argv(d: Path, out: Path) -> list:
    judgments = write_lines(
        d / "j.jsonl",
        {"image_id": "A", "question_id": 1, "judgments": ["yes", "no"]},
        {"image_id": "B", "question_id": 2, "judgments": ["yes"]},
    )
    return ["trihe", "--judgments", judgments, "--out", out]


def phd_argv(d: Path, out: Path) -> list:
    responses = write_lines(
        d / "r.jsonl",
        {"id": 1, "mode": "base", "task": "object", "label": "yes", "answer": "Yes"},
        {"id": 2, "mode": "base", "task": "object", "label": "no", "answer": "Yes"},
    )
    return ["phd", "--responses", responses, "--out", out]


def nope_argv(d: Path, out: Path) -> list:
    answers = write_lines(
        d / "answers.jsonl",
        {"question_id": "n1", "is_negp": True, "reference": "nothing", "answer": "Nothing."},
        {"question_id": "o1", "is_negp": False, "reference": "2", "answer": "Two."},
    )
    return ["nope", "--answers", answers, "--out", out, "--no-meteor"]


def lexdiv_argv(d: Path, out: Path) -> list:
    questions = write_lines(
        d / "questions.jsonl",
        {"question": "What is the color of the cup?"},
        {"question": "Where is the spoon located?"},
    )
    return ["lexdiv", "--questions", questions, "--out", out, "--window", "4",
            "--sample-size", "4"]  # fmt: skip


def coco_gt_argv(d: Path, out: Path) -> list:
    instances = write_json(
        d / "instances.json",
        {
            "images": [{"id": 1}, {"id": 2}],
            "categories": [{"id": 1, "name": "person"}, {"id": 18, "name": "dog"}],
            "annotations": [{"id": 10, "image_id": 1, "category_id": 18}],
        },
    )
    captions = write_json(
        d / "captions.json",
        {"annotations": [{"id": 1, "image_id": 2, "caption": "A man on a bench."}]},
    )
    return ["coco-gt", "--instances", instances, "--captions", captions, "--variant", "pattern",
            "--out", out]  # fmt: skip


#: the interval a summary line gives after its first headline number: `` [lo, hi]``
INTERVAL = r" \[\d+\.\d+, \d+\.\d+\]"

#: command -> (argv builder, the summary line it prints on success, as a regex)
COMMANDS: dict[str, tuple[Callable[[Path, Path], list], str]] = {
    "caos": (
        caos_argv,
        r"1 captions \(1 with a hallucination\), CAOS_T \d\.\d{3}, CAOS_X \d\.\d{3}, "
        r"CAOS_K \d\.\d{3}, CAOS_avg \d\.\d{3}",
    ),
    "chair": (chair_argv, r"2 captions, CHAIR_S 0\.500 \[0\.095, 0\.905\], CHAIR_I 0\.250"),
    "pope": (
        pope_argv,
        rf"2 answers \(0 unparsed\), accuracy 0\.500{INTERVAL}, F1 0\.667, yes ratio 1\.000",
    ),
    "pope-build": (pope_build_argv, r"8 popular questions, 2 yes \+ 2 no per image, 2 image\(s\)"),
    "trihe": (
        trihe_argv,
        rf"2 questions, 3 triplets, Hallu_Q \d+\.\d%{INTERVAL}, Hallu_I \d+\.\d%",
    ),
    "phd": (
        phd_argv,
        rf"2 answers \(0 unparsed\), PhD Index 0\.000{INTERVAL}, yes recall 1\.000, no recall "
        r"0\.000",
    ),
    "nope": (nope_argv, rf"2 answers \(1 NegP\), accuracy 1\.000{INTERVAL}, NegP accuracy 1\.000"),
    "lexdiv": (
        lexdiv_argv,
        r"2 questions, 12 tokens, MATTR \d\.\d{3}, MTLD \d+\.\d, HD-D \d\.\d{3}",
    ),
    "coco-gt": (coco_gt_argv, r"2 images, 3 objects \(1\.50 per image\), variant pattern"),
}


def run(capsys: pytest.CaptureFixture, argv: list) -> tuple[int, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def error_of(capsys: pytest.CaptureFixture, argv: list, command: str) -> str:
    """The one error line of a failed run: exit status 2, ``halluscope COMMAND: error: ...``."""
    code, err = run(capsys, argv)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"halluscope {command}: error: "), lines
    return lines[0]


# ------------------------------------------------------------------------------------------------
# a one-line summary on success


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_success_prints_one_summary_line(
    tmp_path: Path, capsys: pytest.CaptureFixture, command: str
) -> None:
    build, summary = COMMANDS[command]
    out = tmp_path / "out.json"
    code, err = run(capsys, build(tmp_path, out))
    assert code == 0, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    assert re.fullmatch(rf"halluscope {command}: {summary} -> {re.escape(str(out))}", lines[0]), (
        lines[0]
    )
    assert out.is_file()


def test_fetch_prints_a_summary_after_the_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """A trust-on-first-use file (nothing pins its bytes) in a mirror, with an empty lock file:
    the path on stdout, the note on the recorded checksum and the summary on stderr."""
    mirror = tmp_path / "mirror"
    (mirror / "coco").mkdir(parents=True)
    (mirror / "coco/annotations_trainval2014.zip").write_bytes(b"some bytes")
    lock = write_json(tmp_path / "lock.json", {"files": {}})
    argv = ["fetch", "--mirror", mirror, "--no-download", "--quiet", "--lock", lock,
            "coco/annotations_trainval2014.zip"]  # fmt: skip
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [str(mirror / "coco/annotations_trainval2014.zip")]
    err = captured.err.strip().splitlines()
    assert err[-1] == (
        "halluscope fetch: 1 file(s) verified against their checksums (paths on stdout)"
    ), err
    assert "coco/annotations_trainval2014.zip" in json.loads(lock.read_text())["files"]


def degenerate(command: str, d: Path) -> None:
    """Rewrite the valid input of ``command`` (built in ``d``) into a legal but degenerate one."""
    if command == "caos":
        objects = json.loads((d / "objects.jsonl").read_text())
        for obj in objects["objects"]:
            obj["present"] = True
        write_lines(d / "objects.jsonl", objects)
    elif command == "chair":
        write_lines(d / "captions.jsonl", {"image_id": 1, "caption": "Nothing to see here."})
    elif command == "pope":
        write_lines(d / "q.jsonl", question(1, "dog", "yes"), question(2, "cat", "yes"))
    elif command == "phd":
        write_lines(
            d / "r.jsonl",
            {"id": 1, "mode": "base", "task": "object", "label": "yes", "answer": "Yes"},
        )
    elif command == "trihe":
        write_lines(d / "j.jsonl", {"image_id": "A", "question_id": 1, "judgments": []})
    elif command == "trihe-null":
        write_lines(d / "j.jsonl", {"image_id": "A", "question_id": 1, "judgments": [None]})


@pytest.mark.parametrize(
    ("command", "warning"),
    [
        ("caos", "no caption has a hallucinated object: every CAOS score is undefined (null)"),
        ("chair", "no caption mentions an MSCOCO object: CHAIR_I is 0 by convention"),
        (
            "pope",
            "every question of {d}/q.jsonl has label 'yes': precision, recall and F1 "
            "describe one class only",
        ),  # fmt: skip
        ("phd", "no answer has label 'no': the PhD Index is undefined (null)"),
        ("trihe", "no question has a judged triplet: Hallu_Q and Hallu_I are undefined (null)"),
        (
            "trihe-null",
            "every judgement is null (no judge reply parsed): counted as not hallucinated",
        ),
    ],
)
def test_degenerate_result_gets_a_one_line_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture, command: str, warning: str
) -> None:
    out = tmp_path / "out.json"
    argv = COMMANDS[command.removesuffix("-null")][0](tmp_path, out)
    degenerate(command, tmp_path)
    command = command.removesuffix("-null")
    code, err = run(capsys, argv)
    assert code == 0, err
    lines = err.strip().splitlines()
    assert len(lines) == 2, lines
    assert lines[0] == f"halluscope {command}: warning: {warning.format(d=tmp_path)}"
    assert lines[1].startswith(f"halluscope {command}: ") and lines[1].endswith(f" -> {out}")
    json.loads(out.read_text(), parse_constant=not_json)


def not_json(token: str) -> None:
    raise AssertionError(f"not JSON: {token}")


# ------------------------------------------------------------------------------------------------
# --out is never written through a symlink, for every command


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_out_symlink_is_refused_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture, command: str
) -> None:
    target = tmp_path / "elsewhere" / "precious.json"
    target.parent.mkdir()
    target.write_text("keep me\n")
    link = tmp_path / "out.json"
    link.symlink_to(target)
    line = error_of(capsys, COMMANDS[command][0](tmp_path, link), command)
    assert f"{link}: is a symlink (to {target}); refusing to write the output through it" in line
    assert target.read_text() == "keep me\n" and os.readlink(link) == str(target)
    assert sorted(p.name for p in target.parent.iterdir()) == ["precious.json"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_dangling_symlink_out_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "new" / "scores.json")
    line = error_of(capsys, pope_argv(tmp_path, link), "pope")
    assert f"{link}: is a symlink" in line
    assert not (tmp_path / "new").exists()


# ------------------------------------------------------------------------------------------------
# caos: a vector row of the wrong length


@pytest.mark.parametrize(
    ("content", "message"),
    [
        # one number in a 2-d file: gensim would broadcast it over the whole vector
        (
            "4 2\ncat 1 0\ndog 0.5\ncar 0 2\nperson 1 1\n",
            "{vectors}:3: the vector of 'dog' has 1 value(s); expected 2 (the header's dimension)",
        ),
        (
            "4 2\ncat 1 0\ndog 3 4\ncar 0 2 7\nperson 1 1\n",
            "{vectors}:4: the vector of 'car' has 3 value(s); expected 2 (the header's dimension)",
        ),
        (
            "3 2\ncat 1 0\ndog 3 4\ncar 0 2\nperson 1 1\n",
            "{vectors}: the header announces 3 vectors, the file has 4 rows",
        ),
    ],
    ids=["too-short", "too-long", "count"],
)
def test_caos_vector_file_of_wrong_shape_names_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture, content: str, message: str
) -> None:
    out = tmp_path / "out.json"
    argv = caos_argv(tmp_path, out)
    vectors = tmp_path / "vectors.txt"
    vectors.write_text(content, encoding="utf-8")
    error = error_of(capsys, argv, "caos")
    assert f"--vectors: {message.format(vectors=vectors)}" in error, error
    assert not out.exists()


# ------------------------------------------------------------------------------------------------
# pope-build: no silent empty question file, true line numbers


@pytest.mark.parametrize(
    ("extra", "gt", "message"),
    [
        (["--n", "5"], POPE_GT, "--n 5: no image of {gt} has 5 distinct objects (the most is 3)"),
        (["--n", "0"], POPE_GT, "--n: expected a positive integer, got 0"),
        (["--images", "0"], POPE_GT, "--images: expected a positive integer, got 0"),
        (["--images", "-2"], POPE_GT, "--images: expected a positive integer, got -2"),
        ([], "", "--gt: {gt}: no image (the file is empty); expected a JSON {{image: [objects]}}"),
        ([], {"imid_to_objects": {}}, "--gt: {gt}: no image; expected"),
        ([], [], "--gt: {gt}: no image; expected"),
    ],
    ids=[
        "n-too-large",
        "n-zero",
        "images-zero",
        "images-negative",
        "empty-file",
        "empty-map",
        "empty-list",
    ],
)
def test_pope_build_refuses_an_empty_question_file(
    tmp_path: Path, capsys: pytest.CaptureFixture, extra: list, gt: Any, message: str
) -> None:
    gt_path = tmp_path / "gt.json"
    gt_path.write_text(gt if isinstance(gt, str) else json.dumps(gt))
    out = tmp_path / "q.jsonl"
    argv = ["pope-build", "--gt", gt_path, "--setting", "random", *extra, "--out", out]
    error = error_of(capsys, argv, "pope-build")
    assert message.format(gt=gt_path) in error, error
    assert not out.exists()


def test_pope_build_warns_when_images_get_no_question(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "q.jsonl"
    argv = pope_build_argv(tmp_path, out)
    gt = write_json(tmp_path / "gt.json", {**POPE_GT, "3": ["cup"]})
    code, err = run(capsys, argv)
    assert code == 0
    assert err.splitlines()[0] == (
        f"halluscope pope-build: warning: 1 of 3 images of {gt} have fewer than --n 2 distinct "
        "objects and get no question"
    )
    assert len(out.read_text().splitlines()) == 8


ITEM = '{"image_id": %d, "gt_objects": ["dog", "cat"]}'


@pytest.mark.parametrize(
    ("lines", "bad"),
    [
        # a trailing comma: a decoder reading on across lines would blame line 4
        ([ITEM % 1, '{"image_id": 2, "gt_objects": ["dog", "cat",', ITEM % 3, ITEM % 4], 2),
        # a trailing comma inside the object: the decoder would blame line 7
        (
            [*(ITEM % i for i in range(1, 6)), '{"image_id": 6, "gt_objects": ["dog"],', ITEM % 7],
            6,
        ),  # fmt: skip
        ([ITEM % 1, "", '{"image_id": 3 "gt_objects": []}'], 3),
    ],
    ids=["line-2", "line-6", "after-blank"],
)
def test_pope_build_names_the_malformed_line(
    tmp_path: Path, capsys: pytest.CaptureFixture, lines: list, bad: int
) -> None:
    gt = write_lines(tmp_path / "items.jsonl", *lines)
    out = tmp_path / "q.jsonl"
    argv = ["pope-build", "--gt", gt, "--setting", "random", "--n", "1", "--out", out]
    error = error_of(capsys, argv, "pope-build")
    assert f"{gt}:{bad}: malformed JSON" in error, error
    assert not out.exists()


def test_pope_build_names_the_line_of_a_record_without_gt_objects(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    gt = write_lines(tmp_path / "items.jsonl", json.loads(ITEM % 1), "", {"image_id": 2})
    argv = ["pope-build", "--gt", gt, "--setting", "random", "--out", tmp_path / "q.jsonl"]
    error = error_of(capsys, argv, "pope-build")
    assert f"{gt}: line 3: expected {{'image_id', 'gt_objects'}}" in error, error


def test_pope_build_still_reads_a_json_list_and_concatenated_documents(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    items = [{"image_id": 1, "gt_objects": ["dog", "cat"]}, {"image_id": 2, "gt_objects": ["car"]}]
    listed = write_json(tmp_path / "list.json", items)
    pretty = tmp_path / "pretty.json"
    pretty.write_text("".join(json.dumps(i, indent=2) + "\n" for i in items))
    outs = []
    for gt in (listed, pretty):
        out = tmp_path / f"{gt.stem}.jsonl"
        code, err = run(capsys, ["pope-build", "--gt", gt, "--setting", "random", "--n", "1",
                                 "--out", out])  # fmt: skip
        assert code == 0, err
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and len(outs[0].splitlines()) == 4


# ------------------------------------------------------------------------------------------------
# lexdiv: settings that define no measure


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--window", "0", "--window: expected a positive number of tokens, got 0"),
        ("--window", "-5", "--window: expected a positive number of tokens, got -5"),
        ("--sample-size", "0", "--sample-size: expected a positive number of tokens, got 0"),
        ("--threshold", "nan", "--threshold: expected a TTR between 0 and 1 (exclusive), got nan"),
        ("--threshold", "1", "--threshold: expected a TTR between 0 and 1 (exclusive), got 1.0"),
        ("--threshold", "inf", "--threshold: expected a TTR between 0 and 1 (exclusive), got inf"),
    ],
)
def test_lexdiv_rejects_settings_that_define_no_measure(
    tmp_path: Path, capsys: pytest.CaptureFixture, flag: str, value: str, message: str
) -> None:
    out = tmp_path / "out.json"
    argv = [*lexdiv_argv(tmp_path, out), flag, value]
    assert message in error_of(capsys, argv, "lexdiv")
    assert not out.exists()


def test_lexdiv_undefined_measure_is_a_warning_and_the_json_is_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Two short questions have fewer tokens than the default window: MATTR is null, with one
    warning line, and the file parses as strict JSON (no NaN)."""
    out = tmp_path / "out.json"
    argv = lexdiv_argv(tmp_path, out)[:5]  # default --window 50 and --sample-size 42
    code, err = run(capsys, argv)
    assert code == 0
    lines = err.strip().splitlines()
    assert lines[0] == (
        "halluscope lexdiv: warning: mattr is undefined (null in the output): MATTR needs at "
        "least window=50 tokens, the text has 12"
    ), lines
    assert lines[1].startswith("halluscope lexdiv: warning: hdd is undefined"), lines
    assert lines[2].startswith("halluscope lexdiv: 2 questions, 12 tokens, MATTR n/a"), lines

    document = json.loads(out.read_text(), parse_constant=not_json)
    assert document["overall"]["mattr"] is None
    assert not math.isnan(document["overall"]["params"]["mtld_threshold"])


# ------------------------------------------------------------------------------------------------
# fetch --lock: a malformed or missing lock file


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "--lock: {lock}: file not found; expected an existing checksum lock file"),
        ("{not json", "--lock: {lock}: checksum lock file is not valid JSON"),
        ('{"files": []}', "--lock: {lock}: expected {{'files': {{path: {{'size', 'md5', "),
        (
            '{"files": {"coco/x.zip": {"size": 3}}}',
            "--lock: {lock}: entry 'coco/x.zip' needs 'size', 'md5' and 'sha256'",
        ),
        ("", "--lock: {lock}: checksum lock file is not valid JSON"),
    ],
    ids=["missing", "malformed", "files-not-object", "entry-incomplete", "empty"],
)
def test_fetch_lock_malformed_or_missing_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture, content: str | None, message: str
) -> None:
    lock = tmp_path / "lock.json"
    if content is not None:
        lock.write_text(content)
    argv = ["fetch", "--no-mirror", "--no-download", "--cache", tmp_path / "cache",
            "--lock", lock, "chair/synonyms.txt"]  # fmt: skip
    code, err = run(capsys, argv)
    assert code == 2
    assert err.startswith(f"halluscope fetch: error: {message.format(lock=lock)}"), err
    if content is None:
        assert not lock.exists()
    else:
        assert lock.read_text() == content


def test_fetch_lock_directory_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    argv = ["fetch", "--no-mirror", "--no-download", "--lock", tmp_path, "chair/synonyms.txt"]
    line = error_of(capsys, argv, "fetch")
    assert f"--lock: {tmp_path}: is a directory; expected a checksum lock file" in line


# ------------------------------------------------------------------------------------------------
# empty files and folders are named as such


@pytest.mark.parametrize(
    ("command", "flag", "extra", "message"),
    [
        ("pope", "--questions", [], "--questions: {path}: no question record (the file is empty)"),
        ("pope", "--answers", [], "--answers: {path}: no answer record (the file is empty)"),
        ("trihe", "--judgments", [], "--judgments: {path}: no judgement line (the file is empty)"),
        (
            "trihe",
            "--judgments",
            ["--judge", "slots"],
            "--judgments: {path}: no judgement line (the file is empty)",
        ),  # fmt: skip
        ("chair", "--captions", [], "--captions: {path}: no caption record (the file is empty)"),
        ("phd", "--responses", [], "--responses: {path}: no answer line (the file is empty)"),
        ("nope", "--answers", [], "--answers: {path}: no answer record (the file is empty)"),
    ],
)
def test_empty_input_file_is_named_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture, command: str, flag: str, extra: list,
    message: str,
) -> None:  # fmt: skip
    out = tmp_path / "out.json"
    argv = COMMANDS[command][0](tmp_path, out) + extra
    path = Path(argv[argv.index(flag) + 1])
    path.write_text("")
    line = error_of(capsys, argv, command)
    assert message.format(path=path) in line, line
    # not the first check an empty input happens to fail
    assert "question_id 1 is not in" not in line and "'judges' key" not in line
    assert "chair_scores" not in line
    assert not out.exists()


def test_blank_lines_only_are_named_as_such(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out.json"
    argv = chair_argv(tmp_path, out)
    captions = tmp_path / "captions.jsonl"
    captions.write_text("\n\n  \n")
    line = error_of(capsys, argv, "chair")
    assert f"--captions: {captions}: no caption record (only blank lines)" in line


INPUT_FLAGS = [
    ("caos", "--objects"),
    ("caos", "--vectors"),
    ("chair", "--captions"),
    ("chair", "--gt"),
    ("pope", "--questions"),
    ("pope", "--answers"),
    ("pope-build", "--gt"),
    ("trihe", "--judgments"),
    ("phd", "--responses"),
    ("nope", "--answers"),
    ("lexdiv", "--questions"),
    ("coco-gt", "--instances"),
    ("coco-gt", "--captions"),
]


@pytest.mark.parametrize(("command", "flag"), INPUT_FLAGS)
def test_directory_as_input_names_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture, command: str, flag: str
) -> None:
    out = tmp_path / "out.json"
    argv = COMMANDS[command][0](tmp_path, out)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    argv[argv.index(flag) + 1] = folder
    line = error_of(capsys, argv, command)
    assert line.endswith(f"error: {flag}: {folder}: is a directory; expected a file"), line
    assert "Errno" not in line
    assert not out.exists()


def test_directory_given_to_a_stage_names_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """A stage reads its inputs deep inside; the raw IsADirectoryError still gets its flag."""
    folder = tmp_path / "a-folder"
    folder.mkdir()
    argv = ["stage", "pope-score", "--questions", folder, "--answers", folder, "--settings",
            '{"parser":"original","level":0.95,"resamples":2000,"seed":0}', "--out",
            tmp_path / "o.json"]  # fmt: skip
    line = error_of(capsys, argv, "stage pope-score")
    assert re.search(rf"--(questions|answers): {re.escape(str(folder))}: is a directory", line)
    assert "Errno" not in line


# ------------------------------------------------------------------------------------------------
# halluscope stage --help


def test_stage_help_gives_one_line_per_stage(capsys: pytest.CaptureFixture) -> None:
    assert main(["stage", "--help"]) == 0
    text = capsys.readouterr().out
    listed = text.split("stages:\n", 1)[1].splitlines()
    names = stage_names()
    assert [line.split()[0] for line in listed] == names
    for line in listed:
        name, description = line.split(None, 1)
        assert len(description.split()) >= 3, line  # a description, not a bare name
        assert len(line) <= 120, line


# ------------------------------------------------------------------------------------------------
# intervals beside every headline number (docs/hand-check.md, docs/statistics.md)


def interval_pairs(doc: Any, tree: Any, path: str = "") -> list[tuple[str, Any, dict]]:
    """(path, the document's value, its interval) for every leaf of the ``intervals`` tree."""
    if set(tree) >= {"lo", "hi", "level", "method"}:
        return [(path, doc, tree)]
    return [p for k, sub in tree.items() for p in interval_pairs(doc[k], sub, f"{path}/{k}")]


#: command -> the paths of the intervals its JSON must give (at least)
INTERVAL_PATHS = {
    "chair": {"/overall/CHAIRs", "/overall/CHAIRi", "/overall/recall"},
    "pope": {"/accuracy", "/precision", "/recall", "/f1", "/yes_ratio"},
    "trihe": {"/hallu_q", "/hallu_i"},
    "phd": {
        "/overall",
        "/recall_yes",
        "/recall_no",
        "/by_mode/base/overall",
        "/by_task/object/overall",
        "/by_mode_task/base/object/overall",
    },  # fmt: skip
    "nope": {"/overall/accuracy", "/negp/negp_accuracy", "/non_negp/accuracy"},
}


@pytest.mark.parametrize("command", sorted(INTERVAL_PATHS))
def test_every_headline_number_has_an_interval_that_contains_it(
    tmp_path: Path, capsys: pytest.CaptureFixture, command: str
) -> None:
    """Each interval holds the value beside it (up to the 6 decimals it is written with), the
    same input gives the same bytes, and --no-intervals gives the document without them."""
    build = COMMANDS[command][0]
    outs = [tmp_path / f"{name}.json" for name in ("a", "b", "plain")]
    for out, extra in zip(outs, ([], [], ["--no-intervals"]), strict=True):
        code, err = run(capsys, [*build(tmp_path, out), *extra])
        assert code == 0, err
    assert outs[0].read_bytes() == outs[1].read_bytes()
    doc, plain = json.loads(outs[0].read_text()), json.loads(outs[2].read_text())
    # POPE's per-image counts serve the CAOS summary's interval and go with the intervals
    left_out = ("intervals", "interval_settings", "by_image")
    assert plain == {k: v for k, v in doc.items() if k not in left_out}
    assert doc["interval_settings"]["level"] == 0.95 and doc["interval_settings"]["seed"] == 0
    pairs = interval_pairs(doc, doc["intervals"])
    assert INTERVAL_PATHS[command] <= {p for p, _, _ in pairs}
    for path, value, interval in pairs:
        assert interval["level"] == 0.95 and interval["n_units"] >= 1, path
        if value is None:
            assert interval["lo"] is None and interval["hi"] is None, path
            continue
        assert interval["lo"] - 1e-6 <= value <= interval["hi"] + 1e-6, (path, value, interval)
    # another seed and level: the same keys; a lower level never widens an interval
    other = tmp_path / "other.json"
    assert run(capsys, [*build(tmp_path, other), "--seed", "7", "--level", "0.5"])[0] == 0
    o = json.loads(other.read_text())
    narrow = {p: i for p, _, i in interval_pairs(o, o["intervals"])}
    for path, _, interval in pairs:
        if interval["lo"] is not None and interval["method"].startswith("wilson"):
            assert interval["lo"] <= narrow[path]["lo"] <= narrow[path]["hi"] <= interval["hi"]


def test_pope_intervals_resample_the_image_with_its_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Six questions on each of 10 images: accuracy's interval is Wilson's at the effective n
    (n_units 10 images, not 60 questions), wider than the one that takes questions as
    independent; F1 and its two ratios come from the cluster bootstrap."""
    from halluscope.metrics.intervals import wilson

    questions, answers = [], []
    for image in range(10):
        for k in range(6):
            qid = 6 * image + k
            label = "yes" if k % 2 else "no"
            questions.append({"question_id": qid, "image": f"{image}.jpg", "label": label,
                              "text": f"Is there a thing{k} in the image?"})  # fmt: skip
            said = "Yes" if (image < 4 or k % 2) else "No"  # images 0-3 say yes to everything
            answers.append({"question_id": qid, "text": said})
    out = tmp_path / "p.json"
    argv = ["pope", "--questions", write_lines(tmp_path / "q.jsonl", *questions), "--answers",
            write_lines(tmp_path / "a.jsonl", *answers), "--out", out]  # fmt: skip
    assert run(capsys, argv)[0] == 0
    doc = json.loads(out.read_text())
    acc = doc["intervals"]["accuracy"]
    assert acc["method"] == "wilson (effective n)" and acc["n_units"] == 10
    lo, hi = wilson(round(doc["accuracy"] * 60), 60)
    assert acc["lo"] < lo and acc["hi"] >= hi
    assert {doc["intervals"][k]["method"] for k in ("precision", "recall", "f1")} == {"bca"}
