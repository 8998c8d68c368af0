"""The simulated LVLMs' AMBER answers (task ``amber``), registered with the sim's answerers.

From the answer key's ``truth`` (objects in the image) and ``hallu`` (AMBER's annotated likely
hallucinations): the truth objects in a seeded order, each left out with the profile's
``omission_rate``, at most ``max_objects``; then, once per slot, with ``hallucination_rate``, one
``hallu`` object not yet used. So CHAIR and Hal rise with the hallucination rate and Cover falls
with the omission rate, which is what a test of the scorer needs. ``meta``: ``{"mentioned",
"hallucinated"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.models.base import Request
from halluscope.models.sim.captions import compose_text, instruction_style
from halluscope.models.sim.core import SimulatedLVLM, register_answerer
from halluscope.models.sim.pools import noun_phrase


@register_answerer("amber")
def answer_amber(
    model: SimulatedLVLM, request: Request, item: Mapping[str, Any] | None
) -> tuple[str, dict]:
    """A description of the truth objects with hallucinations from ``hallu`` injected."""
    p = model.preset
    truth = [str(o) for o in model.truth(request, "truth")]
    hallu = [str(o) for o in model.truth(request, "hallu")]
    rng = model.rng(request)
    slots = max(1, int(p["max_objects"]))
    order = list(truth)
    rng.shuffle(order)
    mentioned = [o for o in order if rng.random() >= p["omission_rate"]][:slots]
    pool = list(hallu)
    rng.shuffle(pool)
    hallucinated = [
        pool.pop() for _ in range(slots) if pool and rng.random() < p["hallucination_rate"]
    ]
    names = list(mentioned)
    for name in hallucinated:
        names.insert(rng.randint(0, len(names)), name)
    style = instruction_style(request.prompt)
    text = compose_text([(noun_phrase(n), n) for n in names], style, 0) if names else "An image."
    return text, {"mentioned": mentioned, "hallucinated": hallucinated}
