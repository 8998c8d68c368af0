"""Triplet extraction from model answers (Tri-HE's "knowledge graph extraction", §3.3).

Why an LLM: Tri-HE turns every answer into (subject, relation, object) triplets with GPT-4 and
judges the triplets, so that answers of any form can be scored. halluscope asks any chat model
through the shared backends and the response cache, and never guesses: a reply is read only as
JSON, and a triplet counts only when it is exactly three non-empty strings. Everything else is
recorded under ``invalid`` (with the unit it came from and why) and left out; an answer whose
units all fail gives no triplet, so Tri-HE skips its question (``n_q = 0``).

Methods:

- ``llm``: one chat request per *unit* of the answer. ``unit="sentence"`` (the demo: small models
  extract far better from one sentence at a time) asks for one triplet
  ``{"subject", "relation", "object"}`` per sentence; ``unit="answer"`` asks for
  ``{"triplets": [[s, r, o], ...]}`` for the whole answer, as the paper's GPT-4 prompt does. The
  prompts (:data:`SENTENCE_SYSTEM`, :data:`ANSWER_SYSTEM`, few-shot examples written for
  halluscope, none taken from the demo data) are halluscope's own wording of the task of the
  paper's Appendix A.1. With ``json_schema`` the backend constrains the reply to that JSON
  (``llamacpp`` and OpenAI-compatible servers); for sentences each field is further restricted
  to a span of 1-5 words of the sentence (:func:`sentence_schema`), so a small model cannot
  invent words. Measured on the demo's 75 distinct simulated sentences with SmolLM2-135M: 16
  extractions differ from the template's triplet (several of them harmless, e.g. "is wearing"
  for "wearing"; others swap subject and object), against 31 without the span constraint and
  the longer few-shot list.
- ``rule``: reads the simulated LVLMs' sentence template only ("The <s> is <r> the <o>." /
  "The <s> has the <o>.", :func:`halluscope.benchmarks.trihe.simulated.triplet_sentence`). It
  is a test instrument for runs without an LLM, not an extractor for real answers; a sentence of
  another form is recorded as invalid.

Stop rules (``trihe.extractor.llm.stop_rule``, a generation param, so it keys the response cache;
``llamacpp`` only, :mod:`halluscope.models.stop_rules`): ``json-value`` ends the reply as soon as
it is one complete JSON value (either unit: what a schema-constrained model may still add is
white space before the end of generation); ``triplet-list`` (``unit: answer``) ends the
``triplets`` list at the first repeated triplet (fields compared lower case, spaces stripped)
and closes it, and closes a reply cut by the token cap after its last complete triplet
(:func:`triplet_list_cut`). ``none`` (the default) keeps the requests and replies as before.

Records (one per answer): ``{"triplets": [[s, r, o], ...], "invalid": [{"unit", "raw",
"reason"}], "n_units"}``. Requests go through :class:`~halluscope.models.cache.ResponseCache`
with the template version ``<template_version>/<PROMPT_VERSION>``, one request per distinct unit.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from halluscope.models.base import Backend, Request
from halluscope.models.cache import ResponseCache, is_success
from halluscope.models.stop_rules import list_cut

PROMPT_VERSION = "trihe-triplets-1"
METHODS = ("llm", "rule")
UNITS = ("sentence", "answer")
STOP_RULES = ("none", "json-value", "triplet-list")

SENTENCE_SYSTEM = (
    "Extract the (subject, relation, object) triplet that a sentence states. Answer only with "
    'JSON {"subject": ..., "relation": ..., "object": ...}. The subject is the noun before the '
    "verb, the object is the last noun, and the relation is every word between them except "
    "'is' and 'the'."
)
SENTENCE_EXAMPLES: tuple[tuple[str, tuple[str, str, str]], ...] = (
    ("The dog is lying on the sofa.", ("dog", "lying on", "sofa")),
    ("The book is on the shelf.", ("book", "on", "shelf")),
    ("The man is wearing a hat.", ("man", "wearing", "hat")),
    ("The car is behind the truck.", ("car", "behind", "truck")),
    ("The horse has a long tail.", ("horse", "has", "tail")),
    (
        "The traffic light is in front of the street sign.",
        ("traffic light", "in front of", "street sign"),
    ),
    ("The fish is in the bowl.", ("fish", "in", "bowl")),
    ("The clock is part of the tower.", ("clock", "part of", "tower")),
    ("The woman is looking at the painting.", ("woman", "looking at", "painting")),
)
#: Longest word span a field of the sentence unit may be (see :func:`sentence_schema`).
MAX_SPAN_WORDS = 5

ANSWER_SYSTEM = (
    "Extract the knowledge graph of an answer about an image: every fact the answer states, as "
    '(subject, relation, object) triplets. Answer only with JSON {"triplets": [[subject, '
    "relation, object], ...]} using the words of the answer; leave out opinions and facts with no "
    "object."
)
ANSWER_EXAMPLES: tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...] = (
    (
        "A woman is holding an umbrella, so it is probably raining.",
        (("woman", "holding", "umbrella"),),
    ),
    (
        "The dog is lying on the sofa next to a pillow. It looks relaxed.",
        (("dog", "lying on", "sofa"), ("dog", "next to", "pillow")),
    ),
    (
        "There is a clock on the tower, and a bird is flying above it.",
        (("clock", "on", "tower"), ("bird", "flying above", "tower")),
    ),
)

_FIELD = {"type": "string", "minLength": 1, "maxLength": 40}
SENTENCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"subject": _FIELD, "relation": _FIELD, "object": _FIELD},
    "required": ["subject", "relation", "object"],
    "additionalProperties": False,
}
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "triplets": {
            "type": "array",
            "items": {"type": "array", "items": _FIELD, "minItems": 3, "maxItems": 3},
            "maxItems": 8,
        }
    },
    "required": ["triplets"],
    "additionalProperties": False,
}

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_SPAN_WORD = re.compile(r"[A-Za-z0-9]+(?:['-][A-Za-z0-9]+)*")
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.IGNORECASE)
_SIM_TEMPLATE = re.compile(
    r"^(?:the|a|an)\s+(?P<s>.+?)\s+(?:(?:is|are)\s+(?P<r>.+?)|(?P<v>has|have|wears|holds|contains|"
    r"carries|covers))\s+(?:the|a|an)\s+(?P<o>.+?)[.!]?$",
    re.IGNORECASE,
)


def word_spans(text: str, max_words: int = MAX_SPAN_WORDS) -> list[str]:
    """Every run of 1..``max_words`` consecutive words of ``text``, in order, without repeats."""
    words = _SPAN_WORD.findall(text)
    spans = [
        " ".join(words[i:j])
        for i in range(len(words))
        for j in range(i + 1, min(len(words), i + max_words) + 1)
    ]
    return list(dict.fromkeys(spans))


def sentence_schema(sentence: str) -> dict[str, Any]:
    """:data:`SENTENCE_SCHEMA` with every field restricted to a word span of the sentence.

    Why: a small model asked for "the words of the sentence" still invents words ("monline" for
    "ribbon"); grammar-constrained decoding over the sentence's spans leaves it only the choice
    of the split. A sentence without words keeps the plain schema.
    """
    spans = word_spans(sentence)
    if not spans:
        return SENTENCE_SCHEMA
    field = {"type": "string", "enum": spans}
    return {**SENTENCE_SCHEMA, "properties": {k: field for k in ("subject", "relation", "object")}}


def split_sentences(text: str) -> list[str]:
    """Sentences of an answer (split after ``.``, ``!`` or ``?`` followed by white space)."""
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def as_triplet(value: Any) -> tuple[list[str] | None, str]:
    """``([s, r, o], "")`` for three non-empty strings (a list or a subject/relation/object
    mapping), else ``(None, reason)``. Strings are stripped, nothing else is changed."""
    if isinstance(value, Mapping):
        if set(value) != {"subject", "relation", "object"}:
            return None, f"keys {sorted(value)} are not subject, relation, object"
        value = [value["subject"], value["relation"], value["object"]]
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        return None, "not a list of three fields"
    if not all(isinstance(v, str) for v in value):
        return None, "a field is not a string"
    fields = [v.strip() for v in value]
    if not all(fields):
        return None, "an empty field"
    return fields, ""


def _json(text: str) -> Any:
    body = _FENCE.sub("", text.strip())
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        start = body.find("{")
        if start < 0:
            raise
        value, _ = json.JSONDecoder().raw_decode(body, start)
        return value


def parse_reply(text: str, unit: str) -> tuple[list[list[str]], list[str]]:
    """Triplets of one LLM reply and the reasons of what was rejected (never guessed)."""
    try:
        value = _json(text)
    except json.JSONDecodeError:
        return [], ["reply is not JSON"]
    candidates = value.get("triplets") if unit == "answer" and isinstance(value, dict) else [value]
    if not isinstance(candidates, list):
        return [], ["reply has no 'triplets' list"]
    triplets, reasons = [], []
    for candidate in candidates:
        triplet, reason = as_triplet(candidate)
        if triplet is None:
            reasons.append(reason)
        else:
            triplets.append(triplet)
    return triplets, reasons


def _triplet_key(item: Any) -> str:
    if isinstance(item, list) and all(isinstance(v, str) for v in item):
        return json.dumps([v.strip().lower() for v in item])
    return json.dumps(item)


def triplet_list_cut(
    text: str, final: bool = False, params: Mapping[str, Any] | None = None
) -> str | None:
    """The ``triplet-list`` stop rule: a ``{"triplets": [[s, r, o], ...]}`` reply closed
    (``]}``) before its first triplet that repeats an earlier one (each field compared lower
    case, surrounding spaces ignored); with ``final`` (the token cap) a list that never closed is
    closed after its last complete triplet. ``None``: go on."""
    return list_cut(text, final, _triplet_key, nested=True)


def rule_triplet(sentence: str) -> list[str] | None:
    """The triplet of one sim-template sentence, or ``None`` for any other sentence."""
    match = _SIM_TEMPLATE.match(sentence.strip())
    if match is None:
        return None
    return [match.group("s"), match.group("r") or match.group("v"), match.group("o")]


def build_messages(unit_text: str, unit: str) -> list[dict[str, str]]:
    """System prompt, few-shot turns, then the unit to read."""
    if unit == "sentence":
        messages = [{"role": "system", "content": SENTENCE_SYSTEM}]
        for sentence, (s, r, o) in SENTENCE_EXAMPLES:
            messages.append({"role": "user", "content": f"Sentence: {sentence}"})
            reply = {"subject": s, "relation": r, "object": o}
            messages.append({"role": "assistant", "content": json.dumps(reply)})
        messages.append({"role": "user", "content": f"Sentence: {unit_text}"})
        return messages
    messages = [{"role": "system", "content": ANSWER_SYSTEM}]
    for answer, triplets in ANSWER_EXAMPLES:
        messages.append({"role": "user", "content": f"Answer: {answer}"})
        reply = {"triplets": [list(t) for t in triplets]}
        messages.append({"role": "assistant", "content": json.dumps(reply)})
    messages.append({"role": "user", "content": f"Answer: {unit_text}"})
    return messages


class TripletExtractor:
    """Triplets of many answers (see the module docstring for methods, units and records)."""

    def __init__(
        self,
        method: str = "llm",
        *,
        backend: Backend | None = None,
        cache: ResponseCache | None = None,
        unit: str = "sentence",
        gen_params: Mapping[str, Any] | None = None,
        template_version: str = "v1",
        constrained: bool = True,
        batch_size: int = 4,
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"unknown triplet extractor {method!r}; valid: {', '.join(METHODS)}")
        if unit not in UNITS:
            raise ValueError(f"unknown extraction unit {unit!r}; valid: {', '.join(UNITS)}")
        if method == "llm" and (backend is None or cache is None):
            raise ValueError("the llm triplet extractor needs a backend and a ResponseCache")
        rule = (gen_params or {}).get("stop_rule", "none")
        if rule not in STOP_RULES:
            raise ValueError(f"unknown triplet stop_rule {rule!r}; valid: {', '.join(STOP_RULES)}")
        if rule == "triplet-list" and unit != "answer":
            raise ValueError("stop_rule triplet-list reads a triplet list: it needs unit 'answer'")
        self.method = method
        self.backend = backend
        self.cache = cache
        self.unit = unit if method == "llm" else "sentence"
        self.gen_params = dict(gen_params or {})
        self.template_version = f"{template_version}/{PROMPT_VERSION}"
        self.constrained = constrained
        self.batch_size = batch_size
        self.stats = {"answers": 0, "units": 0, "requests": 0, "triplets": 0, "invalid": 0}

    def units(self, answer: str) -> list[str]:
        """What one request reads: the sentences of the answer, or the whole answer."""
        return split_sentences(answer) if self.unit == "sentence" else [answer.strip()]

    def request(self, unit_text: str) -> Request:
        """The text-only chat request for one unit (identical units share one request)."""
        params = dict(self.gen_params)
        if self.constrained:
            params["json_schema"] = (
                sentence_schema(unit_text) if self.unit == "sentence" else ANSWER_SCHEMA
            )
        digest = hashlib.sha256(f"{self.unit}\n{unit_text}".encode()).hexdigest()[:16]
        return Request(
            request_id=f"trihe-extract/{digest}",
            messages=tuple(build_messages(unit_text, self.unit)),
            params=params,
            task="chat",
            meta={"stage": "trihe-extract", "unit": self.unit},
        )

    def _replies(self, units: Sequence[str]) -> dict[str, str]:
        distinct = list(dict.fromkeys(u for u in units if u))
        if self.method != "llm" or not distinct:
            return {}
        assert self.backend is not None and self.cache is not None
        requests = [self.request(u) for u in distinct]
        self.stats["requests"] += len(requests)
        responses = self.cache.resolve(
            self.backend, requests, self.template_version, batch_size=self.batch_size
        )
        replies = {}
        for unit_text, response in zip(distinct, responses, strict=True):
            if not is_success(response):
                raise RuntimeError(
                    f"triplet extractor {self.backend.identity.get('name')!r} failed on "
                    f"{unit_text[:60]!r}: {response.meta.get('error')!r}; the successful "
                    "answers are cached, rerun to retry"
                )
            replies[unit_text] = response.text
        return replies

    def extract(self, answers: Sequence[str]) -> list[dict[str, Any]]:
        """One record per answer, in order."""
        per_answer = [self.units(a) for a in answers]
        replies = self._replies([u for units in per_answer for u in units])
        records = []
        for units in per_answer:
            triplets: list[list[str]] = []
            invalid: list[dict[str, str]] = []
            for unit_text in units:
                if self.method == "rule":
                    found = rule_triplet(unit_text)
                    raw = unit_text
                    got, reasons = ([found], []) if found else ([], ["not a sim-template sentence"])
                else:
                    raw = replies[unit_text]
                    got, reasons = parse_reply(raw, self.unit)
                triplets.extend(got)
                invalid.extend({"unit": unit_text, "raw": raw, "reason": r} for r in reasons)
            self.stats["answers"] += 1
            self.stats["units"] += len(units)
            self.stats["triplets"] += len(triplets)
            self.stats["invalid"] += len(invalid)
            records.append({"triplets": triplets, "invalid": invalid, "n_units": len(units)})
        return records
