"""The models each job of Tri-HE's model-calling rules loads besides its answering LVLM (their
``resources:``, :mod:`halluscope.resources`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.resources import ENCODER_NEEDS, Needs, llm_needs


def _triplets(config: Mapping[str, Any], wildcards: Any) -> list[Needs]:
    from halluscope.benchmarks.trihe.stages import TripletSettings

    return llm_needs(TripletSettings.from_config(config).llm, "trihe.extractor.llm")


def _judge(config: Mapping[str, Any], wildcards: Any) -> list[Needs]:
    from halluscope.benchmarks.trihe.stages import JudgeSettings

    settings = JudgeSettings.from_config(config)
    encoders = [ENCODER_NEEDS] * (1 + (settings.nli_model is not None))  # encoder, NLI model
    return encoders + llm_needs(settings.llm, "trihe.judge.llm")


RULE_NEEDS = {"trihe_triplets": _triplets, "trihe_judge": _judge}
