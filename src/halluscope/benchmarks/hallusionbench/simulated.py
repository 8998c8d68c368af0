"""Simulated HallusionBench answers (``task="hallusionbench"``): yes/no questions at the preset's
known rates.

The answer key's ``gt_answer`` is ``"1"`` (yes) or ``"0"`` (no), as HallusionBench.json writes
it. A yes-question gets "No." with probability ``yesno_miss_rate``, a no-question "Yes." with
probability ``yes_bias`` (the rates every yes/no benchmark's sim answers with; no preset field
of its own, so the sim's revision, and every other benchmark's cached sim answers, stay as they
are). The draw is seeded on the model, the seed, the figure's item id and the question. On the
178 text-only questions (95 no, 83 yes) the expected aAcc is ``1 - (95 * yes_bias + 83 *
yesno_miss_rate) / 178``: sim-precise 92.33, sim-verbose 81.66, sim-frequent 70.98 (percent).
``meta``: ``{"gt_answer", "answer", "flipped", "p_error"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.models.base import Request
from halluscope.models.sim.core import SimulatedLVLM, register_answerer


@register_answerer("hallusionbench")
def answer_hallusionbench(
    model: SimulatedLVLM, request: Request, item: Mapping[str, Any] | None
) -> tuple[str, dict]:
    """``Yes.`` or ``No.``: the truth, flipped with the preset's yes-bias or miss rate."""
    p = model.preset
    truth = str(model.truth(request, "gt_answer"))
    if truth not in ("0", "1"):
        raise ValueError(
            f"sim model {model.name!r}: request {request.request_id!r}: the answer key's "
            f"gt_answer must be '0' or '1', got {truth!r}"
        )
    p_error = p["yesno_miss_rate"] if truth == "1" else p["yes_bias"]
    flipped = model.rng(request, None, "hallusionbench").random() < p_error
    says_yes = (truth == "1") != flipped
    meta = {
        "gt_answer": truth,
        "answer": "yes" if says_yes else "no",
        "flipped": flipped,
        "p_error": round(p_error, 6),
    }
    return ("Yes." if says_yes else "No."), meta
