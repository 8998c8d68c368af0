"""Tri-HE's report settings: what rules ``trihe_table`` and ``trihe_figure`` read from params
(the pipeline stages' settings are in :mod:`halluscope.benchmarks.trihe.stages`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from halluscope.settings import StageSettings, plain


@dataclass(frozen=True)
class TableSettings(StageSettings):
    """The models (rows), the judges, the decimals, the mitigation and the profile (labels)."""

    models: list[str]
    judges: list[str]
    decimals: int
    mitigation: str
    run: str

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> TableSettings:
        trihe = config["trihe"]
        return cls(
            plain(config["generate"]["models"]),
            plain(trihe["judges"]),
            config["tables"]["decimals"],
            trihe["mitigation"],
            config["profile"],
        )


@dataclass(frozen=True)
class FigureSettings(StageSettings):
    """The models, the main judge (the first of ``trihe.judges``) and the PNG resolution."""

    models: list[str]
    judge: str
    dpi: int

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> FigureSettings:
        judge = config["trihe"]["judges"][0]
        return cls(plain(config["generate"]["models"]), judge, config["figures"]["dpi"])
