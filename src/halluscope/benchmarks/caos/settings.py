"""What CAOS's report rules read from params besides their classes in :mod:`.report`: the
sensitivity-p view's settings (kept apart from its pandas-heavy module, so the rules import
them cheaply) and the setting note's summary of the whole profile (rule ``caos_tables``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from halluscope.settings import StageSettings, param, plain


@dataclass(frozen=True)
class RateSettings(StageSettings):
    """What the sensitivity-p view reads from params: models, embedders (id -> display name),
    the Table 1 instructions, caos.k / k_max / frequent, decimals and the profile (LaTeX
    labels)."""

    models: list[str] = param("generate.models")
    embedders: list[str] = param("embed.embedders")
    table1: list[str] = param("tables.table1_instructions")
    k: int = param("caos.k")
    k_max: int = param("caos.k_max")
    frequent: str | list[str] = param("caos.frequent")
    decimals: int = param("tables.decimals")
    run: str = param("profile")


def extractor_with_weights(config: Mapping[str, Any]) -> dict[str, Any]:
    """The extractor LLM's settings plus its model's weight format (a llamacpp spec's
    ``weights``; other backends have none), which changes replies as the speed options do."""
    llm = plain(config["extract"]["llm"])
    spec = config["models"].get(llm.get("model"), {})
    return {**llm, "weights": spec["weights"]} if "weights" in spec else llm


def setting_summary(config: Mapping[str, Any]) -> dict[str, Any]:
    """What a CAOS table's numbers depend on, for the generated setting note."""
    extract, oracle, generate = config["extract"], config["oracle"], config["generate"]
    models, embedders = plain(generate["models"]), plain(config["embed"]["embedders"])
    specs = config["embed"]["specs"]
    return {
        "profile": config["profile"],
        "dataset": config["data"]["dataset"],
        "n_images_limit": config["data"].get("limit"),
        "models": {
            m: {k: v for k, v in plain(config["models"][m]).items() if k != "paths"} for m in models
        },
        "instructions": plain(generate["instructions"]),
        "embedders": {e: plain(specs[e]) for e in embedders},
        "extract": {k: extract[k] for k in ("method", "synonyms", "variant") if k in extract}
        | {"llm": extractor_with_weights(config)},
        "oracle": {k: plain(oracle[k]) for k in ("method", "members") if k in oracle},
        "k": config["caos"]["k"],
        "frequent": plain(config["caos"]["frequent"]),
    }
