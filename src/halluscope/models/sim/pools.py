"""The pools a simulated LVLM draws its hallucinations from, shared by every benchmark's answerer.

Hallucinated objects are of three kinds (:data:`~halluscope.models.sim.presets.KINDS`):
``frequent`` (a frequent MSCOCO class absent from the image), ``cooccur`` (an absent class that
commonly co-occurs with a mentioned one, :data:`COOCCURRENCE`) and ``ood`` (an out-of-domain
object, :data:`OOD_POOL`); :func:`pick_hallucination` falls back to the next kind when one has no
candidate. :data:`RELATION_POOL` holds the wrong relations of captions and NOPE answers.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

# Hand-written table of MSCOCO classes that commonly appear together (kitchen/dining scenes, street
# scenes, sports, animals on farms or savannas, living rooms, offices, bathrooms). It is a plausible
# association list for simulating co-occurrence hallucination, not statistics of MSCOCO.
COOCCURRENCE: dict[str, tuple[str, ...]] = {
    "person": ("handbag", "backpack", "cell phone", "umbrella", "chair", "tie"),
    "bicycle": ("person", "car", "bench", "backpack"),
    "car": ("truck", "traffic light", "bus", "person", "stop sign"),
    "motorcycle": ("car", "person", "truck", "bicycle"),
    "airplane": ("truck", "car", "person"),
    "bus": ("car", "truck", "traffic light", "person"),
    "train": ("traffic light", "person", "car"),
    "truck": ("car", "traffic light", "bus"),
    "boat": ("person", "bird", "car"),
    "traffic light": ("car", "truck", "bus", "stop sign"),
    "fire hydrant": ("car", "stop sign", "dog"),
    "stop sign": ("car", "traffic light", "fire hydrant"),
    "parking meter": ("car", "truck"),
    "bench": ("person", "bird", "potted plant"),
    "bird": ("bench", "boat"),
    "cat": ("couch", "bed", "remote", "dog"),
    "dog": ("frisbee", "couch", "person", "car"),
    "horse": ("person", "cow"),
    "sheep": ("cow", "dog"),
    "cow": ("sheep", "horse"),
    "elephant": ("person", "truck"),
    "bear": ("bird",),
    "zebra": ("giraffe",),
    "giraffe": ("zebra",),
    "backpack": ("person", "handbag"),
    "umbrella": ("person", "handbag", "chair"),
    "handbag": ("person", "backpack"),
    "suitcase": ("person", "handbag", "backpack"),
    "skis": ("person", "backpack"),
    "snowboard": ("person", "skis"),
    "sports ball": ("person", "baseball bat", "baseball glove", "tennis racket"),
    "kite": ("person",),
    "baseball bat": ("baseball glove", "sports ball"),
    "baseball glove": ("baseball bat", "sports ball"),
    "skateboard": ("person",),
    "surfboard": ("person", "boat"),
    "tennis racket": ("sports ball", "person"),
    "bottle": ("cup", "wine glass"),
    "wine glass": ("bottle", "dining table", "cup"),
    "cup": ("dining table", "spoon", "bowl", "cake", "donut"),
    "fork": ("knife", "dining table", "cup"),
    "knife": ("fork", "dining table"),
    "spoon": ("bowl", "cup"),
    "bowl": ("spoon", "cup", "dining table", "banana", "orange"),
    "banana": ("apple", "orange", "bowl"),
    "apple": ("banana", "orange", "bowl"),
    "sandwich": ("dining table", "cup", "fork", "knife"),
    "orange": ("banana", "apple", "bowl"),
    "broccoli": ("carrot", "bowl", "fork"),
    "carrot": ("broccoli", "bowl"),
    "hot dog": ("cup", "bottle"),
    "pizza": ("dining table", "knife", "fork", "cup", "wine glass"),
    "donut": ("cup", "dining table"),
    "cake": ("fork", "knife", "dining table", "cup"),
    "chair": ("dining table", "couch", "cup"),
    "couch": ("tv", "remote", "chair", "potted plant"),
    "potted plant": ("vase", "chair"),
    "bed": ("book", "clock", "teddy bear", "chair"),
    "dining table": ("chair", "cup", "fork", "knife", "bowl", "wine glass", "bottle"),
    "toilet": ("sink", "toothbrush"),
    "tv": ("couch", "remote", "chair"),
    "laptop": ("keyboard", "mouse", "cell phone", "cup", "book"),
    "mouse": ("keyboard", "laptop"),
    "remote": ("tv", "couch"),
    "keyboard": ("mouse", "laptop", "tv"),
    "cell phone": ("person", "laptop"),
    "microwave": ("oven", "refrigerator"),
    "oven": ("microwave", "refrigerator", "sink"),
    "toaster": ("microwave", "oven"),
    "sink": ("toilet", "bottle", "cup", "toothbrush"),
    "refrigerator": ("oven", "microwave", "sink"),
    "book": ("chair", "couch", "clock", "vase"),
    "clock": ("book", "vase"),
    "vase": ("potted plant", "dining table"),
    "scissors": ("book", "cup"),
    "teddy bear": ("bed", "person"),
    "hair drier": ("sink", "toothbrush"),
    "toothbrush": ("sink", "toilet"),
}

# Out-of-domain objects for ``ood`` hallucinations: common visible things that are not MSCOCO
# classes and, checked against the CHAIR synonym list, are not synonyms of one either (so no
# "table", "phone", "plant", "sofa", "bike", "tv", "glass", "bow", "ball", "seat", "monitor" ...).
# All of them are in ``objects.ood_nouns.OOD_NOUNS`` so the lexicon extractor finds them, and no
# template word is (tests/test_models.py checks both).
OOD_POOL: tuple[str, ...] = (
    "tree", "building", "lamp", "window", "cloud", "grass", "wall", "shirt", "fence", "mountain",
    "flower", "road", "curtain", "rug", "pillow", "painting", "mirror", "shelf", "basket", "hat",
    "jacket", "rock", "bridge", "door", "candle", "blanket", "ladder", "statue", "poster", "bush",
)  # fmt: skip

# Wrong relations used when a relation is corrupted (none of them is an MSCOCO synonym).
RELATION_POOL: tuple[str, ...] = (
    "next to",
    "behind",
    "under",
    "on top of",
    "holding",
    "beside",
    "in front of",
    "above",
)

_MASS_NOUNS = {"broccoli", "grass"}
_PAIR_NOUNS = {"skis", "scissors"}

#: The kinds tried, in order, when a hallucination of a kind is drawn (first with a candidate).
FALLBACK_KINDS = {"cooccur": ("cooccur", "frequent", "ood"), "frequent": ("frequent", "ood"),
                   "ood": ("ood", "frequent")}  # fmt: skip


def noun_phrase(name: str) -> str:
    """Indefinite noun phrase with the word itself kept intact ("an umbrella", "a pair of skis")."""
    if name in _MASS_NOUNS:
        return f"some {name}"
    if name in _PAIR_NOUNS:
        return f"a pair of {name}"
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def pick_hallucination(
    kind: str,
    gt: Sequence[str],
    used: Sequence[str],
    mentioned: Sequence[str],
    others: Sequence[str],
    rng: random.Random,
    *,
    frequency: Sequence[str],
    frequent_top_k: int,
) -> tuple[str, str] | None:
    """One hallucinated object and the kind actually used, or ``None`` when no kind has one.

    ``gt``: the present MSCOCO classes; ``used``: objects already hallucinated; ``mentioned``: the
    present classes the answer mentions (co-occurrence triggers, else ``gt``); ``others``: the
    present non-MSCOCO objects; ``frequency``: MSCOCO classes, most frequent first.
    """
    for attempt in FALLBACK_KINDS[kind]:
        if attempt == "frequent":
            absent = [c for c in frequency if c not in gt]
            top = [c for c in absent[:frequent_top_k] if c not in used]
            candidates = top or [c for c in absent if c not in used]
        elif attempt == "cooccur":
            triggers = mentioned or gt
            candidates = []
            for present in triggers:
                for c in COOCCURRENCE.get(present, ()):
                    if c not in gt and c not in used and c not in candidates:
                        candidates.append(c)
        else:
            candidates = [o for o in OOD_POOL if o not in others and o not in used]
        if candidates:
            return rng.choice(candidates), attempt
    return None
