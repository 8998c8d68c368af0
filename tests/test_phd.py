"""PhD: loaders and prompts as upstream builds them, the yes/no parser, PhD Index by hand, CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from halluscope.benchmarks.phd.data import (
    CONTEXT_INSTRUCTION,
    UNKNOWN_TASK,
    build_prompts,
    canonical_mode,
    coco_image_path,
    load_phd,
    load_phd_ccs,
)
from halluscope.benchmarks.phd.metric import PARSER_NAME, parse_yes_no, phd_index, phd_scores
from halluscope.cli import main
from halluscope.io import InputError

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CCS = SHARED / "phd" / "data_ccs.json"
needs_shared = pytest.mark.skipif(
    not CCS.is_file(), reason=f"reference data {CCS} is absent (../shared/data)"
)

# a small main file in the upstream record format (README.upstream.md)
MAIN = [
    {
        "image_id": "139",
        "task": "object",
        "yes_question": "Is there a dog in the image?",
        "no_question": "Is there a cat in the image?",
        "hitem": "cat",
        "gt": "dog",
        "subject": "animal",
        "context": {"iac": "The park is busy today.", "icc": "A cat sleeps on the bench."},
    },
    {
        "image_id": "164",
        "task": "counting",
        "yes_question": "Are there two cups?",
        "no_question": "Are there three cups?",
        "hitem": "three",
        "gt": "two",
        "subject": "cup",
        "context": {"iac": "It is breakfast time.", "icc": "There are three cups."},
    },
    {
        "image_id": "7",
        "task": "attribute",
        "yes_question": "Is the banana blue?",
        "no_question": "Is the banana yellow?",
        "ccs_description": "A blue banana.",
    },
]


@pytest.fixture
def main_file(tmp_path: Path) -> Path:
    path = tmp_path / "data.json"
    path.write_text(json.dumps(MAIN))
    return path


def test_instruction_is_upstreams() -> None:
    assert CONTEXT_INSTRUCTION == (
        " In case there is an inconsistency between the context and the image content,"
        " you should follow the image. "
    )


def test_main_loader_and_the_four_modes(main_file: Path, tmp_path: Path) -> None:
    records = load_phd(main_file)
    assert [r.is_ccs for r in records] == [False, False, True]
    assert records[0].context["icc"] == "A cat sleeps on the bench." and records[0].hitem == "cat"
    base = build_prompts(records, "base")
    assert [(p.id, p.label, p.task, p.question) for p in base] == [
        ("base/0/yes", "yes", "object", "Is there a dog in the image?"),
        ("base/0/no", "no", "object", "Is there a cat in the image?"),
        ("base/1/yes", "yes", "counting", "Are there two cups?"),
        ("base/1/no", "no", "counting", "Are there three cups?"),
    ]
    assert base[0].image_path == "images/val2014/COCO_val2014_000000000139.jpg"
    iac = build_prompts(records, "iac")
    assert iac[0].question == (
        "The park is busy today. In case there is an inconsistency between the context and "
        "the image content, you should follow the image. Is there a dog in the image?"
    )
    assert [p.id for p in build_prompts(records, "sec")] == [p.id for p in iac]
    icc = build_prompts(records, "icc")
    assert (
        icc[3].question == "There are three cups." + CONTEXT_INSTRUCTION + "Are there three cups?"
    )
    ccs = build_prompts(records, "ccs")
    assert [(p.id, p.question, p.image_path, p.task) for p in ccs] == [
        ("ccs/2/yes", "Is the banana blue?", "images/CCS_images/7.png", "attribute"),
        ("ccs/2/no", "Is the banana yellow?", "images/CCS_images/7.png", "attribute"),
    ]
    # upstream picks train2014 when that file exists, else val2014
    train = tmp_path / "images/train2014/COCO_train2014_000000000164.jpg"
    train.parent.mkdir(parents=True)
    train.touch()
    assert coco_image_path("164", tmp_path) == "images/train2014/COCO_train2014_000000000164.jpg"
    assert build_prompts(records, "base", tmp_path)[2].image_path.startswith("images/train2014")


def test_loader_errors(tmp_path: Path) -> None:
    bad = tmp_path / "d.json"
    bad.write_text(json.dumps([{"image_id": "1", "task": "object", "yes_question": "?"}]))
    with pytest.raises(InputError, match=r"d\.json: record 0: 'no_question'"):
        load_phd(bad)
    bad.write_text(json.dumps({"a": 1}))
    with pytest.raises(InputError, match="JSON array"):
        load_phd(bad)
    no_context = [dict(MAIN[0], context=None)]
    bad.write_text(json.dumps(no_context))
    with pytest.raises(InputError, match=r"record 0: no context\['iac'\]"):
        build_prompts(load_phd(bad), "iac")
    assert canonical_mode("sec") == "iac"
    with pytest.raises(ValueError, match="unknown PhD mode"):
        canonical_mode("ica")


@needs_shared
def test_ccs_loader_on_released_file() -> None:
    records = load_phd_ccs(CCS)
    assert len(records) == 753
    assert all(r.is_ccs and r.task is None for r in records)
    assert records[0].image_id == "0" and records[0].image_path == "images/CCS_images/0.png"
    assert records[0].yes_question == "Is there a sausage in the banana peel?"
    assert records[69].image_id == "67"  # three images carry two records each
    assert len({r.image_id for r in records}) == 750
    prompts = build_prompts(records, "ccs")
    assert len(prompts) == 1506 and len({p.id for p in prompts}) == 1506
    assert (prompts[1].id, prompts[1].label, prompts[1].task) == ("ccs/0/no", "no", UNKNOWN_TASK)
    assert prompts[1].question == "Is there a banana in the banana peel?"
    assert prompts[1].image_path == "images/CCS_images/0.png"
    assert build_prompts(records, "base") == []


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Yes.", "yes"),
        ("yes", "yes"),
        ("No, there isn't.", "no"),
        ("**Yes**, the dog is on the left.", "yes"),
        ('"No"', "no"),
        ("Yes, there is no cat.", "yes"),  # the first word decides
        ("Answer: No.", "no"),
        ("There is no dog in the image.", "no"),
        ("In the image, yes, a dog.", "yes"),
        ("I cannot tell.", None),
        ("Nothing like that. Yes.", None),  # "nothing" is not "no"; only the first sentence
        ("I don't know\nno", None),
        ("The answer could be yes or no.", None),  # both words: ambiguous
        ("", None),
        ("...", None),
    ],
)
def test_parser(answer: str, expected: str | None) -> None:
    assert parse_yes_no(answer) == expected


def test_phd_index_by_hand() -> None:
    assert phd_index(0.8, 0.4) == pytest.approx(2 * 0.8 * 0.4 / 1.2)
    assert phd_index(1.0, 0.0) == 0.0  # always "yes"
    assert phd_index(0.0, 0.0) == 0.0
    assert phd_index(None, 0.5) is None
    # 4 yes-labelled: 3 said yes, 1 unparsed; 2 no-labelled: 1 said no, 1 said yes
    pairs = [("yes", "yes")] * 3 + [("yes", None), ("no", "no"), ("no", "yes")]
    scores = phd_scores(pairs)
    assert scores["recall_yes"] == 0.75 and scores["recall_no"] == 0.5
    assert scores["overall"] == pytest.approx(2 * 0.75 * 0.5 / 1.25)
    assert scores["yes_ratio"] == pytest.approx(4 / 6)
    assert (scores["n"], scores["n_yes"], scores["n_no"], scores["unparsed"]) == (6, 4, 2, 1)
    only_yes = phd_scores([("yes", "yes")])
    assert only_yes["recall_no"] is None and only_yes["overall"] is None


def write_lines(path: Path, records: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def answer(i: int, mode: str, task: str, label: str, text: str) -> dict:
    return {"id": f"{mode}/{i}/{label}", "mode": mode, "task": task, "label": label, "answer": text}


def test_cli_end_to_end(tmp_path: Path) -> None:
    lines = [
        # base/object: always yes -> R_yes 1, R_no 0 -> index 0
        answer(0, "base", "object", "yes", "Yes."),
        answer(0, "base", "object", "no", "Yes, it is."),
        # base/counting: both right -> index 1
        answer(1, "base", "counting", "yes", "yes"),
        answer(1, "base", "counting", "no", "No."),
        # sec (= iac)/object: yes right, no unparsed -> R_yes 1, R_no 0 -> 0
        answer(2, "sec", "object", "yes", "Yes"),
        answer(2, "sec", "object", "no", "Hard to say."),
        answer(3, "iac", "object", "yes", "No"),
        answer(3, "iac", "object", "no", "No"),
    ]
    responses = write_lines(tmp_path / "r.jsonl", lines)
    out = tmp_path / "o.json"
    assert main(["phd", "--responses", str(responses), "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    # overall: yes-labelled 4 (3 said yes), no-labelled 4 (2 said no)
    assert result["recall_yes"] == 0.75 and result["recall_no"] == 0.5
    assert result["overall"] == pytest.approx(0.6)
    assert result["yes_ratio"] == pytest.approx(4 / 8)
    assert result["unparsed"] == 1 and result["parser"] == PARSER_NAME
    assert set(result["by_mode"]) == {"base", "iac"}
    assert result["by_mode"]["base"]["recall_no"] == 0.5
    assert result["by_mode"]["base"]["overall"] == pytest.approx(2 / 3)
    assert result["by_mode"]["iac"]["overall"] == pytest.approx(2 * 0.5 * 0.5 / 1.0)
    assert result["by_mode_task"]["base"]["object"]["overall"] == 0.0
    assert result["by_mode_task"]["base"]["counting"]["overall"] == 1.0
    assert result["by_mode_task"]["iac"]["object"]["unparsed"] == 1
    assert set(result["by_mode_task"]["iac"]) == {"object"}
    assert result["by_task"]["counting"]["overall"] == 1.0
    assert result["by_task"]["object"]["recall_yes"] == pytest.approx(2 / 3)
    assert result["mean_over_modes"] == pytest.approx((2 / 3 + 0.5) / 2)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([answer(0, "base", "object", "maybe", "Yes")], r"r\.jsonl:1: label must be"),
        ([answer(0, "ica", "object", "yes", "Yes")], r"r\.jsonl:1: unknown PhD mode 'ica'"),
        (
            [answer(0, "base", "object", "yes", "Yes"), answer(0, "base", "object", "yes", "No")],
            r"r\.jsonl:2: id 'base/0/yes' already on line 1",
        ),
        ([{"id": 1, "mode": "base", "label": "yes"}], r"r\.jsonl:1: missing task, answer"),
        ([answer(0, "base", "object", "yes", None)], r"r\.jsonl:1: answer must be a string"),
        ([], "no answer line"),
    ],
)
def test_cli_errors_name_the_line(tmp_path: Path, capsys, lines: list, message: str) -> None:
    responses = write_lines(tmp_path / "r.jsonl", lines)
    assert main(["phd", "--responses", str(responses), "--out", str(tmp_path / "o.json")]) == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "o.json").exists()


def test_score_files_and_table_twin_carry_each_cells_interval(tmp_path: Path) -> None:
    """The pipeline's phd-score writes the interval of every number (the image resampled), and
    the table's CSV twin gives each cell's lo and hi around its value."""
    import csv
    import random

    from halluscope.benchmarks.phd.report import write_phd_table
    from halluscope.benchmarks.phd.settings import PhdScoreSettings, PhdTableSettings
    from halluscope.benchmarks.phd.stages import score
    from halluscope.io import read_json

    rng = random.Random(0)
    tasks = ("object_recognition", "counting")
    reports = []
    for model in ("m1", "m2"):
        rows = []
        for image in range(30):
            for mode in ("base", "icc"):
                task = tasks[image % 2]
                for label in ("yes", "no"):
                    said = label if rng.random() < 0.7 else ("no" if label == "yes" else "yes")
                    rows.append({"id": f"{mode}/{image}/{label}", "image_id": f"img{image}",
                                 "mode": mode, "task": task, "label": label,
                                 "answer": said.capitalize() + ".", "model": model})  # fmt: skip
        answers = tmp_path / f"{model}.answers.jsonl"
        answers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        out = tmp_path / model / "scores.json"
        out.parent.mkdir()
        config = {"intervals": {"level": 0.95, "resamples": 400, "seed": 0}}
        score(PhdScoreSettings.from_config(config), answers, out)
        report = read_json(out)
        overall = report["intervals"]["overall"]
        assert overall["unit"] == "image" and overall["n_units"] == 30
        assert overall["lo"] <= report["overall"] <= overall["hi"]
        reports.append(out)
    table = tmp_path / "phd_table.tex"
    settings = PhdTableSettings(models=["m1", "m2"], decimals=2, run="demo", modes=["base", "icc"])
    write_phd_table(reports, settings=settings, out=table)
    rows = list(csv.DictReader(table.with_suffix(".csv").open(encoding="utf-8")))
    filled = [r for r in rows if r["value"]]
    assert len(filled) == 2 * 2 * 3  # models x modes x (2 tasks + All)
    for row in filled:
        assert float(row["lo"]) <= float(row["value"]) <= float(row["hi"]), row
