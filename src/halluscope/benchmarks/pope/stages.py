"""POPE stages: questions from per-image GT, answers through any backend, scores.

The demo builds POPE questions from its authored annotations, lets every model answer them
(the simulated LVLMs answer with their configured yes-bias), and joins POPE-F1 into the CAOS
table, as the CAOS paper does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.io import read_jsonl, write_json, write_jsonl
from halluscope.settings import IntervalParams, StageSettings, keyed_values, param
from halluscope.stage_command import stage
from halluscope.stages.answering import AnswerSettings, with_cache
from halluscope.stages.data import load_items


@dataclass(frozen=True)
class PopeQuestionSettings(StageSettings):
    """What one questions job reads from params (section ``pope``): the negative-sampling
    setting (random, popular or adversarial), positives per image, the seed, and whether to
    reproduce the first release's "imange" typo."""

    setting: str
    n: int = param("pope.n")
    seed: int = param("pope.seed")
    typo: bool = param("pope.typo")

    @classmethod
    def from_config(cls, config: Mapping[str, Any], setting: str) -> PopeQuestionSettings:
        return cls(setting, **keyed_values(cls, config))

    @classmethod
    def jobs(cls, config: Mapping[str, Any]) -> list[dict[str, str]]:
        return [{"setting": s} for s in config["pope"]["settings"]]


@dataclass(frozen=True)
class PopeScoreSettings(IntervalParams):
    """How a yes/no answer is read (``pope.parser``: original, opera or strict), and the
    intervals (``intervals``)."""

    parser: str = param("pope.parser")


@stage("pope-questions")
def questions(settings: PopeQuestionSettings, items: Path, out: Path) -> None:
    """POPE questions of one setting from the items.

    Images with fewer than n GT objects are skipped."""
    from halluscope.benchmarks.pope.metric import build_questions

    gt = {image_id: item.get("gt_objects", []) for image_id, item in load_items(items).items()}
    built = build_questions(
        gt, settings.setting, n=settings.n, seed=settings.seed, typo=settings.typo
    )
    write_jsonl(out, built)


@stage("pope-answers")
def answers(settings: AnswerSettings, items: Path, questions: Path, cache: Path, out: Path) -> None:
    """POPE answers of one model, through the response cache (resumable)."""
    from halluscope.stages.answering import Question, answer_and_write

    answer_and_write(
        items,
        with_cache(settings, cache),
        read_jsonl(questions),
        lambda q: Question(
            str(q["image"]),
            f"pope/{q['question_id']}",
            q["text"],
            {"question_id": q["question_id"]},
        ),  # fmt: skip
        lambda q, r: {"question_id": q["question_id"], "text": r.text},
        out,
        task="yesno",
        what="POPE answers",
    )


@stage("pope-score")
def score(settings: PopeScoreSettings, questions: Path, answers: Path, out: Path) -> None:
    """POPE accuracy, precision, recall, F1 and yes ratio of one model (and unparsed answers),
    each with its interval, and the per-image counts of POPE-F1's interval in the CAOS tables."""
    from halluscope.benchmarks.pope.intervals import score_document
    from halluscope.benchmarks.pope.metric import parse_answer

    parser = settings.parser
    asked = read_jsonl(questions)
    preds = {a["question_id"]: parse_answer(a["text"], parser) for a in read_jsonl(answers)}
    doc = score_document(
        asked, [preds.get(q["question_id"]) for q in asked], parser, settings.interval_settings()
    )
    write_json(out, doc)
