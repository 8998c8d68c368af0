"""The ``hf`` backend's decoding: the settings a request asks for, and what its answer's tokens
mean (``meta``: how many were generated, and why the answer ended)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

DEFAULT_MAX_NEW_TOKENS = 128


def generation_settings(params: Mapping[str, Any]) -> dict[str, Any]:
    """The decoding settings a request asks for, with defaults, validated (also a grouping key)."""
    max_new = params.get("max_new_tokens", DEFAULT_MAX_NEW_TOKENS)
    temperature = float(params.get("temperature", 0.0) or 0.0)
    top_p = float(params.get("top_p", 1.0) if params.get("top_p") is not None else 1.0)
    seed = params.get("seed", 0)
    if not isinstance(max_new, int) or isinstance(max_new, bool) or max_new < 1:
        raise ValueError(f"max_new_tokens must be a positive integer, got {max_new!r}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature!r}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    settings: dict[str, Any] = {"max_new_tokens": max_new, "seed": seed}
    if temperature == 0:
        # The sampling knobs get their neutral values: greedy ignores them, and a checkpoint's own
        # sampling defaults (merged in by ``generate``) would otherwise warn on every batch.
        settings.update(do_sample=False, num_beams=1, temperature=1.0, top_p=1.0, top_k=50)
    else:
        top_k = params.get("top_k", 0) or 0
        settings.update(do_sample=True, temperature=temperature, top_p=top_p, top_k=int(top_k))
    if params.get("repetition_penalty") is not None:
        settings["repetition_penalty"] = float(params["repetition_penalty"])
    return settings


def token_ids(*candidates: int | list[int] | None) -> set[int]:
    """The first token id (or list of ids) given, as a set; id 0 is an id, not a missing one."""
    for ids in candidates:
        if ids is not None:
            return set(ids) if isinstance(ids, list) else {int(ids)}
    return set()


def answer_meta(
    row: Sequence[int], eos_ids: set[int], max_new_tokens: int, forced_eos: set[int] = frozenset()
) -> dict[str, Any]:
    """``new_tokens`` up to and including the first eos; ``finish_reason`` ``stop`` when the
    model ended the answer, ``length`` when ``max_new_tokens`` cut it: no eos, or only the eos
    that a ``forced_eos_token_id`` config puts at the last allowed position. A row of a batch that
    stopped early is padded after its eos, so those pads never count."""
    stop = next((n for n, token in enumerate(row) if token in eos_ids), None)
    if stop is None:
        return {"new_tokens": min(len(row), max_new_tokens), "finish_reason": "length"}
    forced = stop == max_new_tokens - 1 and row[stop] in forced_eos
    return {"new_tokens": stop + 1, "finish_reason": "length" if forced else "stop"}
