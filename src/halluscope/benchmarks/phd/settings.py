"""PhD's settings: what its rules read from params (``phd``, ``tables``, ``figures``)."""

from __future__ import annotations

from dataclasses import dataclass

from halluscope.settings import StageSettings, param


@dataclass(frozen=True)
class PromptSettings(StageSettings):
    """The question file (the demo's YAML, or a released JSON file: a registered data file or a
    path) and the modes, in order."""

    questions: str = param("phd.questions")
    modes: list[str] = param("phd.modes")


@dataclass(frozen=True)
class TableSettings(StageSettings):
    """The models (rows), the modes, the decimals and the profile (labels)."""

    models: list[str] = param("generate.models")
    modes: list[str] = param("phd.modes")
    decimals: int = param("tables.decimals")
    run: str = param("profile")


@dataclass(frozen=True)
class FigureSettings(StageSettings):
    """The models (panels), the modes and the PNG resolution."""

    models: list[str] = param("generate.models")
    modes: list[str] = param("phd.modes")
    dpi: int = param("figures.dpi")
