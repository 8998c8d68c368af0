"""POPE's per-model score files, as a function other benchmarks import.

Why a module and not a rules helper: rule ``summarize`` of CAOS joins POPE-F1 into its tables;
importing this function makes that dependency explicit, where a helper of POPE's ``common.smk``
would only exist when POPE's rules happened to be included before CAOS's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def score_files(config: Mapping[str, Any], profile: str) -> list[str]:
    """``results/pope/<profile>/<model>/<setting>.scores.json`` of every model and setting; none
    when POPE is disabled."""
    pope = config.get("pope") or {}
    if not pope.get("enabled"):
        return []
    return [
        f"results/pope/{profile}/{model}/{setting}.scores.json"
        for model in config["generate"]["models"]
        for setting in pope["settings"]
    ]
