"""Answering benchmark questions through the response cache (shared by POPE, Tri-HE, PhD, NOPE).

Why a helper: every benchmark sends one request per question to any backend (built with
:func:`halluscope.models.base.image_request`), resumes from the cache, and must never write a
partial answer file. They also share one subtlety of the simulated LVLMs: a ``sim`` backend
answers from the answer key in ``Request.meta`` (it is a test instrument), and ``meta`` is not
part of the cache key. So for ``sim`` backends the template version gets a digest of the answer
keys of the whole run: editing a label or a reference triplet of the demo questions re-asks the
sim instead of replaying an answer made from the old key. Real backends never see ``meta`` and
keep the plain template version.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from halluscope.models.base import Backend, Request, Response


def truth_version(
    backend: Backend, requests: Sequence[Request], template_version: str, keys: Sequence[str]
) -> str:
    """``template_version`` (+ ``/sim-truth-<digest>`` of ``meta[keys]`` for a sim backend)."""
    if dict(backend.identity).get("backend") != "sim":
        return template_version
    from halluscope.models.cache import canonical_json

    truth = [[r.request_id, [r.meta.get(k) for k in keys]] for r in requests]
    digest = hashlib.sha256(canonical_json(truth).encode("ascii")).hexdigest()[:12]
    return f"{template_version}/sim-truth-{digest}"


def resolve(
    backend: Backend,
    requests: Sequence[Request],
    *,
    cache_dir: Path,
    cache_mode: str,
    template_version: str,
    batch_size: int,
    truth_keys: Sequence[str] = (),
    what: str = "answers",
) -> list[Response]:
    """Answers in request order; raises (after caching the good ones) if any request failed."""
    from halluscope.models.cache import ResponseCache

    version = truth_version(backend, requests, template_version, truth_keys)
    cache = ResponseCache(cache_dir, mode=cache_mode)  # type: ignore[arg-type]
    responses = cache.resolve(backend, requests, version, batch_size=batch_size)
    failed = [r.request_id for r in responses if r.meta.get("error")]
    if failed:
        raise RuntimeError(
            f"{len(failed)} {what} failed (first: {failed[0]}); "
            "answered ones are cached, rerun to retry"
        )
    return responses


def generation_params(generation: dict[str, Any]) -> dict[str, Any]:
    """The request params of a ``generate``-style settings mapping (batch size is not one)."""
    return {k: v for k, v in generation.items() if k != "batch_size"}
