"""The model the score job loads when the judge is the LLM judge (its ``resources:``,
:mod:`halluscope.resources`); none with the rule judge."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.resources import Needs, llm_needs


def _score(config: Mapping[str, Any], wildcards: Any) -> list[Needs]:
    from halluscope.benchmarks.hallusionbench.settings import HbScoreSettings

    return llm_needs(HbScoreSettings.from_config(config).llm, "hallusionbench.llm")


RULE_NEEDS = {"hallusionbench_score": _score}
