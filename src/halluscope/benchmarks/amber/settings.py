"""AMBER's settings: what its rules read from params (section ``amber``, absent = disabled)."""

from __future__ import annotations

from dataclasses import dataclass

from halluscope.settings import StageSettings, param


@dataclass(frozen=True)
class AmberPromptSettings(StageSettings):
    """The annotations file (``amber.annotations``: a registered data file or a path)."""

    annotations: str = param("amber.annotations")


@dataclass(frozen=True)
class AmberScoreSettings(StageSettings):
    """The annotation, relation and safe-word files, and the optional word similarity
    (``amber.similarity``: none or glove) with its threshold."""

    annotations: str = param("amber.annotations")
    relation: str = param("amber.relation")
    safe_words: str = param("amber.safe_words")
    similarity: str = param("amber.similarity")
    threshold: float = param("amber.threshold")


@dataclass(frozen=True)
class AmberTableSettings(StageSettings):
    """The models (rows) and the profile (labels)."""

    models: list[str] = param("generate.models")
    run: str = param("profile")
