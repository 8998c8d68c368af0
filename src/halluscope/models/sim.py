"""Simulated LVLMs: documented, seeded caption/answer generators with *known* hallucinations.

Why: the demo profile must run anywhere without a GPU, and the metrics need test instruments whose
truth is known. A simulated LVLM composes its answers from an image's annotations (an item of
``results/data/{dataset}/items.jsonl``) and injects hallucinated objects at configured rates and
styles, recording what it did in ``Response.meta``. Every table or figure made from them must say
they are simulated (their names start with ``sim-``).

Captions (``task="caption"``), for any instruction text:

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
   (:data:`COOCCURRENCE`); ``ood`` -- an out-of-domain object absent from the annotations
   (:data:`OOD_POOL`). When a kind has no candidate the next one is used
   (cooccur -> frequent -> ood) and the kind actually used is recorded. Hallucinated objects are
   inserted after the first mention, at seeded random places.
5. Surface words: every MSCOCO object (present or hallucinated) is written with its class name
   ("a dining table", "a cell phone"), never pluralised, so a CHAIR-style parser maps it back to the
   class; :data:`OOD_POOL` and the template words contain no MSCOCO synonym.

``meta`` of a caption: ``injected`` [{name, kind}], ``mentioned`` (present MSCOCO objects),
``mentioned_other`` (present other objects), ``omitted`` (present MSCOCO objects left out), all in
caption order, plus ``relations`` [{subject, relation, object, correct}], ``style`` and ``slots``.

Oracle (``task="oracle"``, "Does the image contain <object>? ... Present or Absent."): the truth is
whether <object> is among the annotated objects; the answer is flipped with probability
``oracle_error_rate``. Yes/no (``task="yesno"``, "Is there a <object> in the image?"): a present
object gets "No" with probability ``yesno_miss_rate``; an absent one gets "Yes" with probability
``yes_bias``. Both record ``{"object", "truth", "answer", "flipped"}``.

Benchmark tasks. **The sim is handed the answer key in ``Request.meta``** (reference triplets,
yes/no labels): it is a test instrument whose errors must be injected at known rates, not a model
that looks at pixels. Real backends never see ``meta``. Because ``meta`` is not part of the
response-cache key, the stages that send these tasks add a digest of the answer key to the
template version for ``sim`` backends (see ``stages/trihe.py``, ``stages/phd.py``).

- Tri-HE (``task="trihe"``): ``meta["triplets"]`` = the question's reference triplets
  ``[[subject, relation, object], ...]``. The answer states each of them as one sentence
  (:func:`triplet_sentence`: "The <s> is <r> the <o>." or "The <s> has the <o>."). One uniform
  draw per triplet: below ``trihe_object_error_rate`` the subject or the object (even odds) is
  replaced by an object absent from the image (:data:`OOD_POOL` plus MSCOCO classes, none of the
  annotated names); else below ``trihe_object_error_rate + trihe_relation_error_rate`` the
  relation is replaced by one of :data:`TRIHE_RELATION_POOL` that is not the true relation, not
  a near-synonym of it (:data:`NEAR_RELATIONS`) and not annotated for that pair. ``meta``:
  ``{"triplets": [{"said", "truth", "error": null|"object"|"relation", "slot"}],
  "n_object_errors", "n_relation_errors"}``.
- Tri-HE mitigation, step 1 (``task="trihe-describe"``, with the image): the same triplets with
  the same error draws, written one per line as ``(s, r, o)``; step 2 (``task="trihe-answer"``,
  text only, no image): the ``(s, r, o)`` lines found in the prompt (the description) restated
  as sentences, no new errors. So the sim shows no mitigation effect by construction; it
  exercises the two-step path.
- PhD (``task="phd"``): ``meta["label"]`` is ``"yes"`` or ``"no"``. A yes-question gets "No."
  with probability ``yesno_miss_rate``, a no-question "Yes." with probability ``yes_bias``.
  When the prompt carries a PhD context (it contains
  :data:`halluscope.data.phd.CONTEXT_INSTRUCTION`, modes iac/sec and icc), that error
  probability ``p`` becomes ``p + s * (1 - p)``: the model follows the text instead of the image
  that much more often, with ``s = context_susceptibility`` for an incorrect context and half of
  it when ``meta["mode"]`` is ``"iac"`` (an inaccurate context misleads less than one that
  contradicts the image, as the paper finds). The draw is seeded on the question *without* its
  context, so a context can only add errors to what the base mode gets, and the iac errors are a
  subset of the icc ones. ``meta``: ``{"label", "answer", "flipped", "context", "p_error"}``.

- NOPE (``task="nope"``): ``meta["is_negp"]`` (the ground truth is a negative indefinite
  pronoun), ``meta["reference"]`` (a string or a list of acceptable answers),
  ``meta["acceptable_answers"]`` (the question's NegP forms, Table 6) and
  ``meta["question_type"]``. One uniform draw per question. A NegP question is answered with one
  of its acceptable NegP forms (seeded pick, so exact match can miss while NegP accuracy counts
  it) when the draw is below ``negp_accuracy``; otherwise the sim hallucinates: it picks an
  object absent from the image from its hallucination pools (kind drawn from ``style_weights``,
  as in captions) and answers in the question type's form: the object ("object"), "on the
  <object>" ("location"), a colour of :data:`COLOR_POOL` ("color"), a count 1-5 ("counting"), a
  person word of :data:`PERSON_POOL` ("person"). Another question gets its (first) reference,
  or with probability ``vqa_error_rate`` a wrong answer: another object of the image (an absent
  one when the image has none left), for "location" with a relation of :data:`RELATION_POOL`.
  ``meta``: ``{"is_negp", "answer", "correct", "kind": "negp"|"hallucination"|"reference"|
  "wrong", "object"}``.

Randomness: ``random.Random(seed)`` with the seed taken from the sha256 of (model name,
``params["seed"]``, image id, prompt text, task) -- never Python's salted ``hash()``. The prompt
*text* stands for the instruction (rather than its id) because the response cache keys on the
text: two instruction ids with the same text must get the same answer, whatever order they run in.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from halluscope.models.base import Request, Response, register_backend

SIM_VERSION = "1"

# Fallbacks until/unless halluscope.objects.coco is importable; the real tables live there.
_FALLBACK_FREQUENCY_ORDER: tuple[str, ...] = (
    "person", "car", "chair", "book", "bottle", "cup", "dining table", "bowl", "traffic light",
    "handbag", "umbrella", "bird", "boat", "truck", "bench", "sheep", "banana", "kite",
    "motorcycle", "backpack", "potted plant", "cow", "wine glass", "carrot", "knife", "broccoli",
    "donut", "bicycle", "skis", "vase", "horse", "tie", "cell phone", "orange", "cake",
    "sports ball", "clock",
    "suitcase", "spoon", "surfboard", "bus", "apple", "pizza", "tv", "couch", "remote", "sink",
    "skateboard", "elephant", "dog", "fork", "zebra", "airplane", "giraffe", "laptop",
    "tennis racket", "teddy bear", "cat", "train", "sandwich", "bed", "toilet", "baseball glove",
    "oven", "baseball bat", "hot dog", "keyboard", "snowboard", "frisbee", "refrigerator", "mouse",
    "stop sign", "toothbrush", "fire hydrant", "microwave", "scissors", "bear", "parking meter",
    "toaster", "hair drier",
)  # fmt: skip


def frequency_order() -> tuple[str, ...]:
    """MSCOCO classes, most frequent first (from ``objects.coco`` when available)."""
    try:
        from halluscope.objects.coco import COCO_FREQUENCY_ORDER
    except ImportError:
        return _FALLBACK_FREQUENCY_ORDER
    return tuple(COCO_FREQUENCY_ORDER)


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

# Wrong relations of Tri-HE answers: actions and spatial relations that are false for the
# annotated pairs of the demo (the sim also skips any relation annotated for the pair).
TRIHE_RELATION_POOL: tuple[str, ...] = (
    "eating", "riding", "throwing", "chasing", "pulling", "kicking", "climbing", "carrying",
    "under", "above", "inside", "hanging from",
)  # fmt: skip

#: Colours a hallucinating sim gives for a NOPE colour question about an absent object.
COLOR_POOL: tuple[str, ...] = ("red", "blue", "white", "black", "green", "brown", "yellow")

#: Person words a hallucinating sim gives for a NOPE "who" question.
PERSON_POOL: tuple[str, ...] = ("man", "woman", "boy", "girl", "chef", "worker")

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

_MASS_NOUNS = {"broccoli", "grass"}
_PAIR_NOUNS = {"skis", "scissors"}

KINDS = ("frequent", "cooccur", "ood")
_FALLBACK_KINDS = {"cooccur": ("cooccur", "frequent", "ood"), "frequent": ("frequent", "ood"),
                   "ood": ("ood", "frequent")}  # fmt: skip

PROFILE_FIELDS: dict[str, str] = {
    "max_objects": "objects a full-length caption mentions (int >= 1)",
    "omission_rate": "probability that a present MSCOCO object is left out",
    "hallucination_rate": "probability per caption slot of one hallucinated object",
    "style_weights": "relative weights of hallucination kinds {frequent, cooccur, ood}",
    "frequent_top_k": "frequent hallucinations come from the top-k MSCOCO classes (int >= 1)",
    "ood_rate": "probability of mentioning each truly visible non-MSCOCO object",
    "relation_error_rate": "probability that a rendered relation is replaced by a wrong one",
    "oracle_error_rate": "probability that a Present/Absent oracle answer is flipped",
    "yes_bias": "probability of answering Yes about an absent object (POPE) / a no-question (PhD)",
    "yesno_miss_rate": "probability of answering No about a present object / a yes-question",
    "trihe_relation_error_rate": "probability that a Tri-HE answer triplet gets a wrong relation",
    "trihe_object_error_rate": "probability that a Tri-HE answer triplet gets an absent object",
    "context_susceptibility": "share of the remaining PhD answers that follow a context, not the "
    "image",
    "negp_accuracy": "probability that a NOPE NegP question gets a NegP answer (else an object "
    "is hallucinated)",
    "vqa_error_rate": "probability that a NOPE question with another answer is answered wrongly",
}

#: Fields a complete dict profile may leave out (they were added later; 0 = behaviour unchanged).
PROFILE_DEFAULTS: dict[str, float] = {
    "trihe_relation_error_rate": 0.0,
    "trihe_object_error_rate": 0.0,
    "context_susceptibility": 0.0,
    "negp_accuracy": 0.0,
    "vqa_error_rate": 0.0,
}

PROFILES: dict[str, dict[str, Any]] = {
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
        "trihe_relation_error_rate": 0.05,
        "trihe_object_error_rate": 0.03,
        "context_susceptibility": 0.1,
        "negp_accuracy": 0.6,
        "vqa_error_rate": 0.1,
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
        "trihe_relation_error_rate": 0.35,
        "trihe_object_error_rate": 0.1,
        "context_susceptibility": 0.3,
        "negp_accuracy": 0.1,
        "vqa_error_rate": 0.25,
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
        "trihe_relation_error_rate": 0.15,
        "trihe_object_error_rate": 0.25,
        "context_susceptibility": 0.5,
        "negp_accuracy": 0.3,
        "vqa_error_rate": 0.15,
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
        "trihe_relation_error_rate": 0.1,
        "trihe_object_error_rate": 0.2,
        "context_susceptibility": 0.2,
        "negp_accuracy": 0.2,
        "vqa_error_rate": 0.3,
    },
}


def _sha256_json(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _rng(*parts: Any) -> random.Random:
    """A generator seeded from the sha256 of ``parts`` (never the salted built-in ``hash``)."""
    return random.Random(int(_sha256_json([str(p) for p in parts])[:16], 16))


def _check_rate(name: str, value: Any, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{where}: {name} must be a number in [0, 1], got {value!r}")


def validate_profile(profile: Mapping[str, Any], where: str = "sim profile") -> dict[str, Any]:
    """Check a complete profile (every field of :data:`PROFILE_FIELDS`, nothing else; the fields
    of :data:`PROFILE_DEFAULTS` may be left out)."""
    profile = {**PROFILE_DEFAULTS, **dict(profile)}
    unknown = sorted(set(profile) - set(PROFILE_FIELDS))
    missing = sorted(set(PROFILE_FIELDS) - set(profile))
    if unknown:
        raise ValueError(
            f"{where}: unknown field(s) {unknown}; valid fields: {sorted(PROFILE_FIELDS)}"
        )
    if missing:
        raise ValueError(f"{where}: missing field(s) {missing}")
    for name in ("max_objects", "frequent_top_k"):
        value = profile[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{where}: {name} must be an integer >= 1, got {value!r}")
    probabilities = ("yes_bias", "context_susceptibility", "negp_accuracy")
    for name in PROFILE_FIELDS:
        if name.endswith("_rate") or name in probabilities:
            _check_rate(name, profile[name], where)
    if profile["trihe_relation_error_rate"] + profile["trihe_object_error_rate"] > 1:
        raise ValueError(
            f"{where}: trihe_relation_error_rate + trihe_object_error_rate must be <= 1 "
            "(one draw per triplet decides object error, relation error or correct)"
        )
    weights = profile["style_weights"]
    if not isinstance(weights, Mapping) or set(weights) - set(KINDS):
        raise ValueError(
            f"{where}: style_weights must map a subset of {list(KINDS)} to weights, got {weights!r}"
        )
    for kind, weight in weights.items():
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0:
            raise ValueError(f"{where}: style_weights[{kind!r}] must be >= 0, got {weight!r}")
    if profile["hallucination_rate"] > 0 and sum(weights.values()) <= 0:
        raise ValueError(
            f"{where}: style_weights must have a positive weight when hallucination_rate > 0"
        )
    result = copy.deepcopy(dict(profile))
    result["style_weights"] = {kind: float(weights.get(kind, 0.0)) for kind in KINDS}
    return result


def resolve_profile(
    profile: str | Mapping[str, Any] | None, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A built-in profile by name (or a complete dict); ``overrides`` replace whole fields."""
    if isinstance(profile, str):
        if profile not in PROFILES:
            raise ValueError(
                f"unknown sim profile {profile!r}; valid profiles: {', '.join(sorted(PROFILES))}"
            )
        base = copy.deepcopy(PROFILES[profile])
        where = f"sim profile {profile!r}"
    elif isinstance(profile, Mapping):
        base = copy.deepcopy(dict(profile))
        where = "sim profile"
    else:
        raise ValueError(
            f"sim profile must be a name ({', '.join(sorted(PROFILES))}) or a dict, got {profile!r}"
        )
    base.update(copy.deepcopy(dict(overrides or {})))
    return validate_profile(base, where)


# ----------------------------------------------------------------------------------------------
# Instructions and text


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


def noun_phrase(name: str) -> str:
    """Indefinite noun phrase with the word itself kept intact ("an umbrella", "a pair of skis")."""
    if name in _MASS_NOUNS:
        return f"some {name}"
    if name in _PAIR_NOUNS:
        return f"a pair of {name}"
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


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


# ----------------------------------------------------------------------------------------------
# Tri-HE sentences


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


# ----------------------------------------------------------------------------------------------
# Prompts of the discriminative tasks

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


# ----------------------------------------------------------------------------------------------
# The model


class SimulatedLVLM:
    """A simulated LVLM over annotated items (see the module docstring for its exact behaviour)."""

    def __init__(
        self, name: str, profile: Mapping[str, Any], items: Mapping[str, Mapping[str, Any]]
    ) -> None:
        self.name = name
        self.profile = validate_profile(profile, f"sim profile of model {name!r}")
        self.items = {str(k): dict(v) for k, v in items.items()}
        self._frequency = frequency_order()
        revision = _sha256_json(
            {
                "version": SIM_VERSION,
                "profile": self.profile,
                "items": self.items,
                "frequency": list(self._frequency),
                "cooccurrence": COOCCURRENCE,
                "ood": list(OOD_POOL),
                "relations": list(RELATION_POOL),
            }
        )
        self._identity = {
            "backend": "sim",
            "name": name,
            "revision": f"sim{SIM_VERSION}-{revision[:16]}",
        }

    @property
    def identity(self) -> dict:
        """Name plus a revision that changes with the profile, the annotations or the tables."""
        return dict(self._identity)

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        """Answer each request (same order)."""
        return [self._answer(request) for request in requests]

    # -- helpers --------------------------------------------------------------------------------

    def _item(self, request: Request) -> dict[str, Any]:
        if request.image_id is None or str(request.image_id) not in self.items:
            raise ValueError(
                f"sim model {self.name!r}: request {request.request_id!r} names image "
                f"{request.image_id!r}, which is not among its {len(self.items)} annotated items"
            )
        return self.items[str(request.image_id)]

    def _answer(self, request: Request) -> Response:
        if request.task == "trihe-answer":  # text only: restates the description in the prompt
            lines = description_triplets(request.prompt)
            text = " ".join(triplet_sentence(*t) for t in lines) or "I cannot tell."
            return self._response(request, text, {"from_description": len(lines)})
        item = self._item(request)
        seed = request.params.get("seed", 0)
        rng = _rng(self.name, seed, request.image_id, request.prompt, request.task)
        if request.task == "caption":
            text, meta = self._caption(item, request.prompt, rng)
        elif request.task in ("oracle", "yesno"):
            text, meta = self._judge(item, request.prompt, request.task, rng)
        elif request.task in ("trihe", "trihe-describe"):
            # The describe step draws exactly as a direct answer would (same question, same seed).
            question = request.meta.get("question", request.prompt)
            rng = _rng(self.name, seed, request.image_id, question, "trihe")
            text, meta = self._trihe(item, request, rng)
        elif request.task == "phd":
            text, meta = self._phd(request, seed)
        elif request.task == "nope":
            text, meta = self._nope(item, request, rng)
        else:
            raise ValueError(
                f"sim model {self.name!r} cannot answer task {request.task!r} "
                f"(request {request.request_id!r}); it answers caption, oracle, yesno, trihe, "
                "trihe-describe, trihe-answer, phd and nope"
            )
        return self._response(request, text, meta)

    def _response(self, request: Request, text: str, meta: dict) -> Response:
        return Response(
            request_id=request.request_id,
            text=text,
            model=self.name,
            identity=self.identity,
            meta=meta,
        )

    def _truth(self, request: Request, key: str) -> Any:
        if key not in request.meta:
            raise ValueError(
                f"sim model {self.name!r}: request {request.request_id!r} (task {request.task!r}) "
                f"needs the answer key in meta[{key!r}]: the sim is a test instrument that "
                "injects errors into known answers"
            )
        return request.meta[key]

    def _trihe(
        self, item: Mapping[str, Any], request: Request, rng: random.Random
    ) -> tuple[str, dict]:
        p = self.profile
        truth = self._truth(request, "triplets")
        if not isinstance(truth, list) or not all(
            isinstance(t, (list, tuple)) and len(t) == 3 for t in truth
        ):
            raise ValueError(
                f"sim model {self.name!r}: request {request.request_id!r}: meta['triplets'] must "
                f"be a list of [subject, relation, object], got {truth!r}"
            )
        relations = [tuple(str(x) for x in t) for t in item.get("relations", []) or []]
        present = {str(o).lower() for o in item.get("gt_objects", [])}
        present |= {str(o).lower() for o in item.get("other_objects", [])}
        present |= {name.lower() for t in relations for name in (t[0], t[2])}
        absent = [o for o in dict.fromkeys(OOD_POOL + self._frequency) if o not in present]
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

    def _phd(self, request: Request, seed: Any) -> tuple[str, dict]:
        from halluscope.data.phd import CONTEXT_INSTRUCTION

        p = self.profile
        label = self._truth(request, "label")
        if label not in ("yes", "no"):
            raise ValueError(
                f"sim model {self.name!r}: request {request.request_id!r}: meta['label'] must be "
                f"'yes' or 'no', got {label!r}"
            )
        prompt = request.prompt
        context = CONTEXT_INSTRUCTION.strip() in prompt
        question = prompt.split(CONTEXT_INSTRUCTION.strip(), 1)[1].strip() if context else prompt
        p_error = p["yesno_miss_rate"] if label == "yes" else p["yes_bias"]
        if context:
            weight = 0.5 if request.meta.get("mode") in ("iac", "sec") else 1.0
            p_error += weight * p["context_susceptibility"] * (1.0 - p_error)
        rng = _rng(self.name, seed, request.image_id, question, "phd")
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

    def _nope(
        self, item: Mapping[str, Any], request: Request, rng: random.Random
    ) -> tuple[str, dict]:
        p = self.profile
        is_negp = self._truth(request, "is_negp")
        reference = self._truth(request, "reference")
        references = [reference] if isinstance(reference, str) else list(reference or [])
        if not isinstance(is_negp, bool) or not references:
            raise ValueError(
                f"sim model {self.name!r}: request {request.request_id!r}: meta['is_negp'] must "
                f"be true/false and meta['reference'] a non-empty answer, got {is_negp!r}, "
                f"{reference!r}"
            )
        qtype = str(request.meta.get("question_type") or "object")
        gt = sorted(str(o) for o in item.get("gt_objects", []))
        present = [*gt, *(str(o).lower() for o in item.get("other_objects", []))]
        draw = rng.random()
        obj = None
        if is_negp and draw < p["negp_accuracy"]:
            forms = [str(a) for a in request.meta.get("acceptable_answers") or references]
            text, kind = rng.choice(forms), "negp"
        elif is_negp:
            weights = [p["style_weights"][k] for k in KINDS]
            kind_drawn = rng.choices(KINDS, weights=weights)[0] if sum(weights) else "ood"
            picked = self._pick_hallucination(kind_drawn, gt, [], gt, present, rng)
            obj = picked[0] if picked else rng.choice(OOD_POOL)
            text, kind = self._nope_form(qtype, obj, rng), "hallucination"
        elif draw < p["vqa_error_rate"]:
            wrong = [o for o in present if o not in references]
            obj = rng.choice(wrong) if wrong else rng.choice([o for o in OOD_POOL if o not in gt])
            text, kind = self._nope_form(qtype, obj, rng), "wrong"
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

    @staticmethod
    def _nope_form(question_type: str, obj: str, rng: random.Random) -> str:
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

    def _judge(
        self, item: Mapping[str, Any], prompt: str, task: str, rng: random.Random
    ) -> tuple[str, dict]:
        name = question_object(prompt)
        known = [
            str(o).lower()
            for o in list(item.get("gt_objects", [])) + list(item.get("other_objects", []))
        ]
        truth = name in known or (name.endswith("s") and name[:-1] in known)
        p = self.profile
        if task == "oracle":
            flipped = rng.random() < p["oracle_error_rate"]
            answer = truth != flipped
            text = "Present" if answer else "Absent"
        else:
            answer = rng.random() >= p["yesno_miss_rate"] if truth else rng.random() < p["yes_bias"]
            flipped = answer != truth
            text = (
                f"Yes, there is {noun_phrase(name)} in the image."
                if answer
                else f"No, there is no {name} in the image."
            )
        return text, {"object": name, "truth": truth, "answer": answer, "flipped": flipped}

    def _pick_hallucination(
        self,
        kind: str,
        gt: list[str],
        used: list[str],
        mentioned: list[str],
        others: list[str],
        rng: random.Random,
    ) -> tuple[str, str] | None:
        for attempt in _FALLBACK_KINDS[kind]:
            if attempt == "frequent":
                absent = [c for c in self._frequency if c not in gt]
                top = [c for c in absent[: self.profile["frequent_top_k"]] if c not in used]
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

    def _caption(
        self, item: Mapping[str, Any], instruction: str, rng: random.Random
    ) -> tuple[str, dict]:
        p = self.profile
        style = instruction_style(instruction)
        variant = int(_sha256_json([self.name, instruction])[:8], 16)
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
            picked = self._pick_hallucination(kind, gt, used, kept, others, rng)
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
        injected = [
            {"name": c["objects"][0], "kind": c["injected"]} for c in chunks if "injected" in c
        ]
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


def sim_items(
    items: Mapping[str, Mapping[str, Any]] | Sequence[Mapping[str, Any]] | None,
) -> dict[str, dict]:
    """Items keyed by image id, from a mapping or a list of ``items.jsonl`` records."""
    if items is None:
        raise ValueError("the sim backend needs the dataset items (make_backend(spec, items=...))")
    if isinstance(items, Mapping):
        return {str(k): dict(v) for k, v in items.items()}
    return {str(record["image_id"]): dict(record) for record in items}


@register_backend("sim")
def from_spec(
    spec: Mapping[str, Any], items: Any = None, model_name: str | None = None, **_: Any
) -> SimulatedLVLM:
    """``{"backend": "sim", "name": ..., "profile": <built-in name or dict>, "overrides": {...}}``.

    The model name is ``spec["name"]``, else the ``model_name`` context (the ``params.yaml`` model
    id), else the profile name; ``profile`` defaults to the name, so
    ``{"backend": "sim", "profile": "sim-verbose"}`` is enough.
    """
    name = spec.get("name") or model_name or spec.get("profile")
    if not isinstance(name, str):
        raise ValueError(f"sim model spec needs a 'name' (or a profile name): {dict(spec)!r}")
    profile = resolve_profile(spec.get("profile", name), spec.get("overrides"))
    return SimulatedLVLM(name, profile, sim_items(items))
