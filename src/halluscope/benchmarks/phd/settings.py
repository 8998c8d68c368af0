"""PhD's settings: what its rules read from params (``phd``, ``tables``, ``figures``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from halluscope.settings import StageSettings, plain


@dataclass(frozen=True)
class PromptSettings(StageSettings):
    """The question file (``phd.questions``: the demo's YAML, or a released JSON file, a
    registered data file or a path) and the modes, in order."""

    questions: str
    modes: list[str]

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> PromptSettings:
        phd = config["phd"]
        return cls(str(phd["questions"]), plain(phd["modes"]))


@dataclass(frozen=True)
class TableSettings(StageSettings):
    """The models (rows), the modes, the decimals and the profile (labels)."""

    models: list[str]
    modes: list[str]
    decimals: int
    run: str

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> TableSettings:
        models, modes = plain(config["generate"]["models"]), plain(config["phd"]["modes"])
        return cls(models, modes, config["tables"]["decimals"], config["profile"])


@dataclass(frozen=True)
class FigureSettings(StageSettings):
    """The models (panels), the modes and the PNG resolution."""

    models: list[str]
    modes: list[str]
    dpi: int

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> FigureSettings:
        models, modes = plain(config["generate"]["models"]), plain(config["phd"]["modes"])
        return cls(models, modes, config["figures"]["dpi"])
