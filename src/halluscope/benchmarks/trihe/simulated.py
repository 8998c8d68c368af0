"""Simulated Tri-HE answers (``task="trihe"``) and the two steps of its mitigation.

- ``trihe``: the answer key's ``triplets`` are the question's reference triplets
  ``[[subject, relation, object], ...]``. The answer states each of them as one sentence
  (:func:`triplet_sentence`: "The <s> is <r> the <o>." or "The <s> has the <o>."). One uniform
  draw per triplet: below ``trihe_object_error_rate`` the subject or the object (even odds) is
  replaced by an object absent from the image (``OOD_POOL`` plus MSCOCO classes, none of the
  annotated names); else below ``trihe_object_error_rate + trihe_relation_error_rate`` the
  relation is replaced by one of :data:`TRIHE_RELATION_POOL` that is not the true relation, not
  a near-synonym of it (:data:`NEAR_RELATIONS`) and not annotated for that pair. The draws are
  seeded on the answer key's ``question`` (default: the prompt). ``meta``:
  ``{"triplets": [{"said", "truth", "error": null|"object"|"relation", "slot"}],
  "n_object_errors", "n_relation_errors"}``.
- Mitigation, step 1 (``task="trihe-describe"``, with the image): the same triplets with the same
  error draws, written one per line as ``(s, r, o)``; step 2 (``task="trihe-answer"``, text only,
  no image, no answer key): the ``(s, r, o)`` lines found in the prompt (the description) restated
  as sentences, no new errors. So the sim shows no mitigation effect by construction; it
  exercises the two-step path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from halluscope.models.base import Request
from halluscope.models.sim.core import SimulatedLVLM, register_answerer
from halluscope.models.sim.pools import OOD_POOL
from halluscope.models.sim.presets import declare_preset_fields


def _one_draw_per_triplet(profile: Mapping[str, Any], where: str) -> None:
    if profile["trihe_relation_error_rate"] + profile["trihe_object_error_rate"] > 1:
        raise ValueError(
            f"{where}: trihe_relation_error_rate + trihe_object_error_rate must be <= 1 "
            "(one draw per triplet decides object error, relation error or correct)"
        )


declare_preset_fields(
    {
        "trihe_relation_error_rate": (
            "probability that a Tri-HE answer triplet gets a wrong relation",
            {"sim-precise": 0.05, "sim-verbose": 0.35, "sim-frequent": 0.15, "sim-ood": 0.1},
        ),
        "trihe_object_error_rate": (
            "probability that a Tri-HE answer triplet gets an absent object",
            {"sim-precise": 0.03, "sim-verbose": 0.1, "sim-frequent": 0.25, "sim-ood": 0.2},
        ),
    },
    _one_draw_per_triplet,
)

# Wrong relations of Tri-HE answers: actions and spatial relations that are false for the
# annotated pairs of the demo (the sim also skips any relation annotated for the pair).
TRIHE_RELATION_POOL: tuple[str, ...] = (
    "eating", "riding", "throwing", "chasing", "pulling", "kicking", "climbing", "carrying",
    "under", "above", "inside", "hanging from",
)  # fmt: skip


#: Pool relations too close to a true relation to count as wrong (never used in its place).
NEAR_RELATIONS: dict[str, frozenset[str]] = {
    "on": frozenset({"above"}),
    "in": frozenset({"inside"}),
    "below": frozenset({"under"}),
    "overlooking": frozenset({"above"}),
    "part of": frozenset({"inside"}),
}

#: Relations that are finite verbs: "The cat has the eye." (others get "is": "is wearing").
FINITE_RELATIONS = frozenset({"has", "have", "wears", "holds", "contains", "carries", "covers"})


def triplet_sentence(subject: str, relation: str, obj: str) -> str:
    """A triplet as a sentence: "The person is wearing the spacesuit.", "The cat has the eye."."""
    verb = relation if relation.split(" ", 1)[0] in FINITE_RELATIONS else f"is {relation}"
    return f"The {subject} {verb} the {obj}."


def triplet_line(subject: str, relation: str, obj: str) -> str:
    """One triplet as a description line, ``(s, r, o)`` (the Tri-HE string format)."""
    return f"({subject}, {relation}, {obj})"


_TRIPLET_LINE = re.compile(r"^\(([^(),]+), ([^(),]+), ([^(),]+)\)$")


def description_triplets(text: str) -> list[tuple[str, str, str]]:
    """The ``(s, r, o)`` lines of a text (other lines are ignored), in order."""
    found = []
    for line in text.splitlines():
        match = _TRIPLET_LINE.match(line.strip())
        if match:
            found.append(tuple(part.strip() for part in match.groups()))
    return found  # type: ignore[return-value]


@register_answerer("trihe", "trihe-describe")
def answer_trihe(
    model: SimulatedLVLM, request: Request, item: Mapping[str, Any] | None
) -> tuple[str, dict]:
    """The reference triplets as sentences (``trihe``) or ``(s, r, o)`` lines (``trihe-describe``),
    with errors injected at the profile's rates."""
    assert item is not None
    # The describe step draws exactly as a direct answer would (same question, same seed).
    question = model.truth_get(request, "question", request.prompt)
    rng = model.rng(request, question, "trihe")
    p = model.preset
    truth = model.truth(request, "triplets")
    if not isinstance(truth, list) or not all(
        isinstance(t, (list, tuple)) and len(t) == 3 for t in truth
    ):
        raise ValueError(
            f"sim model {model.name!r}: request {request.request_id!r}: meta['triplets'] must "
            f"be a list of [subject, relation, object], got {truth!r}"
        )
    relations = [tuple(str(x) for x in t) for t in item.get("relations", []) or []]
    present = {str(o).lower() for o in item.get("gt_objects", [])}
    present |= {str(o).lower() for o in item.get("other_objects", [])}
    present |= {name.lower() for t in relations for name in (t[0], t[2])}
    absent = [o for o in dict.fromkeys(OOD_POOL + model.frequency) if o not in present]
    said: list[dict[str, Any]] = []
    for subj, rel, obj in (tuple(str(x) for x in t) for t in truth):
        draw = rng.random()
        error, slot, new = None, None, [subj, rel, obj]
        if draw < p["trihe_object_error_rate"] and absent:
            error, slot = "object", rng.choice(["subject", "object"])
            new[0 if slot == "subject" else 2] = rng.choice(absent)
        elif draw < p["trihe_object_error_rate"] + p["trihe_relation_error_rate"]:
            annotated = {r for s_, r, o_ in relations if (s_, o_) == (subj, obj)}
            near = NEAR_RELATIONS.get(rel, frozenset())
            wrong = [r for r in TRIHE_RELATION_POOL if r != rel and r not in near | annotated]
            if wrong:
                error, slot = "relation", "relation"
                new[1] = rng.choice(wrong)
        said.append({"said": new, "truth": [subj, rel, obj], "error": error, "slot": slot})
    if request.task == "trihe-describe":
        text = "\n".join(triplet_line(*t["said"]) for t in said)
    else:
        text = " ".join(triplet_sentence(*t["said"]) for t in said)
    meta = {
        "triplets": said,
        "n_object_errors": sum(t["error"] == "object" for t in said),
        "n_relation_errors": sum(t["error"] == "relation" for t in said),
    }
    return text or "I cannot tell.", meta


@register_answerer("trihe-answer", needs_item=False)
def answer_from_description(
    model: SimulatedLVLM, request: Request, item: Mapping[str, Any] | None
) -> tuple[str, dict]:
    """Text only: restates the ``(s, r, o)`` lines of the description in the prompt."""
    lines = description_triplets(request.prompt)
    text = " ".join(triplet_sentence(*t) for t in lines) or "I cannot tell."
    return text, {"from_description": len(lines)}
