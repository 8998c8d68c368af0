"""PhD's settings: what its rules read from params (``phd``, ``tables``, ``figures``)."""

from __future__ import annotations

from dataclasses import dataclass

from halluscope import settings
from halluscope.settings import StageSettings, param


@dataclass(frozen=True)
class PhdPromptSettings(StageSettings):
    """The question file (the demo's YAML, or a released JSON file: a registered data file or a
    path) and the modes, in order."""

    questions: str = param("phd.questions")
    modes: list[str] = param("phd.modes")


@dataclass(frozen=True)
class PhdScoreSettings(settings.IntervalParams):
    """The intervals of the scores (``intervals``)."""


@dataclass(frozen=True)
class PhdTableSettings(settings.TableSettings):
    """The table's models, decimals and profile, and the modes."""

    modes: list[str] = param("phd.modes")


@dataclass(frozen=True)
class PhdFigureSettings(settings.FigureSettings):
    """The models (panels), the PNG resolution and the modes."""

    modes: list[str] = param("phd.modes")
