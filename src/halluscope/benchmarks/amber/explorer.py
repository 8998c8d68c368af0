"""AMBER's part of the explorer page: every generative answer and the objects it hallucinated.

The score file keeps, per response, the hallucinated nouns its CHAIR counts (``responses`` of
``<model>/scores.json``); the page shows them beside the image's truth objects. A response the
score file does not list (not a generative one) is not judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.explorer.records import Answer, Contribution, need
from halluscope.io import iter_jsonl_numbered, read_json

TITLE = "AMBER"


def options(config: Mapping[str, Any]) -> dict[str, Any]:
    """The models."""
    return {"models": list(config["generate"]["models"])}


def _paths(profile: str, model: str) -> tuple[str, str]:
    folder = f"results/amber/{profile}/{model}"
    return f"{folder}/answers.jsonl", f"{folder}/scores.json"


def files(options: Mapping[str, Any], profile: str) -> list[str]:
    """The prompts and every model's answers and score file."""
    paths = [path for model in options["models"] for path in _paths(profile, model)]
    return [f"results/amber/{profile}/prompts.jsonl", *paths]


def contribution(
    options: Mapping[str, Any], profile: str, items: Mapping[str, Mapping[str, Any]]
) -> Contribution:
    """Every model's response to every prompt, with the nouns the score counts hallucinated."""
    prompts_path = f"results/amber/{profile}/prompts.jsonl"
    prompts = {}
    for line, record in iter_jsonl_numbered(prompts_path):
        where = f"{prompts_path}:{line}"
        prompts[need(record, "id", where)] = record, where
    answers = []
    for model in options["models"]:
        answer_path, score_path = _paths(profile, model)
        rows = need(read_json(score_path), "responses", score_path)
        found = {need(r, "id", f"{score_path}: responses"): r for r in rows}
        for line, record in iter_jsonl_numbered(answer_path):
            where = f"{answer_path}:{line}"
            prompt_id = need(record, "id", where)
            prompt, asked = prompts.get(prompt_id, ({}, prompts_path))
            scored = found.get(prompt_id)
            hallucinated = None if scored is None else list(scored.get("hallucinated") or [])
            judge = (
                "not a generative response"
                if hallucinated is None
                else "hallucinated: " + (", ".join(hallucinated) or "none")
            )
            answers.append(
                Answer(
                    str(need(record, "image_id", where)),
                    model,
                    "",
                    str(prompt.get("query", "")),
                    str(need(record, "response", where)),
                    "objects: " + ", ".join(map(str, prompt.get("truth") or [])),
                    judge,
                    None if hallucinated is None else bool(hallucinated),
                )
            )
    return Contribution(
        TITLE,
        answers=answers,
        note="results/amber: responses and the hallucinated nouns of each in scores.json",
    )
