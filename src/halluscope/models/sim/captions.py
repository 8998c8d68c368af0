"""Simulated captions (``task="caption"``), for any instruction text.

1. Style and length come from the instruction text (keyword rules in :func:`instruction_style`):
   "few words"/"minimal words" -> terse word lists (length factor 0.5); "caption" -> one noun-phrase
   sentence; "narrative" -> a small story sentence; otherwise a description. "brief", "short",
   "concise", "succinct" shorten (0.75) unless "descriptive" is also asked (1.0); "detail" -> 1.5.
   "mood", "evocative", "essence", "impact" add a mood sentence (no objects in it). The template
   variant is a deterministic function of (model name, instruction text).
2. ``slots = max(1, round(max_objects * length factor))``: the caption length in objects.
3. Present MSCOCO objects (``gt_objects``), in a seeded random order: each is left out with
   probability ``omission_rate``; the kept ones fill at most ``slots`` places. Each annotated other
   (non-MSCOCO, truly visible) object is mentioned with probability ``ood_rate``, at most
   ``max(1, slots - mentioned MSCOCO objects)`` of them. Relations whose subject and object are
   both mentioned are rendered as "a <s> <relation> a <o>"; with probability
   ``relation_error_rate`` the relation is replaced by a wrong one.
4. Hallucinations: each of the ``slots`` independently holds one hallucinated object with
   probability ``hallucination_rate`` (so the expected count per caption is
   ``slots * hallucination_rate``, capped by the available candidates). Its kind is drawn from
   ``style_weights``:
   ``frequent`` -- one of the ``frequent_top_k`` most frequent absent MSCOCO classes (the next
   ones only once the caption has used all of those);
   ``cooccur`` -- an absent MSCOCO class that commonly co-occurs with a mentioned one
   (:data:`~halluscope.models.sim.pools.COOCCURRENCE`); ``ood`` -- an out-of-domain object absent
   from the annotations (:data:`~halluscope.models.sim.pools.OOD_POOL`). When a kind has no
   candidate the next one is used (cooccur -> frequent -> ood) and the kind actually used is
   recorded. Hallucinated objects are inserted after the first mention, at seeded random places.
5. Surface words: every MSCOCO object (present or hallucinated) is written with its class name
   ("a dining table", "a cell phone"), never pluralised, so a CHAIR-style parser maps it back to the
   class; ``OOD_POOL`` and the template words contain no MSCOCO synonym.

``meta`` of a caption: ``injected`` [{name, kind}], ``mentioned`` (present MSCOCO objects),
``mentioned_other`` (present other objects), ``omitted`` (present MSCOCO objects left out), all in
caption order, plus ``relations`` [{subject, relation, object, correct}], ``style`` and ``slots``.
The answer key holds the image's annotations only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from halluscope.models.base import Request
from halluscope.models.sim.core import SimulatedLVLM, register_answerer, sha256_json
from halluscope.models.sim.pools import RELATION_POOL, noun_phrase
from halluscope.models.sim.presets import KINDS


def instruction_style(instruction: str) -> dict[str, Any]:
    """Form, length factor and mood of a caption, from keywords of the instruction text."""
    text = instruction.lower()
    if "few words" in text or "minimal words" in text or "few descriptive words" in text:
        form, factor = "terse", 0.5
    else:
        form = (
            "caption"
            if "caption" in text
            else "narrative"
            if "narrative" in text
            else "description"
        )
        short = any(word in text for word in ("brief", "short", "concise", "succinct"))
        factor = 1.0 if "descriptive" in text or not short else 0.75
        if "detail" in text:
            factor = 1.5
    mood = any(word in text for word in ("mood", "evocative", "essence", "impact"))
    return {"form": form, "factor": factor, "mood": mood}


def _join(parts: Sequence[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


_MOODS = (
    "The mood is calm and peaceful.",
    "It feels lively and bright.",
    "The atmosphere is warm and quiet.",
)
_DESCRIPTION_OPENERS = (
    "The image shows {}.",
    "This image shows {}.",
    "In this photo, there is {}.",
)
_DESCRIPTION_MORE = (
    "There is also {} in the scene.",
    "In the background, {} can be seen.",
    "Nearby, there is {}.",
)
_CAPTION_LINKS = (" with ", " next to ", " together with ")
_NARRATIVES = (
    "In this scene, {} is seen with {}.",
    "A quiet moment: {} near {}.",
    "Here {} shares the scene with {}.",
)
_EMPTY = "A photo with no clear subject."


def compose_text(chunks: Sequence[tuple[str, str]], style: Mapping[str, Any], variant: int) -> str:
    """Render ``(phrase, bare word)`` chunks in the instruction's form with template ``variant``."""
    if not chunks:
        return _EMPTY
    phrases = [phrase for phrase, _ in chunks]
    form = style["form"]
    if form == "terse":
        if variant % 2 == 0:
            text = _cap(", ".join(bare for _, bare in chunks)) + "."
        else:
            text = _cap(_join(phrases)) + "."
    elif form == "caption":
        if len(phrases) == 1:
            text = f"A photo of {phrases[0]}."
        else:
            text = _cap(phrases[0]) + _CAPTION_LINKS[variant % 3] + _join(phrases[1:]) + "."
    elif form == "narrative":
        if len(phrases) == 1:
            text = f"In this scene, {phrases[0]} takes the center."
        else:
            text = _NARRATIVES[variant % 3].format(phrases[0], _join(phrases[1:]))
    else:
        head = phrases[:2] if style["factor"] >= 1.0 else phrases
        text = _DESCRIPTION_OPENERS[variant % 3].format(_join(head))
        rest = phrases[len(head) :]
        if rest:
            text += " " + _DESCRIPTION_MORE[variant % 3].format(_join(rest))
    if style["mood"]:
        text += " " + _MOODS[variant % 3]
    return text


@register_answerer("caption")
def answer_caption(
    model: SimulatedLVLM, request: Request, item: Mapping[str, Any] | None
) -> tuple[str, dict]:
    """A caption for the instruction in the prompt (steps 1-5 of the module docstring)."""
    assert item is not None
    instruction = request.prompt
    rng = model.rng(request)
    p = model.preset
    style = instruction_style(instruction)
    variant = int(sha256_json([model.name, instruction])[:8], 16)
    slots = max(1, math.floor(p["max_objects"] * style["factor"] + 0.5))
    gt = sorted(str(o) for o in item.get("gt_objects", []))
    others = sorted(
        str(o).lower() for o in item.get("other_objects", []) if str(o).lower() not in gt
    )

    order = list(gt)
    rng.shuffle(order)
    kept = [o for o in order if rng.random() >= p["omission_rate"]][:slots]
    other_order = list(others)
    rng.shuffle(other_order)
    kept_other = [o for o in other_order if rng.random() < p["ood_rate"]][
        : max(1, slots - len(kept))
    ]
    mentions = kept + kept_other
    rng.shuffle(mentions)

    # Relations between mentioned objects become one chunk at the subject's or object's place.
    chunks: list[dict[str, Any]] = [
        {"objects": [m], "phrase": noun_phrase(m), "bare": m} for m in mentions
    ]
    relations_meta: list[dict[str, Any]] = []
    if style["form"] != "terse":
        for triplet in item.get("relations", []) or []:
            if len(triplet) != 3:
                continue
            subj, rel, obj = (str(x) for x in triplet)
            spots = {c["objects"][0]: i for i, c in enumerate(chunks) if len(c["objects"]) == 1}
            if subj == obj or subj not in spots or obj not in spots:
                continue
            correct = rng.random() >= p["relation_error_rate"]
            used_rel = rel if correct else rng.choice([r for r in RELATION_POOL if r != rel])
            first, second = sorted((spots[subj], spots[obj]))
            chunks[first] = {
                "objects": [subj, obj],
                "phrase": f"{noun_phrase(subj)} {used_rel} {noun_phrase(obj)}",
                "bare": f"{subj} {used_rel} {obj}",
            }
            del chunks[second]
            relations_meta.append(
                {"subject": subj, "relation": used_rel, "object": obj, "correct": correct}
            )

    # Hallucinations: one chance per slot, inserted after the first chunk.
    weights = [p["style_weights"][k] for k in KINDS]
    injected: list[dict[str, str]] = []
    used: list[str] = []
    for _ in range(slots):
        if p["hallucination_rate"] <= 0 or rng.random() >= p["hallucination_rate"]:
            continue
        kind = rng.choices(KINDS, weights=weights)[0]
        picked = model.pick_hallucination(kind, gt, used, kept, others, rng)
        if picked is None:
            continue
        name, actual = picked
        used.append(name)
        chunk = {
            "objects": [name],
            "phrase": noun_phrase(name),
            "bare": name,
            "injected": actual,
        }
        chunks.insert(rng.randint(1, len(chunks)) if chunks else 0, chunk)

    text = compose_text([(c["phrase"], c["bare"]) for c in chunks], style, variant)
    in_order = [o for c in chunks for o in c["objects"]]
    injected = [{"name": c["objects"][0], "kind": c["injected"]} for c in chunks if "injected" in c]
    meta = {
        "injected": injected,
        "mentioned": [o for o in in_order if o in kept],
        "mentioned_other": [o for o in in_order if o in kept_other],
        "omitted": [o for o in gt if o not in kept],
        "relations": relations_meta,
        "slots": slots,
        "style": style["form"],
    }
    return text, meta
