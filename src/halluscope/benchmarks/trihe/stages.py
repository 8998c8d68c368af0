"""Tri-HE stages: questions -> answers per model -> triplets -> judgements -> Hallu_Q / Hallu_I.

The pipeline of Tri-HE (Wu et al., arXiv:2410.23114, §3.3) on any backend:

1. ``questions``: the benchmark's questions with their reference triplets (demo:
   ``data/demo/trihe_questions.yaml``, every reference triplet one of the image's relations).
2. ``answers``: each model answers each question with the image (the paper's prompt is the
   question itself, Appendix A.4), through the response cache. ``mitigation="describe"`` is the
   paper's triplet-description mitigation (§5.4, "Triplet + Eyes-Close"): the model first
   describes the image as (subject, relation, object) triplets guided by the question
   (:data:`DESCRIBE_PROMPT`, with the image), then answers from that description alone
   (:data:`ANSWER_PROMPT`, text only, no image). Prompts are halluscope's wording of Figure 4.
3. ``triplets``: knowledge-graph extraction by an LLM (:mod:`halluscope.benchmarks.trihe.triplets`).
4. ``judge``: every triplet judged against the image's scene graph (demo: the image's
   ``relations``) by each judge of ``judges`` (:mod:`halluscope.benchmarks.trihe.metric`): ``slots``
   (relation-aware similarity), ``similarity`` (the released "NLI judge"), ``nli`` (a real NLI
   cross-encoder, ``nli_model``), ``llm`` (the paper's LLM judge through any chat model). The
   object/relation split comes from the LLM judge's reply for ``llm`` and from the paper's
   definitions (:func:`~halluscope.benchmarks.trihe.metric.object_attribution`) for the others. Then
   Hallu_Q / Hallu_I per judge (:func:`~halluscope.benchmarks.trihe.metric.hallucination_rates`).

Answers of simulated LVLMs keep the sim's record of what it injected (``meta``), and the scores
file counts it under ``injected`` so that tests and readers can compare measured with injected.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.io import InputError, read_jsonl, write_json, write_jsonl
from halluscope.settings import IntervalParams, StageSettings, derived, param, plain
from halluscope.stage_command import paired, stage
from halluscope.stages.answering import AnswerSettings, resolve, with_cache
from halluscope.stages.data import load_items
from halluscope.stages.llm import LLMSettings

MITIGATIONS = ("none", "describe")
JUDGES = ("slots", "similarity", "nli", "llm")

DESCRIBE_PROMPT = (
    "Describe the image as a list of (subject, relation, object) triplets, one per line, written "
    "as (subject, relation, object). List the objects and relations you need to answer this "
    "question: {question}"
)
ANSWER_PROMPT = (
    "Here is a description of an image as (subject, relation, object) triplets:\n{description}\n"
    "You cannot see the image. Using only this description, answer the question: {question}"
)


# ------------------------------------------------------------------------------ configuration


@dataclass(frozen=True)
class TriheQuestionSettings(StageSettings):
    """What the questions stage reads from params: ``trihe.questions``, the demo's YAML or
    Tri-HE's ``tri-he.json`` (a registered data file or a path)."""

    questions: str = param("trihe.questions")


@dataclass(frozen=True)
class TriheAnswerSettings(AnswerSettings):
    """The answers stage's settings (:class:`AnswerSettings`) and ``trihe.mitigation``."""

    mitigation: str = "none"

    @classmethod
    def from_config(cls, config: Mapping[str, Any], model: str) -> TriheAnswerSettings:
        llm = AnswerSettings.from_config(config, model).llm
        return cls(llm, mitigation=config["trihe"]["mitigation"])


def _extractor_llm(config: Mapping[str, Any]) -> LLMSettings | None:
    """The triplet extractor's LLM (``trihe.extractor.llm``), for method ``llm`` only."""
    ext = config["trihe"]["extractor"]
    if ext["method"] != "llm":
        return None
    if not isinstance(ext.get("llm"), Mapping):
        raise ValueError("params.yaml: trihe.extractor.method llm needs trihe.extractor.llm")
    return LLMSettings.from_block(config, ext["llm"], "trihe.extractor.llm")


@dataclass(frozen=True)
class TripletSettings(StageSettings):
    """What the triplet stage reads from params (``trihe.extractor``): the method (``llm`` or
    the sim-template ``rule``), the unit (a sentence or a whole answer) and, for ``llm``, the
    extractor LLM (``trihe.extractor.llm``)."""

    method: str = param("trihe.extractor.method")
    unit: str = param("trihe.extractor.unit")
    llm: LLMSettings | None = derived(_extractor_llm, default=None)


def _nli_model(config: Mapping[str, Any]) -> str | None:
    """``trihe.judge.nli_model`` when the judges include ``nli`` (which needs it)."""
    trihe = config["trihe"]
    if "nli" not in plain(trihe["judges"]):
        return None
    if not trihe["judge"].get("nli_model"):
        raise ValueError("params.yaml: trihe.judges has 'nli' but no trihe.judge.nli_model")
    return trihe["judge"]["nli_model"]


def _judge_llm(config: Mapping[str, Any]) -> LLMSettings | None:
    """``trihe.judge.llm`` when the judges include ``llm`` (which needs it)."""
    trihe = config["trihe"]
    if "llm" not in plain(trihe["judges"]):
        return None
    if not isinstance(trihe["judge"].get("llm"), Mapping):
        raise ValueError("params.yaml: trihe.judges has 'llm' but trihe.judge.llm is unset")
    return LLMSettings.from_block(config, trihe["judge"]["llm"], "trihe.judge.llm")


@dataclass(frozen=True)
class JudgeSettings(IntervalParams):
    """What the judge stage reads from params (``trihe.judges``, ``trihe.judge``,
    ``trihe.unattributed``, ``intervals``): the judges, the sentence encoder and thresholds, the
    NLI model and LLM settings of the judges that need them, and how the rates' intervals are
    computed."""

    judges: list[str] = param("trihe.judges")
    encoder: str = param("trihe.judge.encoder")
    keep_threshold: float = param("trihe.judge.keep_threshold")
    top_k: int = param("trihe.judge.top_k")
    threshold: float = param("trihe.judge.threshold")
    slot_threshold: float = param("trihe.judge.slot_threshold")
    object_threshold: float = param("trihe.judge.object_threshold")
    unattributed: str = param("trihe.unattributed")
    nli_model: str | None = derived(_nli_model, default=None)
    llm: LLMSettings | None = derived(_judge_llm, default=None)


def check_config(config: Mapping[str, Any]) -> None:
    """Cross-references of the ``trihe`` section (model ids), checked when the DAG is built."""
    if config["trihe"]["enabled"]:
        TripletSettings.from_config(config)
        JudgeSettings.from_config(config)


# ---------------------------------------------------------------------------------- questions


@stage("trihe-questions")
def questions(settings: TriheQuestionSettings, items: Path, out: Path) -> None:
    """Tri-HE questions (checked against the items), as JSONL.

    ``settings.questions``: the demo's YAML, or Tri-HE's ``tri-he.json`` (a registered data file
    or a path); for the latter only the images among the items are kept (``data.limit``).
    """
    from halluscope.data.fetch import resolve_input

    by_id = load_items(items)
    path = resolve_input(settings.questions)
    if path.suffix == ".json":
        rows = released_questions(path, by_id)
    else:
        from halluscope.benchmarks.trihe.data import load_trihe_questions

        rows = load_trihe_questions(path, by_id)
    write_jsonl(out, rows)


def released_questions(path: Path, items: Mapping[str, Mapping[str, Any]]) -> list[dict]:
    """Questions of ``tri-he.json`` for the images among ``items``, in file order.

    ``question_id`` = ``"<image_id>/<index in the image's instance list>"``. Repaired triplet
    strings are used as repaired; a string that cannot be parsed is dropped from the references
    and printed (the loader reports each one with its image and position).
    """
    from halluscope.benchmarks.trihe.data import load_trihe

    data = load_trihe(path)
    for bad in data.malformed:
        print(
            f"{path}: image {bad.image_id} {bad.where}: unparseable triplet {bad.raw!r} "
            f"({bad.reason}); left out of the references"
        )
    rows = []
    for image in data.images:
        if image.image_id not in items:
            continue
        for q in image.questions:
            rows.append(
                {
                    "question_id": f"{image.image_id}/{q.question_id}",
                    "image_id": image.image_id,
                    "question": q.question,
                    "answer": q.answer,
                    "triplets": [[t.subject, t.relation, t.object] for t in q.triplets],
                }
            )
    if not rows:
        raise InputError(f"{path}: no question for the {len(items)} images of the dataset")
    return rows


# ------------------------------------------------------------------------------------ answers


@stage("trihe-answers")
def answers(
    settings: TriheAnswerSettings, items: Path, questions: Path, cache: Path, out: Path
) -> None:
    """Tri-HE answers of one model, through the response cache.

    Each question answered directly, or describe-then-answer (``settings.mitigation``)."""
    from halluscope.models.base import (
        Request,
        image_request,
        item_answer_key,
        make_backend,
        user_message,
    )

    settings = with_cache(settings, cache)
    mitigation = settings.mitigation
    if mitigation not in MITIGATIONS:
        raise InputError(f"unknown Tri-HE mitigation {mitigation!r}; valid: {MITIGATIONS}")
    llm = settings.llm
    model_id, params, template_version = llm.model_id, dict(llm.params), llm.template_version
    by_id = load_items(items)
    backend = make_backend(llm.spec, model_name=model_id, answer_keys=True)
    qs = read_jsonl(questions)
    common = {
        "cache_dir": settings.cache_dir,
        "cache_mode": llm.cache_mode,
        "batch_size": llm.batch_size,
    }
    first_task = "trihe" if mitigation == "none" else "trihe-describe"
    first = [
        image_request(
            by_id[q["image_id"]],
            f"{model_id}/trihe/{first_task}/{q['question_id']}",
            q["question"] if mitigation == "none" else DESCRIBE_PROMPT.format(**q),
            params=params,
            task=first_task,
            meta={"question_id": q["question_id"]},
            answer_key=item_answer_key(
                by_id[q["image_id"]], question=q["question"], triplets=q["triplets"]
            ),
        )
        for q in qs
    ]
    responses = resolve(
        backend, first, template_version=template_version, what="Tri-HE answers", **common
    )
    descriptions: list[str | None] = [None] * len(qs)
    if mitigation == "describe":
        descriptions = [r.text for r in responses]
        second = [
            Request(
                request_id=f"{model_id}/trihe/trihe-answer/{q['question_id']}",
                messages=(user_message(ANSWER_PROMPT.format(description=d, **q)),),
                params=params,
                task="trihe-answer",
                meta={"question_id": q["question_id"]},
            )
            for q, d in zip(qs, descriptions, strict=True)
        ]
        final = resolve(
            backend, second, template_version=template_version, what="Tri-HE answers", **common
        )
    else:
        final = responses
    records = []
    for q, first_r, final_r, description in zip(qs, responses, final, descriptions, strict=True):
        record = {
            "question_id": q["question_id"],
            "image_id": q["image_id"],
            "model": model_id,
            "mitigation": mitigation,
            "text": final_r.text,
            "meta": first_r.meta,  # the sim's injected truth sits on the (first) image request
        }
        if description is not None:
            record["description"] = description
        records.append(record)
    write_jsonl(out, records)


# ----------------------------------------------------------------------------------- triplets


@stage("trihe-triplets")
def triplets(settings: TripletSettings, answers: Path, cache: Path, out: Path) -> dict:
    """Tri-HE triplets of every answer (LLM or the sim-template rule), with counts for the log."""
    from halluscope.benchmarks.trihe.triplets import TripletExtractor

    method = settings.method
    kwargs: dict[str, Any] = {"unit": settings.unit}
    if method == "llm":
        from halluscope.models.base import make_backend
        from halluscope.models.cache import ResponseCache

        llm = settings.llm
        if llm is None:
            raise ValueError("trihe.extractor: the llm method needs the extractor LLM settings")
        kwargs.update(
            backend=make_backend(llm.spec, model_name=llm.model_id),
            cache=ResponseCache(cache, mode=llm.cache_mode),
            gen_params=dict(llm.params),
            template_version=llm.template_version,
            constrained=llm.json_schema,
            batch_size=llm.batch_size,
        )
    extractor = TripletExtractor(method, **kwargs)
    rows = read_jsonl(answers)
    fields = extractor.extract([r["text"] for r in rows])
    write_jsonl(
        out,
        [
            {"question_id": r["question_id"], "image_id": r["image_id"], **f, "method": method}
            for r, f in zip(rows, fields, strict=True)
        ],
    )
    return dict(extractor.stats)


# -------------------------------------------------------------------------------------- judge


def _vocabulary(item: Mapping[str, Any]) -> list[str]:
    names = [*item.get("gt_objects", []), *item.get("other_objects", [])]
    names += [name for t in item.get("relations", []) for name in (t[0], t[2])]
    return sorted({str(n) for n in names})


def _llm_judge(
    settings: JudgeSettings,
    cache_dir: Path,
    cases: Sequence[tuple[list, list[str], list[str]]],
) -> list[tuple[str, str | None]]:
    """LLM-judge replies (judgement, attribution) for (references, objects, claim) cases."""
    from halluscope.benchmarks.trihe.metric import (
        JUDGE_REPLY_SCHEMA,
        judge_messages,
        parse_judge_reply,
    )
    from halluscope.models.base import Request, make_backend

    llm = settings.llm
    if llm is None:
        raise ValueError("trihe.judges has 'llm' but trihe.judge.llm is unset")
    rule = llm.reply_rule
    backend = make_backend(llm.spec, model_name=llm.model_id)
    params = dict(llm.params)
    if rule == "json":
        params["json_schema"] = JUDGE_REPLY_SCHEMA
    requests = [
        Request(
            request_id=f"trihe-judge/{i}",
            messages=tuple(judge_messages(refs, objects, claim, rule)),
            params=params,
            task="chat",
            meta={"stage": "trihe-judge"},
        )
        for i, (refs, objects, claim) in enumerate(cases)
    ]
    responses = resolve(
        backend,
        requests,
        cache_dir=cache_dir,
        cache_mode=llm.cache_mode,
        template_version=f"{llm.template_version}/trihe-judge-1",
        batch_size=llm.batch_size,
        what="LLM-judge replies",
    )
    return [
        (reply.judgment, reply.error)
        for reply in (parse_judge_reply(r.text, rule) for r in responses)
    ]


@stage("trihe-judge")
def judge(
    settings: JudgeSettings,
    items: Path,
    answers: list[Path],
    triplets: list[Path],
    cache: Path,
    out_judgments: list[Path],
    out_scores: list[Path],
) -> None:
    """Tri-HE judgements and Hallu_Q / Hallu_I of one model or more (paths paired by position).

    Each model's (answers, triplets) judged in turn: one process loads the encoder once."""
    models = paired(
        answers=answers, triplets=triplets, out_judgments=out_judgments, out_scores=out_scores
    )
    for answers_path, triplets_path, judgments_path, scores_path in models:
        scores = judge_model(
            settings, items, answers_path, triplets_path, cache, judgments_path, scores_path
        )
        print(json.dumps(scores["extraction"], sort_keys=True), file=sys.stderr)


def judge_model(
    settings: JudgeSettings,
    items_path: Path,
    answers_path: Path,
    triplets_path: Path,
    cache_dir: Path,
    out_judgments: Path,
    out_scores: Path,
) -> dict[str, Any]:
    """Judge every extracted triplet with every configured judge; write judgements and rates,
    each rate with its interval (the image resampled: :mod:`.intervals`)."""
    from halluscope.benchmarks.trihe import metric as m
    from halluscope.benchmarks.trihe.data import Triplet
    from halluscope.benchmarks.trihe.intervals import trihe_intervals
    from halluscope.benchmarks.trihe.judges import (
        CachedEncoder,
        NLIJudge,
        SimilarityJudge,
        SlotSimilarityJudge,
        shared_sentence_model,
    )
    from halluscope.hand_check_intervals import attach

    judges = list(settings.judges)
    unknown = [j for j in judges if j not in JUDGES]
    if unknown or not judges:
        raise InputError(f"unknown Tri-HE judge(s) {unknown}; valid: {', '.join(JUDGES)}")
    items = load_items(items_path)
    rows = read_jsonl(triplets_path)
    encoder = None
    if {"slots", "similarity", "nli"} & set(judges):
        encoder = CachedEncoder(shared_sentence_model(settings.encoder))
    judge_objects: dict[str, Any] = {}
    if "slots" in judges:
        threshold = settings.slot_threshold
        judge_objects["slots"] = SlotSimilarityJudge(encoder, threshold=threshold)
    if "similarity" in judges or "nli" in judges:
        judge_objects["similarity"] = SimilarityJudge(
            encoder,
            keep_threshold=settings.keep_threshold,
            top_k=settings.top_k,
            threshold=settings.threshold,
        )
    if "nli" in judges:
        judge_objects["nli"] = NLIJudge(
            settings.nli_model,
            threshold=settings.threshold,
            retriever=judge_objects["similarity"],
        )
    cases = [
        (
            [tuple(t) for t in row["triplets"]],
            [Triplet(*[str(x) for x in t]) for t in items[row["image_id"]].get("relations", [])],
        )
        for row in rows
    ]
    for name in ("slots", "similarity"):  # batched encodings: the loop then hits the cache
        if name in judge_objects:
            judge_objects[name].prefetch(cases)
    per_row: list[dict[str, Any]] = [{} for _ in rows]
    for row, out in zip(rows, per_row, strict=True):
        item = items[row["image_id"]]
        references = [Triplet(*[str(x) for x in t]) for t in item.get("relations", [])]
        claims = [tuple(t) for t in row["triplets"]]
        vocabulary = _vocabulary(item)
        for name in judges:
            if name == "llm" or not claims:
                continue
            verdicts = judge_objects[name].judge(claims, references)
            judgments = [v.judgment for v in verdicts]
            errors = m.object_attribution(
                claims, judgments, vocabulary, encoder, settings.object_threshold
            )
            out[name] = {
                "judgments": judgments,
                "errors": errors,
                "scores": [round(v.score, 6) for v in verdicts],
            }
    if "llm" in judges:
        cases, where = [], []
        for index, row in enumerate(rows):
            item = items[row["image_id"]]
            refs = [list(t) for t in item.get("relations", [])]
            for claim in row["triplets"]:
                cases.append((refs, _vocabulary(item), list(claim)))
                where.append(index)
        replies = _llm_judge(settings, cache_dir, cases) if cases else []
        for index in range(len(rows)):
            per_row[index]["llm"] = {"judgments": [], "errors": []}
        for index, (judgment, error) in zip(where, replies, strict=True):
            per_row[index]["llm"]["judgments"].append(judgment)
            per_row[index]["llm"]["errors"].append(error if judgment == "no" else None)
    records = []
    for row, found in zip(rows, per_row, strict=True):
        empty = {"judgments": [], "errors": [], "scores": []}
        records.append(
            {
                "question_id": row["question_id"],
                "image_id": row["image_id"],
                "triplets": row["triplets"],
                "judges": {name: found.get(name, empty) for name in judges},
            }
        )
    write_jsonl(out_judgments, records)
    intervals = settings.interval_settings()  # the image resampled, as halluscope trihe does
    rates = {}
    for name in judges:
        questions_j = [
            m.QuestionJudgments(
                r["image_id"],
                r["question_id"],
                tuple(r["judges"][name]["judgments"]),
                tuple(r["judges"][name]["errors"]),
            )
            for r in records
        ]
        rates[name] = m.hallucination_rates(questions_j, unattributed=settings.unattributed)
        found = trihe_intervals(questions_j, rates[name], settings.unattributed, intervals)
        attach(rates[name], found, intervals)
    answers_rows = read_jsonl(answers_path)
    scores = {
        "model": answers_rows[0]["model"] if answers_rows else None,
        "mitigation": answers_rows[0]["mitigation"] if answers_rows else None,
        "primary": judges[0],
        "judges": rates,
        "extraction": {
            "questions": len(rows),
            "questions_without_triplet": sum(not r["triplets"] for r in rows),
            "triplets": sum(len(r["triplets"]) for r in rows),
            "invalid": sum(len(r.get("invalid", [])) for r in rows),
            "method": rows[0].get("method") if rows else None,
        },
        "injected": _injected(answers_rows),
    }
    write_json(out_scores, scores)
    return scores


def _injected(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """What a simulated LVLM injected (from its answers' meta), ``None`` for other models."""
    metas = [r.get("meta") or {} for r in rows]
    if not metas or not all("triplets" in meta for meta in metas):
        return None
    said = [t for meta in metas for t in meta["triplets"]]
    n = len(said)
    n_obj = sum(t.get("error") == "object" for t in said)
    n_rel = sum(t.get("error") == "relation" for t in said)
    return {
        "triplets": n,
        "object_errors": n_obj,
        "relation_errors": n_rel,
        "object_rate": n_obj / n if n else None,
        "relation_rate": n_rel / n if n else None,
    }
