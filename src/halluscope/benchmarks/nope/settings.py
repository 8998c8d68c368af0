"""NOPE's settings of its scoring and report rules (the question generator's are
:class:`halluscope.benchmarks.nope.stages.GeneratorSettings`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from halluscope.settings import StageSettings, plain


@dataclass(frozen=True)
class ScoreSettings(StageSettings):
    """Whether METEOR 1.5 scores the answers (``nope.meteor``; needs Java)."""

    meteor: bool

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> ScoreSettings:
        return cls(config["nope"]["meteor"])


@dataclass(frozen=True)
class TableSettings(StageSettings):
    """The models (rows) and the decimals."""

    models: list[str]
    decimals: int

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> TableSettings:
        return cls(plain(config["generate"]["models"]), config["tables"]["decimals"])


@dataclass(frozen=True)
class FigureSettings(StageSettings):
    """The models and the PNG resolution."""

    models: list[str]
    dpi: int

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> FigureSettings:
        return cls(plain(config["generate"]["models"]), config["figures"]["dpi"])
