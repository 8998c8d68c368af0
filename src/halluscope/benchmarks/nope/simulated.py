"""Simulated NOPE answers (``task="nope"``): short answers to NegP and other VQA questions.

The answer key holds ``is_negp`` (the ground truth is a negative indefinite pronoun),
``reference`` (a string or a list of acceptable answers), ``acceptable_answers`` (the question's
NegP forms, Table 6) and ``question_type``, beside the image's annotations. One uniform draw per
question. A NegP question is answered with one of its acceptable NegP forms (seeded pick, so
exact match can miss while NegP accuracy counts it) when the draw is below ``negp_accuracy``;
otherwise the sim hallucinates: it picks an object absent from the image from its hallucination
pools (kind drawn from ``style_weights``, as in captions) and answers in the question type's form
(:func:`answer_form`): the object ("object"), "on the <object>" ("location"), a colour of
:data:`COLOR_POOL` ("color"), a count 1-5 ("counting"), a person word of :data:`PERSON_POOL`
("person"). Another question gets its (first) reference, or with probability ``vqa_error_rate``
a wrong answer: another object of the image (an absent one when the image has none left), for
"location" with a relation of ``RELATION_POOL``. ``meta``: ``{"is_negp", "answer", "correct",
"kind": "negp"|"hallucination"|"reference"|"wrong", "object"}``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from halluscope.models.base import Request
from halluscope.models.sim.core import SimulatedLVLM, register_answerer
from halluscope.models.sim.pools import OOD_POOL, RELATION_POOL
from halluscope.models.sim.presets import KINDS, declare_preset_fields

declare_preset_fields(
    {
        "negp_accuracy": (
            "probability that a NOPE NegP question gets a NegP answer (else an object is "
            "hallucinated)",
            {"sim-precise": 0.6, "sim-verbose": 0.1, "sim-frequent": 0.3, "sim-ood": 0.2},
        ),
        "vqa_error_rate": (
            "probability that a NOPE question with another answer is answered wrongly",
            {"sim-precise": 0.1, "sim-verbose": 0.25, "sim-frequent": 0.15, "sim-ood": 0.3},
        ),
    }
)

#: Colours a hallucinating sim gives for a NOPE colour question about an absent object.
COLOR_POOL: tuple[str, ...] = ("red", "blue", "white", "black", "green", "brown", "yellow")

#: Person words a hallucinating sim gives for a NOPE "who" question.
PERSON_POOL: tuple[str, ...] = ("man", "woman", "boy", "girl", "chef", "worker")


def answer_form(question_type: str, obj: str, rng: random.Random) -> str:
    """A short answer of the question type's form that names (or describes) ``obj``."""
    if question_type == "color":
        return rng.choice(COLOR_POOL)
    if question_type == "counting":
        return str(rng.randint(1, 5))
    if question_type == "person":
        return rng.choice(PERSON_POOL)
    if question_type == "location":
        return f"{rng.choice(RELATION_POOL)} the {obj}"
    return obj


@register_answerer("nope")
def answer_nope(
    model: SimulatedLVLM, request: Request, item: Mapping[str, Any] | None
) -> tuple[str, dict]:
    """A NegP form, a hallucinated object, the reference or a wrong answer (module docstring)."""
    assert item is not None
    rng = model.rng(request)
    p = model.preset
    is_negp = model.truth(request, "is_negp")
    reference = model.truth(request, "reference")
    references = [reference] if isinstance(reference, str) else list(reference or [])
    if not isinstance(is_negp, bool) or not references:
        raise ValueError(
            f"sim model {model.name!r}: request {request.request_id!r}: meta['is_negp'] must "
            f"be true/false and meta['reference'] a non-empty answer, got {is_negp!r}, "
            f"{reference!r}"
        )
    qtype = str(model.truth_get(request, "question_type") or "object")
    gt = sorted(str(o) for o in item.get("gt_objects", []))
    present = [*gt, *(str(o).lower() for o in item.get("other_objects", []))]
    draw = rng.random()
    obj = None
    if is_negp and draw < p["negp_accuracy"]:
        forms = [str(a) for a in model.truth_get(request, "acceptable_answers") or references]
        text, kind = rng.choice(forms), "negp"
    elif is_negp:
        weights = [p["style_weights"][k] for k in KINDS]
        kind_drawn = rng.choices(KINDS, weights=weights)[0] if sum(weights) else "ood"
        picked = model.pick_hallucination(kind_drawn, gt, [], gt, present, rng)
        obj = picked[0] if picked else rng.choice(OOD_POOL)
        text, kind = answer_form(qtype, obj, rng), "hallucination"
    elif draw < p["vqa_error_rate"]:
        wrong = [o for o in present if o not in references]
        obj = rng.choice(wrong) if wrong else rng.choice([o for o in OOD_POOL if o not in gt])
        text, kind = answer_form(qtype, obj, rng), "wrong"
    else:
        text, kind = references[0], "reference"
    meta = {
        "is_negp": is_negp,
        "answer": text,
        "correct": kind in ("negp", "reference"),
        "kind": kind,
        "object": obj,
    }
    return text, meta
