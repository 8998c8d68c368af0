"""POPE's part of the explorer page: every yes/no answer with its label and how it was read.

The score files hold rates only, so each answer is read by the score stage's own parser
(:func:`~halluscope.benchmarks.pope.metric.parse_answer` with ``pope.parser``): an answer is
wrong when that reading differs from the question's label (an unparsed answer is wrong, as the
scores count it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.explorer.records import Answer, Contribution, need
from halluscope.io import InputError, iter_jsonl_numbered

TITLE = "POPE"


def options(config: Mapping[str, Any]) -> dict[str, Any]:
    """The models, the POPE settings and the answer parser."""
    pope = config["pope"]
    return {
        "models": list(config["generate"]["models"]),
        "settings": list(pope["settings"]),
        "parser": str(pope["parser"]),
    }


def _questions(profile: str, setting: str) -> str:
    return f"results/pope/{profile}/questions/{setting}.jsonl"


def _answers(profile: str, model: str, setting: str) -> str:
    return f"results/pope/{profile}/{model}/{setting}.answers.jsonl"


def files(options: Mapping[str, Any], profile: str) -> list[str]:
    """The questions of every setting and every model's answers to them."""
    return [
        path
        for setting in options["settings"]
        for path in (
            _questions(profile, setting),
            *(_answers(profile, model, setting) for model in options["models"]),
        )
    ]


def contribution(
    options: Mapping[str, Any], profile: str, items: Mapping[str, Mapping[str, Any]]
) -> Contribution:
    """Every model's answer to every question of every setting."""
    from halluscope.benchmarks.pope.metric import parse_answer

    parser = options["parser"]
    answers = []
    for setting in options["settings"]:
        path = _questions(profile, setting)
        questions = {}
        for line, record in iter_jsonl_numbered(path):
            where = f"{path}:{line}"
            questions[need(record, "question_id", where)] = record, where
        for model in options["models"]:
            answer_path = _answers(profile, model, setting)
            for line, record in iter_jsonl_numbered(answer_path):
                where = f"{answer_path}:{line}"
                question_id = need(record, "question_id", where)
                if question_id not in questions:
                    raise InputError(f"{where}: question {question_id!r} is not in {path}")
                question, asked = questions[question_id]
                text = str(need(record, "text", where))
                label = need(question, "label", asked)
                reading = parse_answer(text, parser)
                answers.append(
                    Answer(
                        str(need(question, "image", asked)),
                        model,
                        setting,
                        str(need(question, "text", asked)),
                        text,
                        str(label),
                        f"read as {reading or 'unparsed'} ({parser} parser)",
                        reading != label,
                    )
                )
    return Contribution(
        TITLE,
        answers=answers,
        note=f"results/pope: questions and answers; each answer read by the {parser} parser",
    )
