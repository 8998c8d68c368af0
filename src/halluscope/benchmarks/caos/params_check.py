"""CAOS's checks of the params beyond the schema: the ids its caption pipeline and tables name
(instructions, embedders, the extractor LLM, the oracle members) exist, and ``caos.k`` is at
most ``caos.k_max``. Run by :func:`halluscope.config.validate` before any job."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.config import ConfigError


def check(config: Mapping[str, Any], source: str) -> None:
    """Raise :class:`~halluscope.config.ConfigError` naming the first key of the caption
    pipeline or of CAOS that names nothing (an instruction, embedder or model id) or is out of
    range (``caos.k`` above ``caos.k_max``); ``source`` names the params file(s)."""
    gen = config["generate"]
    for key, ids in (
        ("generate.instructions", gen["instructions"]),
        ("tables.table1_instructions", config["tables"]["table1_instructions"]),
    ):
        for inst in ids:
            if inst not in config["instructions"]:
                raise ConfigError(
                    f"{source}: {key}: unknown instruction id '{inst}'; "
                    f"valid ids: {', '.join(sorted(config['instructions']))}",
                    key=key,
                )
    table1 = config["tables"]["table1_instructions"]
    if config["caos"].get("enabled", True) and not set(table1) & set(gen["instructions"]):
        raise ConfigError(
            f"{source}: tables.table1_instructions: none of {', '.join(table1)} is generated "
            f"(generate.instructions: {', '.join(gen['instructions'])}), so every Table 1 cell "
            "would be empty; name a generated instruction there",
            key="tables.table1_instructions",
        )
    for emb in config["embed"]["embedders"]:
        if emb not in config["embed"]["specs"]:
            raise ConfigError(
                f"{source}: embed.embedders: unknown embedder id '{emb}'; "
                f"valid ids: {', '.join(sorted(config['embed']['specs']))}",
                key="embed.embedders",
            )
    _check_llm_and_oracle(config, source)
    frequent = config["caos"]["frequent"]
    if isinstance(frequent, list):
        _check_frequent_list(frequent, config["caos"]["k_max"], source)
    if config["caos"]["k"] > config["caos"]["k_max"]:
        raise ConfigError(
            f"{source}: caos.k={config['caos']['k']} exceeds caos.k_max={config['caos']['k_max']}",
            key="caos.k",
        )


def _check_llm_and_oracle(config: Mapping[str, Any], source: str) -> None:
    """The extractor LLM and the oracle members must be model ids; LLM instructions known."""
    models = config["models"]
    valid = ", ".join(sorted(models))
    extract = config["extract"]
    if "llm" in str(extract.get("method", "")).split("+"):
        llm = extract.get("llm")
        if not isinstance(llm, Mapping):
            raise ConfigError(
                f"{source}: extract.method={extract['method']!r} needs an 'extract.llm' section "
                "(an LLM block: model, max_new_tokens, temperature, seed, ...)"
            )
        if llm["model"] not in models:
            raise ConfigError(
                f"{source}: extract.llm.model: unknown model id '{llm['model']}'; "
                f"valid ids: {valid}"
            )
        chosen = extract.get("llm_instructions", "all")
        for inst in [] if chosen == "all" else chosen:
            if inst not in config["instructions"]:
                raise ConfigError(
                    f"{source}: extract.llm_instructions: unknown instruction id '{inst}'; "
                    f"valid ids: {', '.join(sorted(config['instructions']))}"
                )
    oracle = config["oracle"]
    if oracle["method"] == "ensemble":
        members = oracle.get("members") or []
        if not members:
            raise ConfigError(f"{source}: oracle.method=ensemble needs oracle.members (model ids)")
        for member in members:
            if member not in models:
                raise ConfigError(
                    f"{source}: oracle.members: unknown model id '{member}'; valid ids: {valid}"
                )
        missing = [k for k in ("seed", "max_new_tokens", "temperature") if k not in oracle]
        if missing:
            raise ConfigError(f"{source}: oracle.method=ensemble needs oracle.{missing[0]}")


def _check_frequent_list(frequent: list[str], k_max: int, source: str) -> None:
    """An explicit K order: MSCOCO class names, each once, at least ``caos.k_max`` of them
    (the k-sweep reads the first k_max), so the score job never meets a short or odd list."""
    from halluscope.objects.coco import COCO_CLASSES

    unknown = [name for name in frequent if name not in COCO_CLASSES]
    if unknown:
        raise ConfigError(
            f"{source}: caos.frequent: {unknown[0]!r} is not an MSCOCO class name; expected "
            "class names such as 'person', 'dining table'",
            key="caos.frequent",
        )
    twice = next((name for i, name in enumerate(frequent) if name in frequent[:i]), None)
    if twice is not None:
        raise ConfigError(
            f"{source}: caos.frequent: {twice!r} is listed twice; expected each class once",
            key="caos.frequent",
        )
    if len(frequent) < k_max:
        raise ConfigError(
            f"{source}: caos.frequent lists {len(frequent)} classes, fewer than "
            f"caos.k_max={k_max}; list at least k_max classes or lower caos.k_max",
            key="caos.frequent",
        )
