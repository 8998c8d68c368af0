"""Stop rules: end a streamed reply as soon as what follows can no longer be wanted.

A small model often loops ("trees", "trees", "trees" ... up to the token cap); a stop rule looks
at the reply after every generated token and ends it early. A rule is a request param
(``stop_rule``, plus the inputs a rule reads: ``stop_text``, ``stop_items``), so it enters the
response-cache key; requests without one are generated and keyed as plain requests. Only the
``llamacpp`` backend streams replies and applies rules; the OpenAI-compatible backend refuses
these params.

A rule is a function ``cut(text, final=False, params=None) -> str | None``: ``text`` is the reply
so far, ``params`` the request params; it returns the reply to keep (and generation stops), or
``None`` to go on. With ``final=True`` (the reply hit ``max_new_tokens``) it may return a closed
form of the cut reply (so it stays valid JSON), or ``None`` to keep it as it is.

Rules that read a stage's own reply format live beside that stage and are named here by
``"module:function"`` strings, imported on first use (the way backends are named), so this module
imports no stage code:

- ``object-list``: a ``{"objects": [...]}`` reply ends at the first repeated name (compared lower
  case, surrounding spaces ignored) and is closed (``]}``); a reply cut by the token cap is closed
  after its last complete name (:func:`object_list_cut`).
- ``object-list-vocab``: ``object-list``, and the list also ends before the first name none of
  whose words occurs in ``stop_text`` (the caption), with the words compared the way the
  extraction's tally compares them (:func:`halluscope.objects.llm_extract.object_list_vocab_cut`).
- ``json-value``: the reply ends as soon as it is one complete JSON value (what a JSON-constrained
  model may add after it is white space) (:func:`json_value_cut`).
- ``triplet-list``: a ``{"triplets": [[s, r, o], ...]}`` reply ends at the first repeated triplet
  and is closed; capped replies are closed after the last complete triplet
  (:func:`halluscope.benchmarks.trihe.triplets.triplet_list_cut`).
- ``nope-objects`` / ``nope-objects-repeat`` / ``nope-questions``: NOPE's numbered lists end once
  ``stop_items`` entries are read, ``-repeat`` also at the first repeated object
  (:mod:`halluscope.benchmarks.nope.parsing`).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from typing import Any

StopRule = Callable[..., "str | None"]

#: Rule name -> ``"module:function"`` (imported on first use).
STOP_RULES: dict[str, str] = {
    "object-list": "halluscope.models.stop_rules:object_list_cut",
    "object-list-vocab": "halluscope.objects.llm_extract:object_list_vocab_cut",
    "json-value": "halluscope.models.stop_rules:json_value_cut",
    "triplet-list": "halluscope.benchmarks.trihe.triplets:triplet_list_cut",
    "nope-objects": "halluscope.benchmarks.nope.parsing:listing_cut",
    "nope-objects-repeat": "halluscope.benchmarks.nope.parsing:listing_repeat_cut",
    "nope-questions": "halluscope.benchmarks.nope.parsing:questions_cut",
}
#: Request params a rule may read besides ``stop_rule`` (part of the cache key like any param).
RULE_PARAMS = ("stop_text", "stop_items")
_LOADED: dict[str, StopRule] = {}


def get_stop_rule(name: str) -> StopRule:
    """The cut function of a rule name (``ValueError`` naming the valid rules otherwise)."""
    rule = _LOADED.get(name)
    if rule is None:
        if name not in STOP_RULES:
            raise ValueError(f"unknown stop_rule {name!r}; valid: {list(STOP_RULES)}")
        module, function = STOP_RULES[name].split(":")
        rule = _LOADED[name] = getattr(importlib.import_module(module), function)
    return rule


def list_items(text: str, nested: bool = False) -> tuple[int, list[tuple[Any, int]], bool] | None:
    """The complete JSON items of the first list of a (partial) reply: ``(index after "[",
    [(item, end index)], list closed)``, or ``None`` before the ``[``. Items are strings (and,
    with ``nested``, lists); anything else ends the scan like an unfinished item."""
    start = text.find("[")
    if start < 0:
        return None
    decoder = json.JSONDecoder()
    items: list[tuple[Any, int]] = []
    pos = start + 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            return start + 1, items, False
        if text[pos] == "]":
            return start + 1, items, True
        if text[pos] != '"' and not (nested and text[pos] == "["):
            return start + 1, items, False
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:  # an unfinished item
            return start + 1, items, False
        items.append((value, end))
        pos = end


def list_cut(
    text: str,
    final: bool,
    key: Callable[[Any], Any],
    stop_before: Callable[[Any], bool] | None = None,
    nested: bool = False,
) -> str | None:
    """The list of ``text`` closed (``]}``) before its first item whose ``key`` repeats an
    earlier one's, or, with ``stop_before``, before the first item it flags; with ``final`` also
    a list that never closed, cut after its last complete item. ``None``: go on."""
    found = list_items(text, nested)
    if found is None:
        return None
    open_at, items, closed = found
    seen: set[Any] = set()
    for index, (item, _) in enumerate(items):
        name = key(item)
        if name in seen or (stop_before is not None and stop_before(item)):
            cut = items[index - 1][1] if index else open_at
            return text[:cut] + "]}"
        seen.add(name)
    if final and not closed:
        return text[: items[-1][1] if items else open_at] + "]}"
    return None


def _name_key(item: Any) -> Any:
    return item.strip().lower() if isinstance(item, str) else json.dumps(item)


def object_list_cut(
    text: str, final: bool = False, params: Mapping[str, Any] | None = None
) -> str | None:
    """The ``object-list`` rule: the reply closed before its first repeated name.

    ``text`` is the reply so far. Returns the closed reply (``...last new name"]}``) when a
    complete name repeats an earlier one (case and surrounding spaces ignored); with ``final``
    (the reply ended on the token cap) also a reply whose list never closed, cut after its last
    complete name. ``None``: go on (or, with ``final``, keep the reply as it is).
    """
    return list_cut(text, final, _name_key)


def json_value_cut(
    text: str, final: bool = False, params: Mapping[str, Any] | None = None
) -> str | None:
    """The ``json-value`` rule: once the reply (after leading white space) is a complete JSON
    object or list, the reply up to the end of that value; ``None`` before (and for a reply that
    does not start with ``{`` or ``[``)."""
    body = text.lstrip()
    if not body or body[0] not in "{[":
        return None
    try:
        _, end = json.JSONDecoder().raw_decode(body)
    except json.JSONDecodeError:
        return None
    return body[:end]
