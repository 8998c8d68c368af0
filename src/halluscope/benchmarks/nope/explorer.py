"""NOPE's part of the explorer page: every answer with its reference and its per-answer scores.

The score file keeps one row per answer (``answers`` of ``<model>/scores.json``: exact match,
whether the answer is a negative indefinite pronoun, METEOR); the page shows them as they are.
An answer to a NegP question (the object is absent) is wrong when it is no NegP answer, the
error NegP accuracy counts; any other answer is wrong when it does not match exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.explorer.records import Answer, Contribution, need
from halluscope.io import InputError, iter_jsonl_numbered, read_json

TITLE = "NOPE"


def options(config: Mapping[str, Any]) -> dict[str, Any]:
    """The models."""
    return {"models": list(config["generate"]["models"])}


def _paths(profile: str, model: str) -> tuple[str, str]:
    folder = f"results/nope/{profile}/{model}"
    return f"{folder}/answers.jsonl", f"{folder}/scores.json"


def files(options: Mapping[str, Any], profile: str) -> list[str]:
    """Every model's answers and score file."""
    return [path for model in options["models"] for path in _paths(profile, model)]


def _judge(scores: Mapping[str, Any], where: str) -> tuple[str, bool]:
    """The row's scores as text, and whether the answer is wrong (see the module docstring)."""
    exact = need(scores, "exact_match", where)
    text = f"exact match {exact}"
    is_negp = need(scores, "is_negp", where)
    if is_negp:
        negp = need(scores, "negp_answer", where)
        text += f" · NegP answer {negp}"
    meteor = scores.get("meteor")
    if isinstance(meteor, int | float):
        text += f" · METEOR {meteor:.3f}"
    return text, not (negp if is_negp else exact)


def contribution(
    options: Mapping[str, Any], profile: str, items: Mapping[str, Mapping[str, Any]]
) -> Contribution:
    """Every model's answer to every question, with its row of the score file."""
    answers = []
    for model in options["models"]:
        answer_path, score_path = _paths(profile, model)
        rows = need(read_json(score_path), "answers", score_path)
        scored = {need(r, "question_id", f"{score_path}: answers"): r for r in rows}
        for line, record in iter_jsonl_numbered(answer_path):
            where = f"{answer_path}:{line}"
            question_id = need(record, "question_id", where)
            if question_id not in scored:
                raise InputError(f"{where}: question {question_id!r} has no row in {score_path}")
            judge, wrong = _judge(scored[question_id], f"{score_path}: {question_id}")
            kind = "NegP" if record.get("is_negp") else "other"
            label = f"{record.get('relevance', '')} / {record.get('question_type', '')} / {kind}"
            answers.append(
                Answer(
                    str(need(record, "image_id", where)),
                    model,
                    label,
                    str(need(record, "question", where)),
                    str(need(record, "answer", where)),
                    str(need(record, "reference", where)),
                    judge,
                    wrong,
                )
            )
    return Contribution(
        TITLE,
        answers=answers,
        note="results/nope: answers and each answer's row of scores.json; wrong: a NegP "
        "question without a NegP answer, or another answer without an exact match",
    )
