"""Simulated oracle answers (``task="oracle"``): "Does the image contain <object>? ... Present or
Absent." (the CAOS ensemble oracle's question, :mod:`halluscope.models.oracle`).

The truth is whether <object> is among the annotated objects of the answer key (``gt_objects``
and ``other_objects``; a plural matches its singular); the answer is flipped with probability
``oracle_error_rate``. ``meta``: ``{"object", "truth", "answer", "flipped"}``. The question forms
read by :func:`question_object` also cover POPE's yes/no questions
(:mod:`halluscope.benchmarks.pope.simulated`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from halluscope.models.base import Request
from halluscope.models.sim.core import SimulatedLVLM, register_answerer

_OBJECT_PATTERNS = (
    re.compile(r"does the image contain (?:an? |the |any )?(.+?)\s*\?", re.IGNORECASE),
    re.compile(r"is there (?:an? |any |the )?(.+?) in the (?:image|picture|photo)", re.IGNORECASE),
    re.compile(r"are there (?:any )?(.+?) in the (?:image|picture|photo)", re.IGNORECASE),
)


def question_object(prompt: str) -> str:
    """The object a Present/Absent or yes/no question asks about."""
    for pattern in _OBJECT_PATTERNS:
        match = pattern.search(prompt)
        if match:
            return match.group(1).strip().lower()
    raise ValueError(
        f"cannot find the object in the question {prompt!r}; expected 'Does the image contain "
        "<object>?' or 'Is there a <object> in the image?'"
    )


def asked_object(item: Mapping[str, Any], prompt: str) -> tuple[str, bool]:
    """The object a question asks about and whether the annotations have it."""
    name = question_object(prompt)
    known = [
        str(o).lower()
        for o in list(item.get("gt_objects", [])) + list(item.get("other_objects", []))
    ]
    return name, name in known or (name.endswith("s") and name[:-1] in known)


@register_answerer("oracle")
def answer_oracle(
    model: SimulatedLVLM, request: Request, item: Mapping[str, Any] | None
) -> tuple[str, dict]:
    """Present or Absent: the truth, flipped with probability ``oracle_error_rate``."""
    assert item is not None
    rng = model.rng(request)
    name, truth = asked_object(item, request.prompt)
    flipped = rng.random() < model.preset["oracle_error_rate"]
    answer = truth != flipped
    text = "Present" if answer else "Absent"
    return text, {"object": name, "truth": truth, "answer": answer, "flipped": flipped}
