"""Caption generation loop: one request per item, cache first, misses to the backend in batches.

Why this shape: the response cache stores every finished answer as soon as its batch returns, so a
killed run loses at most one batch and the rerun replays the rest; the JSONL artifact is written
once, atomically, at the end, so it either is complete or does not exist. The artifact holds only
what the model said (no hit/miss flags or timings), so a resumed run writes the same bytes as an
uninterrupted one.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from halluscope.io import write_jsonl
from halluscope.models.base import Backend, Request, image_request
from halluscope.models.cache import ResponseCache, is_success


def caption_request(
    item: Mapping[str, Any],
    instruction_id: str,
    instruction: str,
    model_name: str,
    gen_params: Mapping[str, Any],
) -> Request:
    """One item's request: the instruction as the single user turn, the image by path + hash."""
    return image_request(
        item,
        f"{model_name}/{instruction_id}/{item['image_id']}",
        instruction,
        params=gen_params,
        task="caption",
        meta={"instruction_id": instruction_id},
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
    the function raises after storing the successes, so a rerun sends only the failures again.
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

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=len(requests), desc=f"{model_name}/{instruction_id}", unit="img", file=sys.stderr
        )

    def advance(n: int) -> None:
        if bar is not None:
            bar.update(n)
            bar.set_postfix(hits=cache.hits - hits0, refresh=False)

    try:
        responses = cache.resolve(
            backend, requests, template_version, batch_size=batch_size, progress=advance
        )
    finally:
        if bar is not None:
            bar.close()

    failed = [r for r in responses if not is_success(r)]
    stats = {
        "items": len(requests),
        "hits": cache.hits - hits0,
        "misses": cache.misses - misses0 if cache.mode != "record" else len(requests),
        "failed": len(failed),
    }
    if failed:
        first = failed[0]
        raise RuntimeError(
            f"{len(failed)} of {len(requests)} requests failed for {model_name}/{instruction_id} "
            f"(first: {first.request_id!r}: {first.meta.get('error')!r}); the "
            f"{len(requests) - len(failed)} successful answers are cached, rerun to retry only "
            "the failures"
        )
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
