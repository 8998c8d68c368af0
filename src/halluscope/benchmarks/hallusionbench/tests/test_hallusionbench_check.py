"""``halluscope hallusionbench``: the hand-check command, and its refusals of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from halluscope.benchmarks.hallusionbench.questions import load_answers, load_questions
from halluscope.cli import main
from halluscope.data.fetch import default_mirror
from halluscope.io import InputError


def question(category: str, set_id: str, figure: str, qid: str, visual: str, gt: str) -> dict:
    return {"category": category, "subcategory": "chart", "set_id": set_id, "figure_id": figure,
            "question_id": qid, "visual_input": visual, "question": f"Q{set_id}{figure}{qid}?",
            "gt_answer": gt, "gt_answer_details": "d", "filename": None}  # fmt: skip


QUESTIONS = [
    question("VS", "0", "0", "0", "0", "1"),
    question("VS", "0", "1", "0", "1", "0"),
    question("VD", "0", "0", "0", "1", "1"),
    question("VD", "0", "1", "0", "2", "0"),
]


def ids(q: dict) -> dict:
    return {k: q[k] for k in ("category", "subcategory", "set_id", "figure_id", "question_id")}


@pytest.fixture
def question_file(tmp_path: Path) -> Path:
    path = tmp_path / "HallusionBench.json"
    path.write_text(json.dumps(QUESTIONS), encoding="utf-8")
    return path


def write(tmp_path: Path, records: object, name: str = "answers.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_the_command_writes_the_percentages_and_the_subset(
    tmp_path: Path, question_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    said = ["I am not sure.", "No, it is not.", "Yes.", "Yes, it is."]
    records = [{**ids(q), "model_prediction": a} for q, a in zip(QUESTIONS, said, strict=True)]
    answers = write(tmp_path, records)
    out = tmp_path / "out.json"
    code = main(["hallusionbench", "--answers", str(answers), "--questions", str(question_file),
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    # right: VS figure 0 (uncertain, no figure), VS figure 1, VD figure 0; wrong: VD figure 1;
    # figures VS_0_1 and VD_0_0 right, VD_0_1 wrong (VS figure 0 is none); pair VS right
    assert (doc["aAcc"], doc["fAcc"], doc["qAcc"]) == (75.0, 66.6667, 50.0)
    assert (doc["n_scored"], doc["n_questions"], doc["n_uncertain"]) == (4, 4, 1)
    assert doc["subset"] == "4 of 4 questions"
    assert list(doc) == sorted(doc)  # written with sorted keys
    assert "aAcc 75.00%" in capsys.readouterr().err


def test_a_jsonl_subset_is_scored_as_a_subset(tmp_path: Path, question_file: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps({**ids(QUESTIONS[2]), "model_prediction": "yes"}) + "\n")
    out = tmp_path / "out.json"
    code = main(["hallusionbench", "--answers", str(path), "--questions", str(question_file),
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert (doc["aAcc"], doc["n_scored"], doc["subset"]) == (100.0, 1, "1 of 4 questions")


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{**ids(QUESTIONS[0]), "set_id": "9", "model_prediction": "yes"}],
         r"record 1 \(VS_chart_9_0_0\): no such question"),
        ([{**ids(QUESTIONS[0]), "model_prediction": "yes"}] * 2,
         r"record 2 \(VS_chart_0_0_0\): this question is already answered in record 1"),
        ([ids(QUESTIONS[0])], r"record 1 \(VS_chart_0_0_0\): missing model_prediction"),
        ([{**ids(QUESTIONS[0]), "model_prediction": None}], "model_prediction must be a string"),
        ([{"category": "VD", "model_prediction": "yes"}], "record 1: missing subcategory"),
        ([{**ids(QUESTIONS[0]), "category": "XX", "model_prediction": "y"}], "expected VD or VS"),
        ([{**ids(QUESTIONS[0]), "set_id": 0.5, "model_prediction": "y"}], "set_id must be"),
        (["yes"], "record 1: not a JSON object"),
        ([], "no answer record"),
    ],
)  # fmt: skip
def test_bad_answers_name_the_file_and_the_record(
    tmp_path: Path, question_file: Path, records: object, message: str
) -> None:
    path = write(tmp_path, records)
    with pytest.raises(InputError, match=message) as err:
        load_answers(path, load_questions(question_file))
    assert str(path) in str(err.value)


def test_integer_ids_join_as_strings(tmp_path: Path, question_file: Path) -> None:
    record = {**ids(QUESTIONS[0]), "set_id": 0, "figure_id": 0, "question_id": 0}
    (answer,) = load_answers(write(tmp_path, [{**record, "model_prediction": "y"}]),
                             load_questions(question_file))  # fmt: skip
    assert answer.question.key == ("VS", "chart", "0", "0", "0")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"gt_answer": "yes"}, r"record 1 \(VS_chart_0_0_0\): gt_answer 'yes'; expected 0\|1"),
        ({"visual_input": "3"}, "visual_input '3'; expected 0|1|2"),
        ({"visual_input": "1"}, "a VS question of figure 0 must be text-only"),
        ({"question": None}, "question must be a string"),
    ],
)
def test_a_bad_question_file_is_refused(tmp_path: Path, change: dict, message: str) -> None:
    path = write(tmp_path, [{**QUESTIONS[0], **change}], "q.json")
    with pytest.raises(InputError, match=message):
        load_questions(path)


def test_a_duplicate_question_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, [QUESTIONS[0], QUESTIONS[0]], "q.json")
    with pytest.raises(InputError, match="record 2 .*the same five ids"):
        load_questions(path)


def test_the_command_exits_2_on_bad_input(tmp_path: Path, question_file: Path) -> None:
    answers = write(tmp_path, [{"model_prediction": "yes"}])
    code = main(["hallusionbench", "--answers", str(answers), "--questions", str(question_file),
                 "--out", str(tmp_path / "o.json")])  # fmt: skip
    assert code == 2 and not (tmp_path / "o.json").exists()


SAMPLE = Path(__file__).resolve().parents[5].parent / "shared/data/hallusionbench"


def test_every_number_has_an_interval_over_question_sets(
    tmp_path: Path, question_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The question set is resampled (its figures and pairs inside it): aAcc by Wilson at the
    effective n, fAcc and qAcc by the bootstrap, in percent; the same bytes on a second run;
    --no-intervals gives the document without them."""
    said = ["I am not sure.", "No, it is not.", "Yes.", "Yes, it is."]
    records = [{**ids(q), "model_prediction": a} for q, a in zip(QUESTIONS, said, strict=True)]
    answers = write(tmp_path, records)
    outs = [tmp_path / f"{n}.json" for n in ("a", "b", "plain")]
    for out, extra in zip(outs, ([], [], ["--no-intervals"]), strict=True):
        argv = ["hallusionbench", "--answers", str(answers), "--questions", str(question_file),
                "--out", str(out), *extra]  # fmt: skip
        assert main(argv) == 0
    assert outs[0].read_bytes() == outs[1].read_bytes()
    doc, plain = (json.loads(p.read_text(encoding="utf-8")) for p in (outs[0], outs[2]))
    assert plain == {k: v for k, v in doc.items() if k not in ("intervals", "interval_settings")}
    tree = doc["intervals"]
    assert set(tree["splits"]) == set(doc["splits"])
    for key in ("aAcc", "fAcc", "qAcc", "easy_aAcc", "hard_aAcc"):
        interval = tree[key]
        assert interval["unit"] == "question set" and interval["n_units"] == 2, key
        if doc[key] is not None:
            assert interval["lo"] - 1e-4 <= doc[key] <= interval["hi"] + 1e-4, key
    assert tree["aAcc"]["method"] == "wilson (effective n)" and tree["fAcc"]["method"] == "bca"
    assert tree["splits"]["Overall"]["qAcc"] == tree["qAcc"]
    assert "aAcc 75.00% [" in capsys.readouterr().err


@pytest.mark.skipif(
    not SAMPLE.exists() or not (default_mirror() / "hallusionbench/HallusionBench.json").is_file(),
    reason="../shared/data/hallusionbench is not present (or not the data mirror)",
)
def test_the_public_sample_gets_intervals_over_its_37_sets(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    argv = ["hallusionbench", "--answers", str(SAMPLE / "HallusionBench_result_sample.json"),
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    for key in ("aAcc", "fAcc", "qAcc", "easy_aAcc", "hard_aAcc"):
        interval = doc["intervals"][key]
        assert interval["lo"] - 1e-4 <= doc[key] <= interval["hi"] + 1e-4, key
        assert interval["hi"] - interval["lo"] > 5, key  # 254 answers: several points wide
    assert doc["intervals"]["aAcc"]["method"] == "wilson (effective n)"
