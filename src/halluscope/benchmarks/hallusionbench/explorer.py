"""HallusionBench's part of the explorer page: every answer with its question, the truth and
the judge's verdict, as the score files hold them.

Why figures as items: HallusionBench's figures are not the profile's images, so each answer is
shown under its figure (``HB-<category>_<subcategory>_<set_id>_<figure_id>``, the items its
questions stage writes; the text-only questions' figure has no image): :func:`contribution`
returns those figures as its own items (``Contribution.items``), which the page adds to the
profile's; see docs/hallusionbench.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.explorer.records import Answer, Contribution, need
from halluscope.io import InputError, iter_jsonl_numbered, read_json

TITLE = "HallusionBench"
VERDICTS = {0: "wrong", 1: "correct", 2: "uncertain"}


def options(config: Mapping[str, Any]) -> dict[str, Any]:
    """The models."""
    return {"models": list(config["generate"]["models"])}


def files(options: Mapping[str, Any], profile: str) -> list[str]:
    """The questions, their figures' items, and every model's answers and scores."""
    per_model = [
        f"results/hallusionbench/{profile}/{model}/{name}"
        for model in options["models"]
        for name in ("answers.jsonl", "scores.json")
    ]
    return [
        f"results/hallusionbench/{profile}/questions.jsonl",
        f"results/hallusionbench/{profile}/items.jsonl",
        *per_model,
    ]


def _judge_text(row: Mapping[str, Any], judge: str) -> str:
    verdict = VERDICTS.get(row["verdict"], str(row["verdict"]))
    said = f"read as {row['said']}, " if row.get("said") else ""
    counted = " (counted correct: no figure)" if row["verdict"] == 2 and row["correct"] else ""
    return f"{judge}: {said}{verdict}{counted}"


def contribution(
    options: Mapping[str, Any], profile: str, items: Mapping[str, Mapping[str, Any]]
) -> Contribution:
    """Every model's answer to every question, judged as its score file says."""
    root = f"results/hallusionbench/{profile}"
    figures = {}
    for line, record in iter_jsonl_numbered(f"{root}/items.jsonl"):
        figures[str(need(record, "image_id", f"{root}/items.jsonl:{line}"))] = record
    questions = {}
    for line, record in iter_jsonl_numbered(f"{root}/questions.jsonl"):
        questions[str(need(record, "id", f"{root}/questions.jsonl:{line}"))] = record
    answers = []
    for model in options["models"]:
        scores_path = f"{root}/{model}/scores.json"
        scores = read_json(scores_path)
        judge = str(need(scores, "judge", scores_path)).split(":")[0]
        judged = {str(need(r, "id", scores_path)): r for r in need(scores, "answers", scores_path)}
        path = f"{root}/{model}/answers.jsonl"
        for line, record in iter_jsonl_numbered(path):
            where = f"{path}:{line}"
            ids = [str(need(record, key, where)) for key in
                   ("category", "subcategory", "set_id", "figure_id", "question_id")]  # fmt: skip
            key = "_".join(ids)
            if key not in questions or key not in judged:
                raise InputError(f"{where}: question {key} is not in {root}/questions.jsonl "
                                 f"and {scores_path}")  # fmt: skip
            question, row = questions[key], judged[key]
            truth = "yes" if question["gt_answer"] == "1" else "no"
            answers.append(
                Answer(
                    str(question["image_id"]),
                    model,
                    f"{ids[0]} / {ids[1]} / set {ids[2]} figure {ids[3]}",
                    str(question["question"]),
                    str(need(record, "model_prediction", where)),
                    f"{truth} ({question['gt_answer_details']})",
                    _judge_text(row, judge),
                    not row["correct"],
                )
            )
    return Contribution(
        TITLE,
        answers=answers,
        note=f"results/hallusionbench: questions, answers and each answer's verdict as the score "
        f"files hold it ({scores['subset'] if options['models'] else 'no model'})",
        items=figures,
    )
