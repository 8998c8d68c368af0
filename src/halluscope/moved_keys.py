"""``params.yaml`` keys that moved, so that an old params file fails naming what to rename.

Why a table: a moved key would otherwise fail as an "unknown key" of the schema, which says what
is allowed but not where the value went. :func:`moved_keys` finds every old key a params mapping
(params.yaml with its overlays merged) still sets; :func:`halluscope.config.validate` reports
them all before the schema check, so ``halluscope check-params`` and Snakemake say the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_NOPE_LLM = ("model", "max_new_tokens", "temperature", "batch_size", "stop_rule")
_TRIHE_LLM = (
    "model",
    "max_new_tokens",
    "temperature",
    "seed",
    "json_schema",
    "stop_rule",
    "batch_size",
)
_CACHE = ("template_version", "cache_mode")

MOVED: dict[str, str] = {
    **{f"nope.{k}": f"nope.llm.{k}" for k in (*_NOPE_LLM, *_CACHE)},
    **{f"trihe.extractor.{k}": f"trihe.extractor.llm.{k}" for k in (*_TRIHE_LLM, *_CACHE)},
}
"""Old dotted key -> new dotted key. Every LLM block is a mapping named ``llm`` with the keys of
``$defs/llm`` in ``config/params.schema.json``."""

NOTES: dict[str, str] = {
    "nope.model": "nope.seed stays: it picks the question templates; the LLM's seed is "
    "nope.llm.seed",
}
"""What else an old section needs, keyed by one of its moved keys."""


def _has(config: Mapping[str, Any], dotted: str) -> bool:
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def moved_keys(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(old key, new key) for every moved key ``config`` still sets, in :data:`MOVED` order."""
    return [(old, new) for old, new in MOVED.items() if _has(config, old)]


def moved_message(source: str, moved: list[tuple[str, str]]) -> str:
    """One error naming every old key and its new name, plus the notes of their sections."""
    renames = "; ".join(f"'{old}' -> '{new}'" for old, new in moved)
    notes = [NOTES[old] for old, _ in moved if old in NOTES]
    return f"{source}: moved key(s), rename them: {renames}" + "".join(f" ({n})" for n in notes)
