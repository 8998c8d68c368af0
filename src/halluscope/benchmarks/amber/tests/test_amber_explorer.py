"""AMBER's part of the explorer page: each response with the nouns its score file counts
hallucinated, on a small hand-made profile (prompts, answers, scores.json)."""

from __future__ import annotations

from pathlib import Path

import pytest

from halluscope.benchmarks.amber import explorer
from halluscope.io import InputError, write_json, write_jsonl

PROFILE = "small"
PROMPTS = [
    {"id": 1, "image_id": "x", "query": "Describe this image.", "truth": ["dog"], "hallu": ["cat"]},
    {"id": 2, "image_id": "y", "query": "Describe this image.", "truth": ["car"], "hallu": []},
]


@pytest.fixture()
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    folder = Path("results/amber") / PROFILE
    write_jsonl(folder / "prompts.jsonl", PROMPTS)
    answers = [
        {"id": 1, "image_id": "x", "model": "m", "response": "A dog and a cat."},
        {"id": 2, "image_id": "y", "model": "m", "response": "A car."},
    ]
    write_jsonl(folder / "m" / "answers.jsonl", answers)
    responses = [{"id": 1, "hallucinated": ["cat"]}, {"id": 2, "hallucinated": []}]
    write_json(folder / "m" / "scores.json", {"responses": responses})
    return tmp_path


def test_each_response_shows_the_hallucinated_nouns_of_its_score_file(results: Path) -> None:
    options = explorer.options({"generate": {"models": ["m"]}})
    assert set(explorer.files(options, PROFILE)) == {
        f"results/amber/{PROFILE}/prompts.jsonl",
        f"results/amber/{PROFILE}/m/answers.jsonl",
        f"results/amber/{PROFILE}/m/scores.json",
    }
    found = explorer.contribution(options, PROFILE, {}).answers
    assert [(a.image_id, a.judge, a.wrong) for a in found] == [
        ("x", "hallucinated: cat", True),
        ("y", "hallucinated: none", False),
    ]
    assert found[0].truth == "objects: dog" and found[0].question == "Describe this image."


def test_a_bad_line_is_named(results: Path) -> None:
    path = Path("results/amber") / PROFILE / "m" / "answers.jsonl"
    path.write_text('{"id": 1, "image_id": "x"}\n', encoding="utf-8")
    options = explorer.options({"generate": {"models": ["m"]}})
    with pytest.raises(InputError, match=f"{path}:1: missing field 'response'"):
        explorer.contribution(options, PROFILE, {})
