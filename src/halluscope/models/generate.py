"""Caption generation loop: one request per item, cache first, misses to the backend in batches.

Why this shape: the response cache stores every finished answer as soon as its batch returns, so a
killed run loses at most one batch and the rerun replays the rest; the JSONL artifact is written
once, atomically, at the end, so it either is complete or does not exist. The artifact holds only
what the model said (no hit/miss flags or timings), so a resumed run writes the same bytes as an
uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from halluscope.io import write_jsonl
from halluscope.models.answers import answer_all
from halluscope.models.base import Backend, Request, image_request, item_answer_key
from halluscope.models.cache import ResponseCache


def caption_request(
    item: Mapping[str, Any],
    instruction_id: str,
    instruction: str,
    model_name: str,
    gen_params: Mapping[str, Any],
) -> Request:
    """One item's request: the instruction as the single user turn, the image by path + hash
    (and its annotations as the answer key, for the backends that read one)."""
    return image_request(
        item,
        f"{model_name}/{instruction_id}/{item['image_id']}",
        instruction,
        params=gen_params,
        task="caption",
        meta={"instruction_id": instruction_id},
        answer_key=item_answer_key(item),
    )


def generate_captions(
    backend: Backend,
    cache: ResponseCache,
    items: Sequence[Mapping[str, Any]],
    instruction_id: str,
    instruction: str,
    model_name: str,
    gen_params: Mapping[str, Any],
    out_path: str | Path,
    template_version: str,
    batch_size: int = 8,
    progress: bool = True,
) -> dict[str, int]:
    """Caption every item and write ``results/responses/...jsonl`` (item order, sorted keys).

    Returns ``{"items", "hits", "misses", "failed"}``. Failed answers are never cached or written:
    the function raises (:class:`~halluscope.models.answers.AnswersFailed`) after storing the
    successes, so a rerun sends only the failures again.
    """
    requests = [
        caption_request(item, instruction_id, instruction, model_name, gen_params) for item in items
    ]
    seen: set[str] = set()
    for request in requests:
        if request.image_id in seen:
            raise ValueError(f"duplicate image_id {request.image_id!r} in the items of {out_path}")
        seen.add(request.image_id)  # type: ignore[arg-type]
    hits0, misses0 = cache.hits, cache.misses
    responses = answer_all(
        backend,
        requests,
        cache,
        template_version,
        batch_size=batch_size,
        what="requests",
        context=f" for {model_name}/{instruction_id}",
        progress=f"{model_name}/{instruction_id}" if progress else None,
    )
    stats = {
        "items": len(requests),
        "hits": cache.hits - hits0,
        "misses": cache.misses - misses0 if cache.mode != "record" else len(requests),
        "failed": 0,
    }
    write_jsonl(
        out_path,
        (
            {
                "image_id": request.image_id,
                "instruction_id": instruction_id,
                "model": model_name,
                "text": response.text,
                "meta": response.meta,
            }
            for request, response in zip(requests, responses, strict=True)
        ),
    )
    return stats
