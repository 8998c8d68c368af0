"""Tri-HE's report settings: what rules ``trihe_table`` and ``trihe_figure`` read from params
(the pipeline stages' settings are in :mod:`halluscope.benchmarks.trihe.stages`)."""

from __future__ import annotations

from dataclasses import dataclass

from halluscope import settings
from halluscope.settings import param


@dataclass(frozen=True)
class TriheTableSettings(settings.TableSettings):
    """The table's models, decimals and profile, the judges and the mitigation."""

    judges: list[str] = param("trihe.judges")
    mitigation: str = param("trihe.mitigation")


@dataclass(frozen=True)
class TriheFigureSettings(settings.FigureSettings):
    """The models, the PNG resolution and the main judge (the first of ``trihe.judges``)."""

    judge: str = param("trihe.judges.0")
