"""The models each job of the caption pipeline's model-calling rules loads (their
``resources:``, :mod:`halluscope.resources`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.resources import Needs, answering_model, llm_needs, spec_needs


def _extract(config: Mapping[str, Any], wildcards: Any) -> list[Needs]:
    from halluscope.benchmarks.caos.captions.extract import instruction_llm

    return llm_needs(instruction_llm(config, wildcards.instruction), "extract.llm")


def _oracle(config: Mapping[str, Any], wildcards: Any) -> list[Needs]:
    oracle = config["oracle"]
    if oracle["method"] != "ensemble":
        return []
    return [spec_needs(config["models"][m], f"models.{m}") for m in oracle.get("members", [])]


def _embed(config: Mapping[str, Any], wildcards: Any) -> list[Needs]:
    spec = config["embed"]["specs"][wildcards.embedder]
    return [spec_needs(spec, f"embed.specs.{wildcards.embedder}")]


RULE_NEEDS = {"generate": answering_model, "extract": _extract, "oracle": _oracle, "embed": _embed}
