"""PhD's part of the explorer page: every yes/no answer with its mode, task, label and reading.

The score files hold the PhD Index per mode and task only, so each answer is read as the score
stage reads it (:class:`~halluscope.benchmarks.phd.metric.PhdAnswer`'s ``prediction``): an answer
is wrong when that reading differs from its label (an unparsed answer is wrong, as the recalls
count it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.explorer.records import Answer, Contribution, need
from halluscope.io import iter_jsonl_numbered

TITLE = "PhD"


def options(config: Mapping[str, Any]) -> dict[str, Any]:
    """The models."""
    return {"models": list(config["generate"]["models"])}


def files(options: Mapping[str, Any], profile: str) -> list[str]:
    """The prompts and every model's answers."""
    answers = [f"results/phd/{profile}/{model}/answers.jsonl" for model in options["models"]]
    return [f"results/phd/{profile}/prompts.jsonl", *answers]


def contribution(
    options: Mapping[str, Any], profile: str, items: Mapping[str, Mapping[str, Any]]
) -> Contribution:
    """Every model's answer to every prompt."""
    from halluscope.benchmarks.phd.metric import PhdAnswer

    prompts_path = f"results/phd/{profile}/prompts.jsonl"
    prompts = {}
    for line, record in iter_jsonl_numbered(prompts_path):
        where = f"{prompts_path}:{line}"
        prompts[need(record, "id", where)] = str(need(record, "question", where))
    answers = []
    for model in options["models"]:
        path = f"results/phd/{profile}/{model}/answers.jsonl"
        for line, record in iter_jsonl_numbered(path):
            where = f"{path}:{line}"
            fields = [need(record, key, where) for key in ("id", "mode", "task", "label", "answer")]
            reading = PhdAnswer(*(str(f) for f in fields)).prediction  # type: ignore[arg-type]
            label = str(fields[3])
            answers.append(
                Answer(
                    str(need(record, "image_id", where)),
                    model,
                    f"{fields[1]} / {fields[2]}",
                    prompts.get(fields[0], ""),
                    str(fields[4]),
                    label,
                    f"read as {reading or 'unparsed'}",
                    reading != label,
                )
            )
    return Contribution(
        TITLE,
        answers=answers,
        note="results/phd: prompts and answers, each read as the score stage reads it",
    )
