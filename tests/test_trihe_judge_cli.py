"""``halluscope trihe --judge NAME`` on the pipeline's nested judgments.jsonl: the same Hallu_Q /
Hallu_I as the stage's scores.json for that judge; without --judge, an error listing the judges.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from halluscope.cli import main

ROOT = Path(__file__).resolve().parents[1]


def write_lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def nested_records() -> list[dict]:
    """A hand-made judgments.jsonl in the stage's layout (two judges, a question without any
    triplet, object and relation errors, an unparseable ``null`` reply)."""

    def entry(judgments, errors):
        return {"judgments": judgments, "errors": errors, "scores": [0.5] * len(judgments)}

    return [
        {
            "question_id": "a-1",
            "image_id": "a",
            "triplets": [["dog", "on", "sofa"], ["cat", "near", "dog"]],
            "judges": {
                "slots": entry(["yes", "no"], [None, "relation"]),
                "similarity": entry(["yes", "yes"], [None, None]),
            },
        },
        {
            "question_id": "a-2",
            "image_id": "a",
            "triplets": [["kite", "in", "sky"]],
            "judges": {
                "slots": entry(["no"], ["object"]),
                "similarity": entry(["no"], ["object"]),
            },
        },
        {
            "question_id": "b-1",
            "image_id": "b",
            "triplets": [],
            "judges": {"slots": entry([], []), "similarity": entry([], [])},
        },
        {
            "question_id": "b-2",
            "image_id": "b",
            "triplets": [["man", "holds", "cup"], ["cup", "on", "table"]],
            "judges": {
                "slots": entry(["yes", "null"], [None, None]),
                "similarity": entry(["no", "yes"], ["relation", None]),
            },
        },
    ]


def stage_rates(records: list[dict], judge: str, unattributed: str = "relation") -> dict:
    """Hallu_Q / Hallu_I of one judge exactly as halluscope.benchmarks.trihe.stages.judge computes
    them from its records."""
    from halluscope.benchmarks.trihe import metric as m

    questions = [
        m.QuestionJudgments(
            r["image_id"],
            r["question_id"],
            tuple(r["judges"][judge]["judgments"]),
            tuple(r["judges"][judge]["errors"]),
        )
        for r in records
    ]
    return m.hallucination_rates(questions, unattributed=unattributed)


def rates_of(out: Path, judge: str | None = None) -> dict:
    """The command's numbers (or, with ``judge``, that judge's in a stage's scores.json),
    without the intervals beside them (tests/test_hand_check_cli.py checks those)."""
    doc = json.loads(out.read_text(encoding="utf-8"))
    if judge is not None:
        doc = doc["judges"][judge]
    return {k: v for k, v in doc.items() if k not in ("intervals", "interval_settings")}


@pytest.mark.parametrize("judge", ["slots", "similarity"])
def test_judge_flag_on_hand_made_nested_file(tmp_path: Path, judge: str) -> None:
    records = nested_records()
    path = write_lines(tmp_path / "judgments.jsonl", records)
    out = tmp_path / "o.json"
    assert main(["trihe", "--judgments", str(path), "--judge", judge, "--out", str(out)]) == 0
    got = rates_of(out)
    assert got == stage_rates(records, judge)
    # the flat file of that judge's entries gives the same numbers
    flat = [
        {"image_id": r["image_id"], "question_id": r["question_id"], **r["judges"][judge]}
        for r in records
    ]
    for r in flat:
        del r["scores"]
    flat_out = tmp_path / "flat.json"
    flat_path = write_lines(tmp_path / "flat.jsonl", flat)
    assert main(["trihe", "--judgments", str(flat_path), "--out", str(flat_out)]) == 0
    assert rates_of(flat_out) == got


def test_judges_give_different_numbers(tmp_path: Path) -> None:
    """--judge really selects: the two judges of the hand-made file disagree."""
    assert stage_rates(nested_records(), "slots") != stage_rates(nested_records(), "similarity")


@pytest.mark.parametrize(
    ("records", "args", "message"),
    [
        (
            nested_records(),
            [],
            r"nested judgements of 2 judge\(s\): slots, similarity; choose one with --judge NAME",
        ),
        (nested_records(), ["--judge", "nli"], r"no judge 'nli'; judges found: slots, similarity"),
        (
            [{"image_id": "a", "question_id": 1, "judgments": ["yes"], "errors": [None]}],
            ["--judge", "slots"],
            r"--judge slots given, but the lines have no 'judges' key",
        ),
        (
            [nested_records()[0], {"image_id": "a", "question_id": 9, "judgments": ["yes"]}],
            ["--judge", "slots"],
            r"judgments\.jsonl:2: no 'judges' key, but line 1 has one",
        ),
    ],
)
def test_judge_errors(tmp_path: Path, capsys, records: list, args: list, message: str) -> None:
    path = write_lines(tmp_path / "judgments.jsonl", records)
    out = tmp_path / "o.json"
    assert main(["trihe", "--judgments", str(path), *args, "--out", str(out)]) == 2
    assert re.search(message, capsys.readouterr().err)
    assert not out.exists()


def test_judge_flag_matches_the_stage_scores(tmp_path: Path) -> None:
    """The judge stage (halluscope.benchmarks.trihe.stages, slots + similarity with MiniLM) on six
    demo questions answered by a simulated LVLM: ``halluscope trihe --judge NAME`` on its
    judgments.jsonl gives its scores.json numbers for NAME."""
    from pipeline_helpers import trihe_demo_triplets

    from halluscope.benchmarks.trihe import stages as trihe
    from halluscope.io import read_jsonl

    params, items, (answers,), (triplets,) = trihe_demo_triplets(tmp_path)
    config = {**params, "trihe": {**params["trihe"], "judges": ["slots", "similarity"]}}
    judgments = tmp_path / "judgments.jsonl"
    scores = trihe.judge_model(
        trihe.JudgeSettings.from_config(config),
        items,
        answers,
        triplets,
        tmp_path / "cache",
        judgments,
        tmp_path / "scores.json",
    )
    assert sum(len(r["triplets"]) for r in read_jsonl(judgments)) > 0
    assert scores["judges"]["slots"]["n_hallucinated"] > 0  # not a comparison of zeros
    for judge in ("slots", "similarity"):
        out = tmp_path / f"{judge}.json"
        argv = ["trihe", "--judgments", str(judgments), "--judge", judge, "--out", str(out)]
        assert main(argv) == 0
        got = rates_of(out)
        expected = scores["judges"][judge]
        assert got["hallu_q"] == pytest.approx(expected["hallu_q"])
        assert got["hallu_i"] == pytest.approx(expected["hallu_i"])
        stage = json.loads((tmp_path / "scores.json").read_text())["judges"][judge]
        # the intervals too: the stage and the command share trihe/intervals.py, at the same
        # settings (params.yaml's intervals are the command's defaults)
        assert json.loads(out.read_text(encoding="utf-8")) == stage
        assert got == rates_of(tmp_path / "scores.json", judge)


def test_judge_stage_pairs_several_models(tmp_path: Path, capsys) -> None:
    """``halluscope stage trihe-judge`` with two models' paths (the DAG's one judge job per
    dataset, one encoder load) writes the same bytes as one process per model did; path counts
    that differ are an error naming the flags, and nothing is written."""
    from pipeline_helpers import run, trihe_demo_triplets

    from halluscope.benchmarks.trihe import stages as trihe

    models = ("sim-precise", "sim-frequent")
    params, items, answers, triplets = trihe_demo_triplets(tmp_path, models)
    judge = trihe.JudgeSettings.from_config(params).to_json()

    def argv(indexes: list[int], out: Path) -> list[str]:
        return [
            "stage", "trihe-judge", "--items", str(items),
            "--answers", *(str(answers[i]) for i in indexes),
            "--triplets", *(str(triplets[i]) for i in indexes),
            "--settings", judge, "--cache", str(tmp_path / "cache"),
            "--out-judgments", *(str(out / f"{models[i]}.judgments.jsonl") for i in indexes),
            "--out-scores", *(str(out / f"{models[i]}.scores.json") for i in indexes),
        ]  # fmt: skip

    assert main(argv([0, 1], tmp_path / "together")) == 0
    for index in (0, 1):  # one path per flag, each in its own process (the former jobs)
        run([sys.executable, "-m", "halluscope.cli", *argv([index], tmp_path / "alone")], ROOT)
    together, alone = tmp_path / "together", tmp_path / "alone"
    files = sorted(p.name for p in alone.iterdir())
    assert files == sorted(f"{m}.{f}" for m in models for f in ("judgments.jsonl", "scores.json"))
    for name in files:
        assert (together / name).read_bytes() == (alone / name).read_bytes(), name
    scores = [json.loads((tmp_path / f"alone/{m}.scores.json").read_text()) for m in models]
    assert [s["model"] for s in scores] == list(models)
    assert scores[0]["judges"] != scores[1]["judges"]  # two models, not one file twice

    bad = argv([0, 1], tmp_path / "bad")
    del bad[bad.index("--triplets") + 2]
    assert main(bad) == 2
    assert (
        "--answers, --triplets, --out-judgments, --out-scores take as many values each, paired by "
        "position (one per entry); got --answers 2, --triplets 1, --out-judgments 2, "
        "--out-scores 2"
    ) in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()
