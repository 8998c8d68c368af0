"""Tri-HE's report settings: what rules ``trihe_table`` and ``trihe_figure`` read from params
(the pipeline stages' settings are in :mod:`halluscope.benchmarks.trihe.stages`)."""

from __future__ import annotations

from dataclasses import dataclass

from halluscope.settings import StageSettings, param


@dataclass(frozen=True)
class TableSettings(StageSettings):
    """The models (rows), the judges, the decimals, the mitigation and the profile (labels)."""

    models: list[str] = param("generate.models")
    judges: list[str] = param("trihe.judges")
    decimals: int = param("tables.decimals")
    mitigation: str = param("trihe.mitigation")
    run: str = param("profile")


@dataclass(frozen=True)
class FigureSettings(StageSettings):
    """The models, the main judge (the first of ``trihe.judges``) and the PNG resolution."""

    models: list[str] = param("generate.models")
    judge: str = param("trihe.judges.0")
    dpi: int = param("figures.dpi")
