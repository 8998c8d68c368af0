"""The LLM block of ``params.yaml`` as one typed value: :class:`LLMSettings`.

Why one type: object extraction, the oracle, NOPE generation, Tri-HE triplets and judges, and
every answers stage call a model the same way (a ``models:`` spec, request params, answers per
cache batch, a prompt template version, a cache mode). The block is declared once in
``config/params.schema.json`` (``$defs/generation`` and ``$defs/llm``), with its defaults; this
module reads those defaults from there, so no stage repeats one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from halluscope.settings import SCHEMA_PATH, params_schema, plain  # noqa: F401 (re-exported)

GENERATION_KEYS = ("max_new_tokens", "temperature", "seed")
"""The request params of a block (sent with every request, so they key the response cache)."""


def _defs() -> dict[str, Any]:
    return params_schema()["$defs"]


@functools.cache
def defaults() -> dict[str, Any]:
    """The ``default`` of every key of ``$defs/generation`` and ``$defs/llm`` in the schema."""
    return {
        key: spec["default"]
        for block in ("generation", "llm")
        for key, spec in _defs()[block]["properties"].items()
        if "default" in spec
    }


def generation_block(section: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of ``$defs/generation`` a params section sets (``oracle``: beside its method
    and members), for a rule to pass as one value; the job fills in the defaults."""
    return {k: section[k] for k in _defs()["generation"]["properties"] if k in section}


@dataclass(frozen=True)
class LLMSettings:
    """Who answers and how: the model (``model_id`` and its ``models:`` ``spec``), the request
    ``params`` (:data:`GENERATION_KEYS` and, when set, ``stop_rule``), the answers per cache
    batch, the template version and cache mode, and the reply options of the stages that read
    them (``json_schema``, ``grammar``, ``reply_rule``)."""

    model_id: str
    spec: Mapping[str, Any]
    params: Mapping[str, Any]
    batch_size: int
    template_version: str
    cache_mode: str
    json_schema: bool = field(default_factory=lambda: defaults()["json_schema"])
    grammar: str = field(default_factory=lambda: defaults()["grammar"])
    reply_rule: str = field(default_factory=lambda: defaults()["reply_rule"])

    @classmethod
    def from_block(
        cls,
        config: Mapping[str, Any],
        block: Mapping[str, Any],
        where: str,
        model: str | None = None,
    ) -> LLMSettings:
        """The settings of ``block`` (the dotted key ``where``, for errors), whose model is
        ``block["model"]`` or, for a block that serves several models (``generate``,
        ``oracle``), ``model``. An unknown model id fails naming the valid ones."""
        model_id = block.get("model") if model is None else model
        if model_id not in config["models"]:
            raise ValueError(
                f"params.yaml: {where}.model: unknown model id {model_id!r}; "
                f"valid ids: {', '.join(sorted(config['models']))}"
            )
        return cls.from_generation(model_id, config["models"][model_id], block)

    @classmethod
    def from_generation(
        cls, model_id: str, spec: Mapping[str, Any], block: Mapping[str, Any]
    ) -> LLMSettings:
        """The settings of one model asked with a generation block (the keys of
        ``$defs/generation`` and ``$defs/llm``; absent ones take the schema's defaults). A
        ``stop_rule`` of ``none`` stays out of ``params``, so blocks without one keep their
        cache keys."""
        value = {**defaults(), **plain(block)}
        params = {k: value[k] for k in GENERATION_KEYS if k in block}
        if value["stop_rule"] != "none":
            params["stop_rule"] = value["stop_rule"]
        return cls(
            model_id=str(model_id),
            spec=plain(spec),
            params=params,
            batch_size=int(value["batch_size"]),
            template_version=str(value["template_version"]),
            cache_mode=str(value["cache_mode"]),
            json_schema=bool(value["json_schema"]),
            grammar=str(value["grammar"]),
            reply_rule=str(value["reply_rule"]),
        )
