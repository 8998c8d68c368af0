"""The simulated LVLM backend: seeded randomness, the answerer registry and the ``sim`` backend.

Each benchmark's module (``captions``, ``oracle``, ``pope``, the packaged ``simulated``)
registers the answerer of its tasks with :func:`register_answerer`; :class:`SimulatedLVLM`
dispatches every request to the answerer of its ``task``.

Answer key. The sim is a test instrument whose errors are injected into *known* answers, not a
model that looks at pixels, so it reads the truth of each request from
:attr:`Request.answer_key <halluscope.models.base.Request.answer_key>`: the image's annotations
(``gt_objects``, ``other_objects``, ``relations``, see
:func:`halluscope.models.base.item_answer_key`) plus the question's expected answer (reference
triplets, yes/no label, NOPE references...). The answer key is part of the response-cache key of
the sim's answers (``reads_answer_key = True``); other backends never receive it. Requests built
by hand may instead carry the question's truth in ``Request.meta`` and rely on the ``items`` the
backend was built with for the annotations.

Randomness: ``random.Random(seed)`` with the seed taken from the sha256 of (model name,
``params["seed"]``, image id, prompt text, task) -- never Python's salted ``hash()``. The prompt
*text* stands for the instruction (rather than its id) because the response cache keys on the
text: two instruction ids with the same text must get the same answer, whatever order they run in.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from halluscope.models.base import Request, Response, register_backend, register_spec_check
from halluscope.models.sim.pools import COOCCURRENCE, OOD_POOL, RELATION_POOL, pick_hallucination
from halluscope.models.sim.presets import resolve_preset, validate_preset

SIM_VERSION = "1"


def frequency_order() -> tuple[str, ...]:
    """MSCOCO classes, most frequent first (``objects.coco.COCO_FREQUENCY_ORDER``)."""
    from halluscope.objects.coco import COCO_FREQUENCY_ORDER

    return tuple(COCO_FREQUENCY_ORDER)


def sha256_json(value: Any) -> str:
    """sha256 hex digest of the canonical JSON of ``value``."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def seeded_rng(*parts: Any) -> random.Random:
    """A generator seeded from the sha256 of ``parts`` (never the salted built-in ``hash``)."""
    return random.Random(int(sha256_json([str(p) for p in parts])[:16], 16))


# ----------------------------------------------------------------------------------------------
# Answerers of the benchmark modules

Answer = Callable[["SimulatedLVLM", Request, "Mapping[str, Any] | None"], "tuple[str, dict]"]


@dataclass(frozen=True)
class Answerer:
    """How the sim answers one task: ``answer(model, request, item) -> (text, meta)``.

    ``needs_item``: the answer is made from the image's annotations (``item``); without it (a
    text-only step) ``item`` is ``None`` and the request needs no image.
    """

    answer: Answer
    needs_item: bool = True


_ANSWERERS: dict[str, Answerer] = {}


def register_answerer(*tasks: str, needs_item: bool = True) -> Callable[[Answer], Answer]:
    """Decorator: ``answer(model, request, item)`` answers the requests of ``tasks``."""

    def decorate(answer: Answer) -> Answer:
        for task in tasks:
            _ANSWERERS[task] = Answerer(answer, needs_item)
        return answer

    return decorate


def answered_tasks() -> list[str]:
    """Every task the sim answers, in registration order."""
    return list(_ANSWERERS)


# ----------------------------------------------------------------------------------------------
# The model


class SimulatedLVLM:
    """A simulated LVLM (see :mod:`halluscope.models.sim` for its exact behaviour).

    ``items`` (optional) are annotated items by image id, for requests without an answer key.
    """

    reads_answer_key = True
    """The sim answers from ``Request.answer_key`` (it is part of the sim's cache keys)."""

    def __init__(
        self,
        name: str,
        preset: Mapping[str, Any],
        items: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.name = name
        self.preset = validate_preset(preset, f"sim preset of model {name!r}")
        self.items = None if items is None else {str(k): dict(v) for k, v in items.items()}
        self.frequency = frequency_order()
        content: dict[str, Any] = {
            "version": SIM_VERSION,
            # "profile": the preset's key since the first cached answers; every revision hashes
            # it, so renaming it would orphan every cache
            "profile": self.preset,
            "frequency": list(self.frequency),
            "cooccurrence": COOCCURRENCE,
            "ood": list(OOD_POOL),
            "relations": list(RELATION_POOL),
        }
        if self.items is not None:
            content["items"] = self.items
        revision = sha256_json(content)
        self._identity = {
            "backend": "sim",
            "name": name,
            "revision": f"sim{SIM_VERSION}-{revision[:16]}",
        }

    @property
    def identity(self) -> dict:
        """Name plus a revision that changes with the preset, the tables (and the items given)."""
        return dict(self._identity)

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        """Answer each request (same order)."""
        return [self._answer(request) for request in requests]

    # -- helpers for the answerers ----------------------------------------------------------------

    def rng(
        self, request: Request, text: str | None = None, task: str | None = None
    ) -> random.Random:
        """The request's generator: seeded on (name, seed, image id, ``text``, ``task``), by
        default the prompt and the request's task."""
        return seeded_rng(
            self.name,
            request.params.get("seed", 0),
            request.image_id,
            request.prompt if text is None else text,
            request.task if task is None else task,
        )

    def truth(self, request: Request, key: str) -> Any:
        """``key`` of the request's answer key (or, for hand-built requests, of its ``meta``)."""
        source = _truth_source(request)
        if key not in source:
            raise ValueError(
                f"sim model {self.name!r}: request {request.request_id!r} (task {request.task!r}) "
                f"needs the answer key in Request.answer_key or meta[{key!r}]: the sim is a test "
                "instrument that injects errors into known answers"
            )
        return source[key]

    def truth_get(self, request: Request, key: str, default: Any = None) -> Any:
        """An optional part of the answer key (``default`` when absent)."""
        return _truth_source(request).get(key, default)

    def pick_hallucination(
        self,
        kind: str,
        gt: list[str],
        used: list[str],
        mentioned: list[str],
        others: list[str],
        rng: random.Random,
    ) -> tuple[str, str] | None:
        """:func:`~halluscope.models.sim.pools.pick_hallucination` with this model's preset."""
        return pick_hallucination(
            kind,
            gt,
            used,
            mentioned,
            others,
            rng,
            frequency=self.frequency,
            frequent_top_k=self.preset["frequent_top_k"],
        )

    # -- dispatch ---------------------------------------------------------------------------------

    def _item(self, request: Request) -> dict[str, Any]:
        if request.answer_key is not None:
            if not isinstance(request.answer_key, Mapping):
                raise ValueError(
                    f"sim model {self.name!r}: request {request.request_id!r}: the answer key must "
                    f"be a mapping (annotations + truth), got {request.answer_key!r}"
                )
            return dict(request.answer_key)
        if self.items is None:
            raise ValueError(
                f"sim model {self.name!r}: request {request.request_id!r} (task {request.task!r}) "
                "carries no answer key (Request.answer_key) and the model was built without items"
            )
        if request.image_id is None or str(request.image_id) not in self.items:
            raise ValueError(
                f"sim model {self.name!r}: request {request.request_id!r} names image "
                f"{request.image_id!r}, which is not among its {len(self.items)} annotated items"
            )
        return self.items[str(request.image_id)]

    def _answer(self, request: Request) -> Response:
        answerer = _ANSWERERS.get(request.task)
        if answerer is not None and not answerer.needs_item:
            text, meta = answerer.answer(self, request, None)
            return self._response(request, text, meta)
        item = self._item(request)
        if answerer is None:
            tasks = answered_tasks()
            raise ValueError(
                f"sim model {self.name!r} cannot answer task {request.task!r} "
                f"(request {request.request_id!r}); it answers {', '.join(tasks[:-1])} and "
                f"{tasks[-1]}"
            )
        text, meta = answerer.answer(self, request, item)
        return self._response(request, text, meta)

    def _response(self, request: Request, text: str, meta: dict) -> Response:
        return Response(
            request_id=request.request_id,
            text=text,
            model=self.name,
            identity=self.identity,
            meta=meta,
        )


def _truth_source(request: Request) -> Mapping[str, Any]:
    if isinstance(request.answer_key, Mapping):
        return request.answer_key
    return request.meta


def sim_items(
    items: Mapping[str, Mapping[str, Any]] | Sequence[Mapping[str, Any]],
) -> dict[str, dict]:
    """Items keyed by image id, from a mapping or a list of ``items.jsonl`` records."""
    if isinstance(items, Mapping):
        return {str(k): dict(v) for k, v in items.items()}
    return {str(record["image_id"]): dict(record) for record in items}


@register_spec_check("sim")
def check_spec(spec: Mapping[str, Any], model_id: str) -> None:
    """A ``models:`` spec names a built-in preset (or gives a valid dict one). The preset
    defaults to the spec's ``name``, then the model id, as in :func:`from_spec`."""
    import difflib

    from halluscope.models.sim.presets import PRESETS

    if "profile" in spec:
        raise ValueError(
            f"models.{model_id}.profile: a sim spec names its preset with 'preset:' ('profile' "
            "is the run's name, the top-level key)"
        )
    preset = spec.get("preset", spec.get("name") or model_id)
    if isinstance(preset, str) and preset not in PRESETS:
        implicit = "" if "preset" in spec else " (no 'preset' given: the model name is used)"
        close = difflib.get_close_matches(preset, list(PRESETS), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ValueError(
            f"models.{model_id}.preset: unknown sim preset '{preset}'{implicit}; valid sim "
            f"presets: {', '.join(sorted(PRESETS))}{hint}"
        )
    try:
        resolve_preset(preset, spec.get("overrides"))
    except ValueError as err:
        raise ValueError(f"models.{model_id}: {err}") from None


@register_backend("sim")
def from_spec(
    spec: Mapping[str, Any],
    items: Any = None,
    model_name: str | None = None,
    answer_keys: bool = False,
    **_: Any,
) -> SimulatedLVLM:
    """``{"backend": "sim", "name": ..., "preset": <built-in name or dict>, "overrides": {...}}``.

    The model name is ``spec["name"]``, else the ``model_name`` context (the ``params.yaml`` model
    id), else the preset name; ``preset`` defaults to the name, so
    ``{"backend": "sim", "preset": "sim-precise"}`` is enough. The sim answers from annotations:
    the caller says its requests carry answer keys (``answer_keys=True``, what the stages do) or
    gives the annotated ``items``; with neither, building fails at once (e.g. a sim configured as
    the LLM of an extraction stage, whose requests have no answer key).
    """
    name = spec.get("name") or model_name or spec.get("preset")
    if not isinstance(name, str):
        raise ValueError(f"sim model spec needs a 'name' (or a preset name): {dict(spec)!r}")
    preset = resolve_preset(spec.get("preset", name), spec.get("overrides"))
    if items is None and not answer_keys:
        raise ValueError(
            "the sim backend needs the dataset items (make_backend(spec, items=...)) or requests "
            "that carry their answer keys (make_backend(spec, answer_keys=True))"
        )
    return SimulatedLVLM(name, preset, None if items is None else sim_items(items))
