"""Generate stage: one model x one instruction over every item, through the response cache."""

from __future__ import annotations

from pathlib import Path

from halluscope.stages.data import load_items


def run(
    items_path: Path,
    model_id: str,
    model_spec: dict,
    instruction_id: str,
    instruction: str,
    generation: dict,
    template_version: str,
    cache_dir: Path,
    cache_mode: str,
    out: Path,
) -> dict:
    """Write ``results/responses/.../{instruction}.jsonl``; returns cache statistics."""
    from halluscope.models.base import make_backend
    from halluscope.models.cache import ResponseCache
    from halluscope.models.generate import generate_captions

    items = load_items(items_path)
    backend = make_backend(model_spec, items=items, model_name=model_id)
    cache = ResponseCache(cache_dir, mode=cache_mode)
    return generate_captions(
        backend=backend,
        cache=cache,
        items=list(items.values()),
        instruction_id=instruction_id,
        instruction=instruction,
        model_name=model_id,
        gen_params={k: v for k, v in generation.items() if k != "batch_size"},
        out_path=out,
        template_version=template_version,
        batch_size=int(generation.get("batch_size", 8)),
    )
