"""The model each job of NOPE's question generation loads (its ``resources:``,
:mod:`halluscope.resources`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.resources import Needs, llm_needs


def _generate(config: Mapping[str, Any], wildcards: Any) -> list[Needs]:
    from halluscope.benchmarks.nope.stages import NopeGeneratorSettings

    return llm_needs(NopeGeneratorSettings.from_config(config).llm, "nope.llm")


RULE_NEEDS = {"nope_generate": _generate}
