"""Simulated yes/no answers (``task="yesno"``, POPE's "Is there a <object> in the image?").

A present object (among the answer key's ``gt_objects`` and ``other_objects``) gets "No" with
probability ``yesno_miss_rate``; an absent one gets "Yes" with probability ``yes_bias``. ``meta``:
``{"object", "truth", "answer", "flipped"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.models.base import Request
from halluscope.models.sim.core import SimulatedLVLM, register_answerer
from halluscope.models.sim.oracle import asked_object
from halluscope.models.sim.pools import noun_phrase


@register_answerer("yesno")
def answer_yesno(
    model: SimulatedLVLM, request: Request, item: Mapping[str, Any] | None
) -> tuple[str, dict]:
    """A yes/no sentence about the asked object, with the profile's yes-bias and miss rate."""
    assert item is not None
    rng = model.rng(request)
    name, truth = asked_object(item, request.prompt)
    p = model.preset
    answer = rng.random() >= p["yesno_miss_rate"] if truth else rng.random() < p["yes_bias"]
    flipped = answer != truth
    text = (
        f"Yes, there is {noun_phrase(name)} in the image."
        if answer
        else f"No, there is no {name} in the image."
    )
    return text, {"object": name, "truth": truth, "answer": answer, "flipped": flipped}
