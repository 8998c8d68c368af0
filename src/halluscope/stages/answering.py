"""Shared plumbing of the stages that call models (POPE, Tri-HE, PhD, NOPE, the LLM stages).

Why a helper: every benchmark sends one request per question to any backend (built with
:func:`halluscope.models.base.image_request`, the question's ground truth in
``Request.answer_key``), resumes from the cache, and must never write a partial answer file:
:func:`resolve` is :func:`halluscope.models.answers.answer_all` over the stage's cache folder.
The answer key is part of the cache key of the backends that read it (test instruments), so
editing a label or a reference triplet re-asks them instead of replaying an answer made from the
old key; every other backend never sees it and keeps its cache keys.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from halluscope.models.base import Backend, Request, Response, reads_answer_key
from halluscope.settings import StageSettings
from halluscope.stages.llm import LLMSettings, generation_block


def resolve(
    backend: Backend,
    requests: Sequence[Request],
    *,
    cache_dir: Path,
    cache_mode: str,
    template_version: str,
    batch_size: int,
    what: str = "answers",
) -> list[Response]:
    """Answers in request order; raises (after caching the good ones) if any request failed."""
    from halluscope.models.answers import answer_all
    from halluscope.models.cache import ResponseCache

    cache = ResponseCache(cache_dir, mode=cache_mode)  # type: ignore[arg-type]
    return answer_all(backend, requests, cache, template_version, batch_size=batch_size, what=what)


@dataclass(frozen=True)
class AnswerSettings(StageSettings):
    """The typed settings of every benchmark's answers stage: who answers and how (``llm``: the
    model of ``models.<id>`` asked with the ``generate`` block) and the response cache folder
    (a path, not a param: the stage command sets it from ``--cache``)."""

    llm: LLMSettings
    cache_dir: Path | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any], model: str) -> AnswerSettings:
        block = generation_block(config["generate"])
        return cls(LLMSettings.from_block(config, block, "generate", model=model))

    @classmethod
    def jobs(cls, config: Mapping[str, Any]) -> list[dict[str, str]]:
        return [{"model": m} for m in config["generate"]["models"]]


AnswerSettingsT = TypeVar("AnswerSettingsT", bound=AnswerSettings)


def with_cache(settings: AnswerSettingsT, cache: Path) -> AnswerSettingsT:
    """``settings`` answering through the response cache folder ``cache``: a path the rule
    gives (``--cache``), not a param."""
    import dataclasses

    return dataclasses.replace(settings, cache_dir=cache)


@dataclass(frozen=True)
class Question:
    """One question about an item's image, as a benchmark's answers stage asks it: ``key`` is
    the request id after the model id (``"pope/<question_id>"``), ``truth`` the question's part
    of the answer key (the item's annotations are added)."""

    image_id: str
    key: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)
    truth: dict[str, Any] = field(default_factory=dict)


def answer_questions(
    items_path: Path,
    settings: AnswerSettings,
    questions: Sequence[Question],
    *,
    task: str,
    what: str,
) -> list[Response]:
    """Every question answered by one model, with its image, through the response cache (the
    one answers loop of POPE, PhD, NOPE and the packaged benchmarks); in question order."""
    from halluscope.models.base import image_request, item_answer_key, make_backend
    from halluscope.stages.data import load_items

    items = load_items(items_path)
    llm = settings.llm
    backend = make_backend(llm.spec, model_name=llm.model_id, answer_keys=True)
    requests = [
        image_request(
            items[q.image_id],
            f"{llm.model_id}/{q.key}",
            q.text,
            params=dict(llm.params),
            task=task,
            meta=q.meta,
            answer_key=item_answer_key(items[q.image_id], **q.truth),
        )
        for q in questions
    ]
    return resolve(
        backend,
        requests,
        cache_dir=settings.cache_dir,
        cache_mode=llm.cache_mode,
        template_version=llm.template_version,
        batch_size=llm.batch_size,
        what=what,
    )


def answer_and_write(
    items_path: Path,
    settings: AnswerSettings,
    rows: Sequence[dict[str, Any]],
    question: Callable[[dict[str, Any]], Question],
    record: Callable[[dict[str, Any], Response], dict[str, Any]],
    out: Path,
    *,
    task: str,
    what: str,
) -> None:
    """The answers stage of a benchmark: ``question(row)`` asked for every row of its questions
    file, ``record(row, response)`` written for each, in order (the benchmark only says how a
    row becomes a question and an answer becomes a record)."""
    from halluscope.io import write_jsonl

    responses = answer_questions(
        items_path, settings, [question(row) for row in rows], task=task, what=what
    )
    write_jsonl(out, [record(row, r) for row, r in zip(rows, responses, strict=True)])


def truth_version(
    backend: Backend, requests: Sequence[Request], template_version: str, keys: Sequence[str]
) -> str:
    """``template_version`` plus a digest of ``meta[keys]`` of every request, for a backend that
    reads answer keys; the plain ``template_version`` for any other backend.

    For hand-built request lists whose truth travels in ``meta`` (which the cache key leaves
    out); the stages put it in ``Request.answer_key``, which the cache keys itself.
    """
    if not reads_answer_key(backend):
        return template_version
    from halluscope.models.cache import canonical_json

    truth = [[r.request_id, [r.meta.get(k) for k in keys]] for r in requests]
    digest = hashlib.sha256(canonical_json(truth).encode("ascii")).hexdigest()[:12]
    return f"{template_version}/truth-{digest}"
