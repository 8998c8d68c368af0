"""Shared plumbing of the stages that call models (POPE, Tri-HE, PhD, NOPE, the LLM stages).

Why a helper: every benchmark sends one request per question to any backend (built with
:func:`halluscope.models.base.image_request`, the question's ground truth in
``Request.answer_key``), resumes from the cache, and must never write a partial answer file:
:func:`resolve` is :func:`halluscope.models.answers.answer_all` over the stage's cache folder.
The answer key is part of the cache key of the backends that read it (test instruments), so
editing a label or a reference triplet re-asks them instead of replaying an answer made from the
old key; every other backend never sees it and keeps its cache keys.

:func:`llm_settings` turns a ``params.yaml`` block naming an LLM (``model`` + generation params,
batch size, template version, cache mode) into the settings of an LLM stage (object extraction,
Tri-HE triplets and judge, NOPE generation), passed to the job as one tracked ``params:`` value.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from halluscope.models.base import Backend, Request, Response, reads_answer_key

GENERATION_KEYS = ("max_new_tokens", "temperature", "seed")
"""The generation params an LLM settings block may set (sent with every request)."""


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
class AnswerSettings:
    """Who answers and how: the model (``models.<id>``), its generation params (``generate``)
    and the response cache; the typed settings of every benchmark's answers stage."""

    model_id: str
    model_spec: dict[str, Any]
    generation: dict[str, Any]
    template_version: str
    cache_dir: Path
    cache_mode: str


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
    backend = make_backend(settings.model_spec, model_name=settings.model_id, answer_keys=True)
    params = generation_params(settings.generation)
    requests = [
        image_request(
            items[q.image_id],
            f"{settings.model_id}/{q.key}",
            q.text,
            params=params,
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
        cache_mode=settings.cache_mode,
        template_version=settings.template_version,
        batch_size=int(settings.generation.get("batch_size", 8)),
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


def generation_params(generation: dict[str, Any]) -> dict[str, Any]:
    """The request params of a ``generate``-style settings mapping (batch size is not one)."""
    return {k: v for k, v in generation.items() if k != "batch_size"}


def llm_settings(
    config: Mapping[str, Any], block: Mapping[str, Any], where: str, *, schema: bool = True
) -> dict[str, Any]:
    """The settings of an LLM stage from its ``params.yaml`` block (at ``where``, for errors).

    ``{"model_id", "spec" (the ``models:`` entry), "params" (the block's generation params of
    :data:`GENERATION_KEYS`), "batch_size" (default 4), "json_schema" (default true),
    "template_version" (default "v1"), "cache_mode" (default "live")}`` plus ``reply_rule`` when
    the block has one, ``grammar`` when it is not ``schema`` and, in ``params``, ``stop_rule``
    when it is not ``none`` (so blocks without them keep their settings and cache keys).
    ``schema=False`` (a stage that never constrains its replies) leaves
    ``json_schema`` out. An unknown model id fails naming the valid ones.
    """
    model = block.get("model")
    if model not in config["models"]:
        raise ValueError(
            f"params.yaml: {where}.model: unknown model id {model!r}; "
            f"valid ids: {', '.join(sorted(config['models']))}"
        )
    return {
        "model_id": model,
        "spec": dict(config["models"][model]),
        # stop_rule (a generation param, so it keys the cache) only when set: "none" = absent
        "params": {
            **{k: block[k] for k in GENERATION_KEYS if k in block},
            **(
                {"stop_rule": block["stop_rule"]}
                if block.get("stop_rule", "none") != "none"
                else {}
            ),
        },
        "batch_size": int(block.get("batch_size", 4)),
        **({"json_schema": bool(block.get("json_schema", True))} if schema else {}),
        "template_version": str(block.get("template_version", "v1")),
        "cache_mode": str(block.get("cache_mode", "live")),
        **({"reply_rule": block["reply_rule"]} if "reply_rule" in block else {}),
        **({"grammar": block["grammar"]} if block.get("grammar", "schema") != "schema" else {}),
    }
