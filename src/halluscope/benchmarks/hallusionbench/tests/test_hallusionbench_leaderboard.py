"""Published numbers beside ours (halluscope.benchmarks.hallusionbench.leaderboard): which
rows, the difference, and the statement of what each covers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from halluscope.benchmarks.hallusionbench.leaderboard import (
    README_ROWS,
    comparison,
    leaderboard_rows,
    published,
    readme_rows,
)
from halluscope.cli import main
from halluscope.io import InputError

BOARD = [
    {"rank": 1, "model": "MiMo-VL-7B", "date": "2025/07/02", "aAcc": 75.8, "fAcc": 59.5,
     "qAcc": 56.0, "overall": 63.8},
]  # fmt: skip


def doc(n_scored: int, n_questions: int = 1129) -> dict:
    return {"aAcc": 61.0236, "fAcc": 20.2899, "qAcc": 34.188, "easy_aAcc": 70.0855,
            "hard_aAcc": None, "n_scored": n_scored, "n_questions": n_questions,
            "subset": f"{n_scored} of {n_questions} questions", "judge": "rule: r"}  # fmt: skip


def test_the_readme_table_is_whole() -> None:
    rows = readme_rows()
    assert len(rows) == len(README_ROWS) == 19
    gpt4v = [r for r in rows if r["model"] == "GPT4V"]
    assert [r["evaluation"] for r in gpt4v] == ["Human Eval", "GPT Eval"]
    # the README's GPT Eval row: qAcc 28.79, fAcc 39.88, easy 75.60, hard 37.67, aAcc 65.28
    assert [gpt4v[1][m] for m in ("qAcc", "fAcc", "easy_aAcc", "hard_aAcc", "aAcc")] == [
        28.79, 39.88, 75.6, 37.67, 65.28,
    ]  # fmt: skip


def test_names_match_ignoring_case_and_punctuation() -> None:
    assert len(published("gpt-4v", readme_rows())) == 2
    assert len(published("llava 1.5", readme_rows())) == 2
    with pytest.raises(InputError, match="no published HallusionBench numbers.*GPT4V"):
        published("GPT-5", readme_rows())


def test_a_subset_is_said_not_comparable_and_differences_are_ours_minus_published() -> None:
    rows = [*readme_rows(), *[{**r, "evaluation": None, "source": "lb"} for r in BOARD]]
    found = comparison(doc(254), "GPT4V", "named by --model", rows)
    assert found["same_questions"] is False and found["ours_cover"] == "254 of 1129 questions"
    assert "not comparable one to one" in found["note"] and "254 of 1129" in found["note"]
    gpt_eval = found["published"][1]
    assert gpt_eval["difference"]["aAcc"] == round(61.0236 - 65.28, 4)
    assert gpt_eval["difference"]["hard_aAcc"] is None  # ours undefined on this subset
    mimo = comparison(doc(1129), "mimo-vl-7b", "named by --model", rows)
    assert mimo["same_questions"] is True and "not comparable" not in mimo["note"]
    (row,) = mimo["published"]
    # overall: the mean of the three, as leaderboard.json's
    assert row["ours"]["overall"] == round((61.0236 + 20.2899 + 34.188) / 3, 4)
    assert set(row["difference"]) == {"aAcc", "fAcc", "qAcc", "overall"}


def test_a_bad_leaderboard_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "leaderboard.json"
    path.write_text(json.dumps([{"model": "M", "aAcc": "75"}]), encoding="utf-8")
    with pytest.raises(InputError, match="record 1: expected"):
        leaderboard_rows(path)
    path.write_text(json.dumps(BOARD), encoding="utf-8")
    assert leaderboard_rows(path)[0]["overall"] == 63.8


def test_the_command_sets_a_named_models_numbers_beside_ours(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q = {"category": "VD", "subcategory": "chart", "set_id": "0", "figure_id": "0",
         "question_id": "0", "visual_input": "1", "question": "Q?", "gt_answer": "1",
         "gt_answer_details": "d"}  # fmt: skip
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps([q, {**q, "question_id": "1"}]), encoding="utf-8")
    answers = tmp_path / "a.json"
    answers.write_text(json.dumps([{**q, "model_prediction": "Yes."}]), encoding="utf-8")
    board = tmp_path / "leaderboard.json"
    board.write_text(json.dumps(BOARD), encoding="utf-8")
    out = tmp_path / "o.json"
    argv = ["hallusionbench", "--answers", str(answers), "--questions", str(questions),
            "--leaderboard", str(board), "--out", str(out)]  # fmt: skip
    assert main([*argv, "--model", "MiMo-VL-7B"]) == 0
    found = json.loads(out.read_text(encoding="utf-8"))["leaderboard"]
    assert found["why"] == "named by --model" and found["ours_cover"] == "1 of 2 questions"
    assert found["published"][0]["difference"]["aAcc"] == round(100.0 - 75.8, 4)
    assert "published MiMo-VL-7B" in capsys.readouterr().err
    assert main(argv) == 0  # no --model, not a known answers file: no published numbers
    assert json.loads(out.read_text(encoding="utf-8"))["leaderboard"] is None
    assert main([*argv, "--model", "nobody"]) == 2
    assert "MiMo-VL-7B" in capsys.readouterr().err
