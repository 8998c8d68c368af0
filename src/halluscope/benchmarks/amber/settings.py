"""AMBER's settings: what its rules read from params (section ``amber``, absent = disabled)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from halluscope.settings import StageSettings, param

#: AMBER's files when the section does not name them (registered data files).
FILES = {
    "annotations": "amber/annotations.json",
    "relation": "amber/relation.json",
    "safe_words": "amber/safe_words.txt",
}


def amber_file(config: Mapping[str, Any], key: str) -> str:
    """An AMBER input: the params value (a registered data file or a path), else its default."""
    return str((config.get("amber") or {}).get(key, FILES[key]))


@dataclass(frozen=True)
class AmberPromptSettings(StageSettings):
    """The annotations file (``amber.annotations``)."""

    annotations: str

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> AmberPromptSettings:
        return cls(amber_file(config, "annotations"))


@dataclass(frozen=True)
class AmberScoreSettings(StageSettings):
    """The annotation, relation and safe-word files, and the optional word similarity
    (``amber.similarity``: none or glove) with its threshold."""

    annotations: str
    relation: str
    safe_words: str
    similarity: str
    threshold: float

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> AmberScoreSettings:
        amber = config.get("amber") or {}
        return cls(
            amber_file(config, "annotations"),
            amber_file(config, "relation"),
            amber_file(config, "safe_words"),
            amber.get("similarity", "none"),
            float(amber.get("threshold", 0.8)),
        )


@dataclass(frozen=True)
class AmberTableSettings(StageSettings):
    """The models (rows) and the profile (labels)."""

    models: list[str] = param("generate.models")
    run: str = param("profile")
