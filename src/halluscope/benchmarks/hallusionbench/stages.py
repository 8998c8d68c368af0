"""HallusionBench stages: the questions of the subset -> answers per model -> judged and scored.

The questions are the registered ``HallusionBench.json`` (or ``hallusionbench.questions``),
``hallusionbench.subset`` of them: the 178 text-only questions by default (no image needed), or
all 1,129 with the figures of ``data.images``. A model is asked each question as it is written
(the reference's prompt: the question alone, with the figure when it has one), through the
response cache, by any backend (the simulated LVLMs answer from the answer key, see
:mod:`.simulated`). The answers are written in the records of the upstream
``HallusionBench_result_sample.json`` (the five ids and ``model_prediction``), so the score
stage and ``halluscope hallusionbench`` read the same files. The score stage judges them (rule
by default, the reference's LLM judge as a setting, every call cached) and computes the
reference's metrics (:mod:`.scoring`), stating the subset scored against the 1,129 questions.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from halluscope.benchmarks.hallusionbench.settings import HbQuestionSettings, HbScoreSettings
from halluscope.io import read_jsonl, write_json, write_jsonl
from halluscope.stage_command import stage
from halluscope.stages.answering import AnswerSettings, Question, answer_and_write, with_cache

KEYS = ("category", "subcategory", "set_id", "figure_id", "question_id")


@stage("hallusionbench-questions")
def questions(settings: HbQuestionSettings, out: Path, items_out: Path) -> dict[str, Any]:
    """The questions of the subset (JSONL, file order) and their figures' items."""
    from halluscope.benchmarks.hallusionbench import data
    from halluscope.benchmarks.hallusionbench.questions import load_questions
    from halluscope.data.fetch import resolve_input

    every = load_questions(resolve_input(settings.questions))
    answered = resolve_input(settings.answered) if settings.answered else None
    chosen = data.select(every.values(), settings.subset, answered)
    write_jsonl(items_out, data.items(chosen, settings.images, settings.replay_only))
    write_jsonl(out, [data.question_row(q) for q in chosen])
    return {"questions": len(chosen), "of": len(every), "subset": settings.subset}


@stage("hallusionbench-answers")
def answers(settings: AnswerSettings, items: Path, questions: Path, cache: Path, out: Path) -> None:
    """One model's answers to every question of the subset, with its figure when it has one,
    through the response cache; records in the format of the upstream result sample."""
    settings = with_cache(settings, cache)
    rows = read_jsonl(questions)
    _check_figures(settings, items, rows)
    answer_and_write(
        items,
        settings,
        rows,
        lambda q: Question(
            q["image_id"],
            f"hallusionbench/{q['id']}",
            q["question"],
            # the five ids: a replay recording in the sample's format is keyed by them; a
            # question without a figure is text-only by design (an LVLM answers from the text)
            {"id": q["id"], **{key: q[key] for key in KEYS}, "text_only": q["visual_input"] == "0"},
            {key: q[key] for key in ("gt_answer", "visual_input", "category", "figure_id")},
        ),
        lambda q, r: {
            **{key: q[key] for key in (*KEYS, "visual_input", "question", "gt_answer")},
            "model": settings.llm.model_id,
            "model_prediction": r.text,
            "meta": r.meta,
        },
        out,
        task="hallusionbench",
        what="HallusionBench answers",
    )


def _check_figures(settings: AnswerSettings, items: Path, rows: list[dict[str, Any]]) -> None:
    """A question with a figure whose item has no image (``data.images`` unset, every model a
    replay model) is answered only by a replay model, which reads recorded answers."""
    from halluscope.io import InputError
    from halluscope.stages.data import load_items

    if settings.llm.spec.get("backend") == "replay":
        return
    loaded = load_items(items)
    for q in rows:
        if q["visual_input"] != "0" and not loaded[q["image_id"]].get("image"):
            raise InputError(
                f"{items}: question {q['id']} has a figure but its item {q['image_id']} has no "
                f"image; model {settings.llm.model_id!r} ({settings.llm.spec.get('backend')}) "
                "needs it: set data.images to the folder holding upstream's hallusion_bench/ "
                "(only a replay model answers without the figures)"
            )


def _llm_judge(settings: HbScoreSettings, cache: Path) -> Any:
    """The reference's LLM judge of ``settings.llm`` through the response cache ``cache``."""
    from halluscope.benchmarks.hallusionbench.llm_judge import JudgeModel, LLMJudge
    from halluscope.models.base import make_backend
    from halluscope.models.cache import ResponseCache

    llm = settings.llm
    assert llm is not None
    return LLMJudge(
        model=JudgeModel(llm.model_id, llm.spec),
        backend=make_backend(llm.spec, model_name=llm.model_id),
        cache=ResponseCache(cache, mode=llm.cache_mode),  # type: ignore[arg-type]
        params=dict(llm.params),
        prompt_version=settings.judge_prompt,
        batch_size=llm.batch_size,
    )


def _published(settings: HbScoreSettings, doc: dict[str, Any]) -> dict[str, Any] | None:
    """The published numbers of the model ``hallusionbench.published`` names for this one,
    beside ours (None: it names none), as ``halluscope hallusionbench --model`` sets them."""
    from halluscope.benchmarks.hallusionbench import leaderboard as lb
    from halluscope.benchmarks.hallusionbench.sources import LEADERBOARD
    from halluscope.data.fetch import resolve_input

    name = settings.published.get(str(doc["model"]))
    if name is None:
        return None
    rows = [*lb.readme_rows(), *lb.leaderboard_rows(resolve_input(LEADERBOARD))]
    return lb.comparison(doc, name, f"hallusionbench.published names {name} for it", rows)


@stage("hallusionbench-score")
def score(settings: HbScoreSettings, answers: Path, cache: Path, out: Path) -> dict[str, Any]:
    """aAcc, fAcc, qAcc and the reference's other numbers of one model's answers, judged by
    rule or by the LLM judge, with each answer's verdict (for the explorer page) and each
    number's interval (the question set resampled: :mod:`.intervals`), as the hand-check
    command gives them."""
    from halluscope.benchmarks.hallusionbench import judge
    from halluscope.benchmarks.hallusionbench.intervals import UNIT, hallusionbench_intervals
    from halluscope.benchmarks.hallusionbench.questions import (
        key_text,
        load_answers,
        load_questions,
    )
    from halluscope.benchmarks.hallusionbench.scoring import (
        judge_answers,
        llm_judgments,
        result,
        rule_judgments,
    )
    from halluscope.data.fetch import resolve_input
    from halluscope.hand_check_intervals import attach

    every = load_questions(resolve_input(settings.questions))
    answered = load_answers(answers, every)
    if settings.judge == "llm":
        judgments = llm_judgments(answered, _llm_judge(settings, cache))
    else:
        judgments = rule_judgments(answered)
    records = judge_answers(answered, judgments)
    doc = result(answered, len(every), judgments, records)
    rows = read_jsonl(answers)
    doc["model"] = rows[0]["model"] if rows else None
    doc["leaderboard"] = _published(settings, doc)
    doc["answers"] = [
        {
            "id": key_text(a.question.key),
            "said": judge.extract(a.prediction) if settings.judge == "rule" else None,
            "verdict": record.verdict,
            "correct": record.correct,
        }
        for a, record in zip(answered, records, strict=True)
    ]
    intervals = replace(settings.interval_settings(), unit=UNIT)
    attach(doc, hallusionbench_intervals(records, doc["splits"], intervals), intervals)
    write_json(out, doc)
    return {"subset": doc["subset"], "aAcc": doc["aAcc"], "n_uncertain": doc["n_uncertain"]}
