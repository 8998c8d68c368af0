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


def _answered(config: Mapping[str, Any]) -> str | None:
    """``hallusionbench.answered`` (the answers file whose questions are asked) for the subset
    ``answered``; not read otherwise."""
    if read(config, "hallusionbench.subset") != "answered":
        return None
    return read(config, "hallusionbench.answered", None)


def _replay_only(config: Mapping[str, Any]) -> bool:
    """Whether every model of ``generate.models`` is a replay model (recorded answers: the
    figures' items may go without an image when ``data.images`` is unset)."""
    models = config["generate"]["models"]
    return bool(models) and all(
        (config["models"].get(m) or {}).get("backend") == "replay" for m in models
    )


@dataclass(frozen=True)
class HbQuestionSettings(StageSettings):
    """The question file (a registered data file or a path), the subset asked (and the answers
    file of the subset ``answered``), the images folder of the questions with a figure, and
    whether only replay models answer (then a figure may go without its image)."""

    questions: str = param("hallusionbench.questions")
    subset: str = param("hallusionbench.subset")
    images: str | None = derived(_images, default=None)
    answered: str | None = derived(_answered, default=None)
    replay_only: bool = derived(_replay_only, default=False)


def _judge_llm(config: Mapping[str, Any]) -> LLMSettings | None:
    """``hallusionbench.llm`` when the judge is ``llm`` (which needs it)."""
    if read(config, "hallusionbench.judge") != "llm":
        return None
    block = config["hallusionbench"].get("llm")
    if not isinstance(block, Mapping):
        raise ValueError("params.yaml: hallusionbench.judge is llm but hallusionbench.llm is unset")
    return LLMSettings.from_block(config, block, "hallusionbench.llm")


@dataclass(frozen=True)
class HbScoreSettings(settings.IntervalParams):
    """The question file the answers are joined to (its count, 1,129, is the one the subset
    scored is stated against), the judge (``rule``, or ``llm`` with its model and prompt
    version), the models whose answers are a published model's (model id -> its name on the
    leaderboard: its published numbers go beside ours), and the intervals (``intervals``)."""

    questions: str = param("hallusionbench.questions")
    judge: str = param("hallusionbench.judge")
    judge_prompt: str = param("hallusionbench.judge_prompt")
    published: dict[str, str] = param("hallusionbench.published")
    llm: LLMSettings | None = derived(_judge_llm, default=None)


@dataclass(frozen=True)
class HbTableSettings(settings.TableSettings):
    """The table's models, decimals and profile."""


@dataclass(frozen=True)
class HbFigureSettings(settings.FigureSettings):
    """The models (bars) and the PNG resolution."""
