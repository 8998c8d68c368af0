"""Simulated PhD answers (``task="phd"``): yes/no questions, with and without a misleading context.

The answer key's ``label`` is ``"yes"`` or ``"no"``. A yes-question gets "No." with probability
``yesno_miss_rate``, a no-question "Yes." with probability ``yes_bias``. When the prompt carries a
PhD context (it contains :data:`~halluscope.benchmarks.phd.data.CONTEXT_INSTRUCTION`, modes
iac/sec and icc),
that error probability ``p`` becomes ``p + s * (1 - p)``: the model follows the text instead of
the image that much more often, with ``s = context_susceptibility`` for an incorrect context and
half of it when the answer key's ``mode`` is ``"iac"`` (an inaccurate context misleads less than
one that contradicts the image, as the paper finds). The draw is seeded on the question *without*
its context, so a context can only add errors to what the base mode gets, and the iac errors are
a subset of the icc ones. ``meta``: ``{"label", "answer", "flipped", "context", "p_error"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.models.base import Request
from halluscope.models.sim.core import SimulatedLVLM, register_answerer
from halluscope.models.sim.presets import declare_preset_fields

declare_preset_fields(
    {
        "context_susceptibility": (
            "share of the remaining PhD answers that follow a context, not the image",
            {"sim-precise": 0.1, "sim-verbose": 0.3, "sim-frequent": 0.5, "sim-ood": 0.2},
        )
    }
)


@register_answerer("phd")
def answer_phd(
    model: SimulatedLVLM, request: Request, item: Mapping[str, Any] | None
) -> tuple[str, dict]:
    """``Yes.`` or ``No.``: the label, flipped with the (context-raised) error probability."""
    from halluscope.benchmarks.phd.data import CONTEXT_INSTRUCTION

    p = model.preset
    label = model.truth(request, "label")
    if label not in ("yes", "no"):
        raise ValueError(
            f"sim model {model.name!r}: request {request.request_id!r}: meta['label'] must be "
            f"'yes' or 'no', got {label!r}"
        )
    prompt = request.prompt
    context = CONTEXT_INSTRUCTION.strip() in prompt
    question = prompt.split(CONTEXT_INSTRUCTION.strip(), 1)[1].strip() if context else prompt
    p_error = p["yesno_miss_rate"] if label == "yes" else p["yes_bias"]
    if context:
        weight = 0.5 if model.truth_get(request, "mode") in ("iac", "sec") else 1.0
        p_error += weight * p["context_susceptibility"] * (1.0 - p_error)
    rng = model.rng(request, question, "phd")
    flipped = rng.random() < p_error
    answer = label if not flipped else ("no" if label == "yes" else "yes")
    meta = {
        "label": label,
        "answer": answer,
        "flipped": flipped,
        "context": context,
        "p_error": round(p_error, 6),
    }
    return ("Yes." if answer == "yes" else "No."), meta
