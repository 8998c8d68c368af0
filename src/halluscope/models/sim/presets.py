"""Presets of the simulated LVLMs: the rates and styles that decide their answers.

A preset is a complete mapping of :data:`PRESET_FIELDS` (the fields of :data:`PRESET_DEFAULTS`
may be left out); the built-in ones are :data:`PRESETS`. A sim spec in ``params.yaml`` names one
with its ``preset:`` key (``preset: sim-precise``) and may replace whole fields
(``overrides:``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

#: Kinds of hallucinated objects (see :mod:`halluscope.models.sim.pools`).
KINDS = ("frequent", "cooccur", "ood")


PRESET_FIELDS: dict[str, str] = {
    "max_objects": "objects a full-length caption mentions (int >= 1)",
    "omission_rate": "probability that a present MSCOCO object is left out",
    "hallucination_rate": "probability per caption slot of one hallucinated object",
    "style_weights": "relative weights of hallucination kinds {frequent, cooccur, ood}",
    "frequent_top_k": "frequent hallucinations come from the top-k MSCOCO classes (int >= 1)",
    "ood_rate": "probability of mentioning each truly visible non-MSCOCO object",
    "relation_error_rate": "probability that a rendered relation is replaced by a wrong one",
    "oracle_error_rate": "probability that a Present/Absent oracle answer is flipped",
    "yes_bias": "probability of answering Yes to a question whose answer is No (an absent object)",
    "yesno_miss_rate": "probability of answering No to a question whose answer is Yes",
}

#: Fields a benchmark declares (:func:`declare_preset_fields`); a complete dict preset may
#: leave them out (0 = the benchmark's behaviour without them).
PRESET_DEFAULTS: dict[str, float] = {}

#: A benchmark's checks of a whole preset (``check(preset, where)`` raises ValueError).
PRESET_CHECKS: list[Callable[[Mapping[str, Any], str], None]] = []

PRESETS: dict[str, dict[str, Any]] = {
    # Short captions, few hallucinations, mostly frequent objects.
    "sim-precise": {
        "max_objects": 3,
        "omission_rate": 0.2,
        "hallucination_rate": 0.08,
        "style_weights": {"frequent": 0.7, "cooccur": 0.3, "ood": 0.0},
        "frequent_top_k": 10,
        "ood_rate": 0.2,
        "relation_error_rate": 0.05,
        "oracle_error_rate": 0.05,
        "yes_bias": 0.1,
        "yesno_miss_rate": 0.05,
    },
    # Long captions, many hallucinations, mostly co-occurring objects.
    "sim-verbose": {
        "max_objects": 8,
        "omission_rate": 0.05,
        "hallucination_rate": 0.3,
        "style_weights": {"frequent": 0.2, "cooccur": 0.6, "ood": 0.2},
        "frequent_top_k": 10,
        "ood_rate": 0.6,
        "relation_error_rate": 0.2,
        "oracle_error_rate": 0.1,
        "yes_bias": 0.3,
        "yesno_miss_rate": 0.05,
    },
    # Medium captions that hallucinate the very top MSCOCO classes; strongly yes-biased.
    "sim-frequent": {
        "max_objects": 5,
        "omission_rate": 0.15,
        "hallucination_rate": 0.3,
        "style_weights": {"frequent": 0.9, "cooccur": 0.1, "ood": 0.0},
        "frequent_top_k": 5,
        "ood_rate": 0.3,
        "relation_error_rate": 0.1,
        "oracle_error_rate": 0.1,
        "yes_bias": 0.5,
        "yesno_miss_rate": 0.05,
    },
    # Hallucinates out-of-domain objects (trees, lamps, walls) that CHAIR cannot see.
    "sim-ood": {
        "max_objects": 6,
        "omission_rate": 0.1,
        "hallucination_rate": 0.3,
        "style_weights": {"frequent": 0.1, "cooccur": 0.1, "ood": 0.8},
        "frequent_top_k": 10,
        "ood_rate": 0.5,
        "relation_error_rate": 0.1,
        "oracle_error_rate": 0.15,
        "yes_bias": 0.2,
        "yesno_miss_rate": 0.1,
    },
}


def declare_preset_fields(
    fields: Mapping[str, tuple[str, Mapping[str, float]]],
    check: Callable[[Mapping[str, Any], str], None] | None = None,
) -> None:
    """A benchmark's own fields of every preset, declared by its ``simulated`` module: field ->
    (what it is, its value in each built-in preset). Each is a probability; ``check`` adds a
    condition on the whole preset. Why here and not in :data:`PRESETS`: the sim's core names no
    benchmark, and a benchmark's rates live beside the answerer that reads them."""
    for name, (what, values) in fields.items():
        PRESET_FIELDS[name] = what
        PRESET_DEFAULTS[name] = 0.0
        for preset, value in values.items():
            PRESETS[preset][name] = value
    if check is not None:
        PRESET_CHECKS.append(check)


def _check_rate(name: str, value: Any, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{where}: {name} must be a number in [0, 1], got {value!r}")


def validate_preset(preset: Mapping[str, Any], where: str = "sim preset") -> dict[str, Any]:
    """Check a complete preset (every field of :data:`PRESET_FIELDS`, nothing else; the fields
    of :data:`PRESET_DEFAULTS` may be left out)."""
    preset = {**PRESET_DEFAULTS, **dict(preset)}
    unknown = sorted(set(preset) - set(PRESET_FIELDS))
    missing = sorted(set(PRESET_FIELDS) - set(preset))
    if unknown:
        raise ValueError(
            f"{where}: unknown field(s) {unknown}; valid fields: {sorted(PRESET_FIELDS)}"
        )
    if missing:
        raise ValueError(f"{where}: missing field(s) {missing}")
    for name in ("max_objects", "frequent_top_k"):
        value = preset[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{where}: {name} must be an integer >= 1, got {value!r}")
    for name in PRESET_FIELDS:
        if name.endswith("_rate") or name == "yes_bias" or name in PRESET_DEFAULTS:
            _check_rate(name, preset[name], where)
    for check in PRESET_CHECKS:
        check(preset, where)
    weights = preset["style_weights"]
    if not isinstance(weights, Mapping) or set(weights) - set(KINDS):
        raise ValueError(
            f"{where}: style_weights must map a subset of {list(KINDS)} to weights, got {weights!r}"
        )
    for kind, weight in weights.items():
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0:
            raise ValueError(f"{where}: style_weights[{kind!r}] must be >= 0, got {weight!r}")
    if preset["hallucination_rate"] > 0 and sum(weights.values()) <= 0:
        raise ValueError(
            f"{where}: style_weights must have a positive weight when hallucination_rate > 0"
        )
    result = copy.deepcopy(dict(preset))
    result["style_weights"] = {kind: float(weights.get(kind, 0.0)) for kind in KINDS}
    return result


def resolve_preset(
    preset: str | Mapping[str, Any] | None, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A built-in preset by name (or a complete dict); ``overrides`` replace whole fields."""
    if isinstance(preset, str):
        if preset not in PRESETS:
            raise ValueError(
                f"unknown sim preset {preset!r}; valid presets: {', '.join(sorted(PRESETS))}"
            )
        base = copy.deepcopy(PRESETS[preset])
        where = f"sim preset {preset!r}"
    elif isinstance(preset, Mapping):
        base = copy.deepcopy(dict(preset))
        where = "sim preset"
    else:
        raise ValueError(
            f"sim preset must be a name ({', '.join(sorted(PRESETS))}) or a dict, got {preset!r}"
        )
    base.update(copy.deepcopy(dict(overrides or {})))
    return validate_preset(base, where)
