"""Tri-HE's part of the explorer page: every answer with its triplets and each judge's verdicts.

Read from the judge stage's output (``<model>/judgments.jsonl``: per question the extracted
triplets and, per judge, a yes / no / null per triplet, its score and its error kind): an answer
is wrong when the main judge (the first of ``trihe.judges``, the table's) says no to one of its
triplets, the questions Hallu_Q counts; an answer with no triplet is not judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.explorer.records import Answer, Contribution, need
from halluscope.io import InputError, iter_jsonl_numbered

TITLE = "Tri-HE"


def options(config: Mapping[str, Any]) -> dict[str, Any]:
    """The models and the judges, the main one first."""
    return {
        "models": list(config["generate"]["models"]),
        "judges": list(config["trihe"]["judges"]),
    }


def _paths(profile: str, model: str) -> tuple[str, str]:
    folder = f"results/trihe/{profile}/{model}"
    return f"{folder}/answers.jsonl", f"{folder}/judgments.jsonl"


def files(options: Mapping[str, Any], profile: str) -> list[str]:
    """The questions and every model's answers and judgements."""
    paths = [f"results/trihe/{profile}/questions.jsonl"]
    return paths + [p for model in options["models"] for p in _paths(profile, model)]


def _by_id(path: str) -> dict[Any, tuple[dict[str, Any], str]]:
    out = {}
    for line, record in iter_jsonl_numbered(path):
        where = f"{path}:{line}"
        out[need(record, "question_id", where)] = record, where
    return out


def _verdicts(judge: str, verdict: Mapping[str, Any], triplets: list[Any], where: str) -> str:
    """One judge's verdicts, one per triplet: ``(s, r, o) no 0.338 [relation]``."""
    judgments = need(verdict, "judgments", f"{where}: judge {judge!r}")
    scores = verdict.get("scores") or [None] * len(judgments)
    errors = verdict.get("errors") or [None] * len(judgments)
    if not len(judgments) == len(scores) == len(errors) == len(triplets):
        raise InputError(f"{where}: judge {judge!r}: one judgement per triplet expected")
    parts = []
    for triplet, judgment, score, error in zip(triplets, judgments, scores, errors, strict=True):
        text = f"({', '.join(map(str, triplet))}) {judgment}"
        text += f" {score:.3f}" if isinstance(score, int | float) else ""
        parts.append(text + (f" [{error}]" if error else ""))
    return f"{judge}: " + "; ".join(parts)


def contribution(
    options: Mapping[str, Any], profile: str, items: Mapping[str, Mapping[str, Any]]
) -> Contribution:
    """Every model's answer to every question, judged by every judge (main judge first)."""
    questions_path = f"results/trihe/{profile}/questions.jsonl"
    questions = _by_id(questions_path)
    judges = list(options["judges"])
    answers = []
    for model in options["models"]:
        answer_path, judgment_path = _paths(profile, model)
        texts = _by_id(answer_path)
        for line, record in iter_jsonl_numbered(judgment_path):
            where = f"{judgment_path}:{line}"
            question_id = need(record, "question_id", where)
            if question_id not in questions or question_id not in texts:
                raise InputError(
                    f"{where}: question {question_id!r} is missing from {questions_path} or "
                    f"{answer_path}"
                )
            question, asked = questions[question_id]
            answer, answered = texts[question_id]
            triplets = list(need(record, "triplets", where))
            verdicts = need(record, "judges", where)
            lines = [
                _verdicts(judge, verdicts[judge], triplets, where)
                for judge in [*judges, *sorted(set(verdicts) - set(judges))]
                if judge in verdicts
            ]
            main = verdicts.get(judges[0], {}).get("judgments", []) if judges else []
            answers.append(
                Answer(
                    str(need(record, "image_id", where)),
                    model,
                    "",
                    str(need(question, "question", asked)),
                    str(need(answer, "text", answered)),
                    str(question.get("answer", "")),
                    "\n".join(lines) or "no triplet",
                    ("no" in main) if triplets else None,
                )
            )
    main = judges[0] if judges else "none"
    return Contribution(
        TITLE,
        answers=answers,
        note=f"results/trihe: answers and each judge's verdicts per triplet; wrong: {main} says no",
    )
