"""NOPE's settings of its scoring and report rules (the question generator's are
:class:`halluscope.benchmarks.nope.stages.NopeGeneratorSettings`)."""

from __future__ import annotations

from dataclasses import dataclass

from halluscope.settings import IntervalParams, StageSettings, param


@dataclass(frozen=True)
class NopeScoreSettings(IntervalParams):
    """Whether METEOR 1.5 scores the answers (needs Java), and the intervals (``intervals``)."""

    meteor: bool = param("nope.meteor")


@dataclass(frozen=True)
class NopeTableSettings(StageSettings):
    """The models (rows) and the decimals."""

    models: list[str] = param("generate.models")
    decimals: int = param("tables.decimals")


@dataclass(frozen=True)
class NopeFigureSettings(StageSettings):
    """The models and the PNG resolution."""

    models: list[str] = param("generate.models")
    dpi: int = param("figures.dpi")
