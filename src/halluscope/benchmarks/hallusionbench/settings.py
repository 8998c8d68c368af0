"""HallusionBench's settings: what its rules read from params (``hallusionbench``, ``data.images``,
``tables``, ``figures``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from halluscope import settings
from halluscope.settings import StageSettings, derived, param, read
from halluscope.stages.llm import LLMSettings


def _images(config: Mapping[str, Any]) -> str | None:
    """``data.images`` (the folder holding upstream's ``hallusion_bench/``) when the questions
    asked include those with a figure; not read for the text-only subset, which needs none."""
    if read(config, "hallusionbench.subset") == "text-only":
        return None
    return read(config, "data.images", None)


@dataclass(frozen=True)
class HbQuestionSettings(StageSettings):
    """The question file (a registered data file or a path), the subset asked, and the images
    folder of the questions with a figure."""

    questions: str = param("hallusionbench.questions")
    subset: str = param("hallusionbench.subset")
    images: str | None = derived(_images, default=None)


def _judge_llm(config: Mapping[str, Any]) -> LLMSettings | None:
    """``hallusionbench.llm`` when the judge is ``llm`` (which needs it)."""
    if read(config, "hallusionbench.judge") != "llm":
        return None
    block = config["hallusionbench"].get("llm")
    if not isinstance(block, Mapping):
        raise ValueError("params.yaml: hallusionbench.judge is llm but hallusionbench.llm is unset")
    return LLMSettings.from_block(config, block, "hallusionbench.llm")


@dataclass(frozen=True)
class HbScoreSettings(StageSettings):
    """The question file the answers are joined to (its count, 1,129, is the one the subset
    scored is stated against) and the judge (``rule``, or ``llm`` with its model and prompt
    version)."""

    questions: str = param("hallusionbench.questions")
    judge: str = param("hallusionbench.judge")
    judge_prompt: str = param("hallusionbench.judge_prompt")
    llm: LLMSettings | None = derived(_judge_llm, default=None)


@dataclass(frozen=True)
class HbTableSettings(settings.TableSettings):
    """The table's models, decimals and profile."""


@dataclass(frozen=True)
class HbFigureSettings(settings.FigureSettings):
    """The models (bars) and the PNG resolution."""
