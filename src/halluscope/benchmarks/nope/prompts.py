"""NOPE Appendix A, Table 5: the object-listing and question-rewriting prompts and requests.

Step 1 (listing) and step 4 (rewriting, a second user turn of the listing conversation) of
list-then-rewrite; :data:`TEMPLATE_VERSION` is part of every cache key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from halluscope.models.base import Request

TEMPLATE_VERSION = "nope-ltr-1"
"""Version of the two prompts below; part of every cache key. Bump it when a prompt changes."""

DEFAULT_PARAMS: dict[str, Any] = {"max_new_tokens": 256, "temperature": 0.0, "seed": 0}
"""Generation parameters when none are given (greedy; names as in ``models/hf.py``)."""

RELEVANCE_DESCRIPTORS: dict[str, str] = {
    "closely_related": "closely related",
    "loosely_related": "loosely related",
    "unrelated": "completely unrelated",
}
"""Relevance key -> the phrase put in the listing prompt (§3.1 footnote 1)."""

# ---------------------------------------------------------------------------------------------
# Prompts (NOPE Appendix A, Table 5)
# ---------------------------------------------------------------------------------------------


def listing_prompt(caption: str, labels: Sequence[str], relevance: str, n_objects: int = 10) -> str:
    """The Object Listing Template; the "avoid" sentence is left out when there are no labels."""
    if relevance not in RELEVANCE_DESCRIPTORS:
        raise ValueError(
            f"unknown relevance {relevance!r}; expected one of {', '.join(RELEVANCE_DESCRIPTORS)}"
        )
    caption = " ".join(caption.split())
    instruction = (
        f"List {n_objects} tangible objects that are {RELEVANCE_DESCRIPTORS[relevance]} to the "
        "description, but are not mentioned there."
    )
    clean_labels = [" ".join(str(label).split()) for label in labels if str(label).strip()]
    if clean_labels:
        instruction += f" Also avoid these objects: {', '.join(clean_labels)}."
    return f'Description:\n"{caption}"\n{instruction}'


def rewriting_prompt(questions: Sequence[str]) -> str:
    """The Question Rewriting Template over a numbered list of reference questions."""
    if not questions:
        raise ValueError("the rewriting prompt needs at least one reference question")
    numbered = "\n".join(f"{number}. {q}" for number, q in enumerate(questions, start=1))
    return (
        f"Question templates:\n{numbered}\nParaphrase each of these {len(questions)} questions "
        "while keeping the sentence as a question with a question mark."
    )


PROMPTS = ("paper", "fewshot")
"""Listing prompt variants: the paper's zero-shot template, or it after one worked example."""

FEWSHOT_CAPTION = "In this picture we can see some food products in the glass jars."
"""The caption of the paper's Table 5 example (its labels: "Vegetable")."""

# fmt: off
FEWSHOT_EXAMPLES: dict[str, tuple[str, ...]] = {
    # The paper's Table 5 response (first ten), then five more of ours.
    "closely_related": (
        "spices", "canned fruits", "nuts", "sugar", "coffee beans", "honey", "pasta",
        "chocolates", "tea leaves", "jams and preserves", "flour", "rice", "olive oil",
        "dried herbs", "cereal",
    ),
    "loosely_related": (
        "kitchen shelf", "cookbook", "apron", "refrigerator", "shopping bag", "oven mitt",
        "recipe card", "kettle", "napkin", "dish towel", "measuring cup", "cutting board",
        "grocery receipt", "pantry door", "wooden spoon",
    ),
    "unrelated": (
        "bicycle", "surfboard", "tractor", "violin", "snowman", "helicopter", "hammer",
        "tennis racket", "lighthouse", "giraffe", "parachute", "anchor", "skateboard", "tent",
        "traffic cone",
    ),
}
# fmt: on
"""The answers of the few-shot example, per relevance (the first ``n_objects`` are shown)."""


def listing_messages(
    caption: str,
    labels: Sequence[str],
    relevance: str,
    n_objects: int = 10,
    prompt: str = "paper",
) -> tuple[dict[str, str], ...]:
    """The chat turns of step 1: the listing prompt, after the worked example for ``fewshot``.

    The example comes first so that every request of one relevance level shares it as a prefix
    (llama.cpp then reuses its evaluated tokens).
    """
    if prompt not in PROMPTS:
        raise ValueError(f"unknown NOPE prompt {prompt!r}; expected one of {', '.join(PROMPTS)}")
    turns: list[dict[str, str]] = []
    if prompt == "fewshot":
        example = FEWSHOT_EXAMPLES[relevance][:n_objects]
        question = listing_prompt(FEWSHOT_CAPTION, ["Vegetable"], relevance, n_objects)
        turns.append({"role": "user", "content": question})
        answer = "\n".join(f"{k}. {name}" for k, name in enumerate(example, start=1))
        turns.append({"role": "assistant", "content": answer})
    turns.append({"role": "user", "content": listing_prompt(caption, labels, relevance, n_objects)})
    return tuple(turns)


#: ``nope.llm.stop_rule`` -> the backend stop rules (:mod:`halluscope.models.stop_rules`) of the
#: listing and of the rewrite turn. ``count``: the listing ends once ``n_objects`` distinct
#: names are listed, the rewrite once every paraphrase is read (the parsed names and
#: paraphrases equal the uncut reply's); ``count-repeat``: the listing also ends at the first
#: repeated name. ``none`` (absent): requests as before.
STOP_RULES: dict[str, tuple[str, str]] = {
    "count": ("nope-objects", "nope-questions"),
    "count-repeat": ("nope-objects-repeat", "nope-questions"),
}
_LISTING_RULES = {listing: rewrite for listing, rewrite in STOP_RULES.values()}


def listing_params(params: Mapping[str, Any] | None, n_objects: int) -> dict[str, Any]:
    """The listing's request params: ``params`` (default :data:`DEFAULT_PARAMS`) with a
    ``nope.llm.stop_rule`` turned into the backend's rule and its ``stop_items`` (``n_objects``)."""
    out = dict(DEFAULT_PARAMS if params is None else params)
    rule = out.pop("stop_rule", "none")
    if rule in STOP_RULES:
        out.update(stop_rule=STOP_RULES[rule][0], stop_items=int(n_objects))
    elif rule != "none":
        out["stop_rule"] = rule  # a backend rule given as it is
    return out


def _request_id(kind: str, image_id: Any, relevance: str) -> str:
    return f"nope-{kind}/{image_id}/{relevance}"


def listing_request(
    image_id: Any,
    caption: str,
    labels: Sequence[str],
    relevance: str,
    n_objects: int = 10,
    params: Mapping[str, Any] | None = None,
    prompt: str = "paper",
) -> Request:
    """A text-only chat request for step 1 (no image: NOPE lists objects from the caption)."""
    return Request(
        request_id=_request_id("list", image_id, relevance),
        messages=listing_messages(caption, labels, relevance, n_objects, prompt),
        params=listing_params(params, n_objects),
        task="chat",
        meta={"image_id": image_id, "relevance": relevance, "step": "list"},
    )


def rewriting_request(
    listing: Request,
    listing_answer: str,
    questions: Sequence[str],
    params: Mapping[str, Any] | None = None,
) -> Request:
    """Step 4 as the second turn of the listing conversation (§3.1: multi-turn prompting).

    Without ``params`` the listing's params are used; a listing stop rule becomes the rewrite's
    (``nope-questions`` with ``stop_items`` = the number of questions)."""
    meta = dict(listing.meta, step="rewrite")
    if params is None:
        params = dict(listing.params)
        if params.get("stop_rule") in _LISTING_RULES:
            params.update(stop_rule=_LISTING_RULES[params["stop_rule"]], stop_items=len(questions))
    return Request(
        request_id=listing.request_id.replace("nope-list/", "nope-rewrite/", 1),
        messages=(
            *listing.messages,
            {"role": "assistant", "content": listing_answer},
            {"role": "user", "content": rewriting_prompt(questions)},
        ),
        params=dict(params),
        task="chat",
        meta=meta,
    )
