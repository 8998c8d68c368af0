"""The one interface every model call goes through: a batch of requests in, responses out.

Backends (each in its own module under ``models/``, registered by name) only turn
:class:`Request` objects into :class:`Response` objects. Caching, resuming and file output live
outside the backends (``models/cache.py``, ``models/answers.py``, ``models/generate.py``), so that
every backend gets them for free and a backend never needs to know where its answers end up.

Answer keys: a benchmark request can carry its ground truth (:attr:`Request.answer_key`, built by
:func:`item_answer_key`). Only backends that are test instruments read it (they say so with a
``reads_answer_key = True`` attribute, see :func:`reads_answer_key`); the response cache removes it
from the requests of every other backend before keying or sending them, so their cache keys are
the same with or without it.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

TASKS = ("caption", "oracle", "yesno", "chat")
"""Common request tasks (``chat`` = plain text in/out for the LLM stages). Not enforced here:
backends reject the tasks they cannot answer, so new benchmarks can add tasks freely."""


def _normalise_message(message: Any) -> dict[str, str]:
    """Accept ``{"role", "content"}`` dicts or ``(role, content)`` pairs; return a plain dict."""
    if isinstance(message, Mapping):
        role, content = message.get("role"), message.get("content")
    elif isinstance(message, (tuple, list)) and len(message) == 2:
        role, content = message
    else:
        raise ValueError(f"a chat message must be a (role, content) pair or dict, got {message!r}")
    if not isinstance(role, str) or not isinstance(content, str):
        raise ValueError(f"chat message role and content must be strings, got {message!r}")
    return {"role": role, "content": content}


def user_message(text: str) -> dict[str, str]:
    """A single user turn (the image, if any, travels in the :class:`Request` fields)."""
    return {"role": "user", "content": text}


@dataclass(frozen=True)
class Request:
    """One model call.

    The image travels as a path (for backends that load pixels) plus its sha256 (for the cache
    key: paths differ between machines, contents do not). ``meta`` is free-form bookkeeping
    (instruction id, object name, ...) and is *not* part of the cache key, so a backend's answer
    must depend only on ``messages``, the image, ``params``, ``task`` and, for the backends that
    read it, ``answer_key``.

    ``meta["text_only"]`` true says the item has no image by design (a HallusionBench question
    without a figure): an LVLM backend then answers from the text, where a request that names an
    image but has no file is otherwise refused.

    ``answer_key`` (a JSON value, ``None`` = none) is the request's ground truth: the image's
    annotations and the question's expected answer (:func:`item_answer_key`). It is part of the
    cache key only when set, and only backends with ``reads_answer_key = True`` receive it.
    """

    request_id: str
    image_id: str | None = None
    image_path: str | None = None
    image_sha256: str | None = None
    messages: tuple = ()
    params: dict = field(default_factory=dict)
    task: str = "caption"
    meta: dict = field(default_factory=dict)
    answer_key: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(_normalise_message(m) for m in self.messages))
        object.__setattr__(self, "params", dict(self.params))
        object.__setattr__(self, "meta", dict(self.meta))
        if not isinstance(self.task, str) or not self.task:
            raise ValueError(f"request {self.request_id!r}: task must be a non-empty string")
        if self.answer_key is not None:
            try:  # a detached plain-JSON copy (it is hashed into the cache key)
                text = json.dumps(self.answer_key, sort_keys=True, allow_nan=False)
            except (TypeError, ValueError) as err:
                raise ValueError(
                    f"request {self.request_id!r}: answer_key must be a JSON value ({err})"
                ) from None
            object.__setattr__(self, "answer_key", json.loads(text))

    @property
    def prompt(self) -> str:
        """The text of the last user message (what single-turn backends answer)."""
        for message in reversed(self.messages):
            if message["role"] == "user":
                return message["content"]
        return ""


ANNOTATION_FIELDS = ("gt_objects", "other_objects", "relations")
"""The fields of an ``items.jsonl`` record that an answer key carries (the image's truth)."""


def item_answer_key(item: Mapping[str, Any], **truth: Any) -> dict[str, Any]:
    """The answer key of a question about ``item``: its annotations (:data:`ANNOTATION_FIELDS`
    it has) plus the question's ``truth`` (expected answer, label, reference triplets...)."""
    return {**{k: item[k] for k in ANNOTATION_FIELDS if k in item}, **truth}


def image_request(
    item: Mapping[str, Any],
    request_id: str,
    text: str,
    *,
    params: Mapping[str, Any],
    task: str,
    meta: Mapping[str, Any],
    answer_key: Any = None,
) -> Request:
    """A single-turn request about one item's image, sent by path plus content hash.

    Why one builder: captions, the oracle and every benchmark's answers ask about an item's
    image; building those requests in one place keeps the image fields, and so the cache keys,
    the same for all of them. ``answer_key``: see :class:`Request`.
    """
    return Request(
        request_id=request_id,
        image_id=str(item["image_id"]),
        image_path=item.get("image"),
        image_sha256=item.get("image_sha256"),
        messages=(user_message(text),),
        params=dict(params),
        task=task,
        meta=dict(meta),
        answer_key=answer_key,
    )


def reads_answer_key(backend: Any) -> bool:
    """Whether ``backend`` answers from :attr:`Request.answer_key` (a test instrument)."""
    return getattr(backend, "reads_answer_key", False) is True


def without_answer_key(request: Request) -> Request:
    """``request`` as every backend that does not read answer keys gets it (and keys it)."""
    return request if request.answer_key is None else replace(request, answer_key=None)


@dataclass(frozen=True)
class Response:
    """One model answer. ``identity`` is the backend identity (name + revision) that produced it."""

    request_id: str
    text: str
    model: str
    identity: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form (used by the cache)."""
        return {
            "request_id": self.request_id,
            "text": self.text,
            "model": self.model,
            "identity": dict(self.identity),
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Response:
        """Inverse of :meth:`to_dict`."""
        return cls(
            request_id=str(data["request_id"]),
            text=str(data["text"]),
            model=str(data["model"]),
            identity=dict(data.get("identity") or {}),
            meta=dict(data.get("meta") or {}),
        )


@runtime_checkable
class Backend(Protocol):
    """A model: ``identity`` names it exactly (for the cache); ``generate`` answers in order.

    Optional: ``reads_answer_key = True`` for test instruments that answer from
    :attr:`Request.answer_key` (wrappers of such a backend must forward it).
    """

    @property
    def identity(self) -> dict: ...

    def generate(self, requests: Sequence[Request]) -> list[Response]: ...


BackendFactory = Callable[..., Backend]

#: Keys of a model spec that say what a job needs from the executor (halluscope.resources),
#: not how to build the backend.
SCHEDULING_KEYS = frozenset({"gpu", "mem_mb", "runtime"})

_FACTORIES: dict[str, BackendFactory] = {}

# Backends whose module registers itself on import; importing lazily keeps heavy dependencies
# (torch, openai, llama_cpp) out of processes that never use them. Add new backends here.
_LAZY_MODULES: dict[str, str] = {
    "sim": "halluscope.models.sim",
    "hf": "halluscope.models.hf",
    "openai": "halluscope.models.openai_backend",
    "llamacpp": "halluscope.models.llamacpp",
    "replay": "halluscope.models.replay",
}


def register_backend(name: str) -> Callable[[BackendFactory], BackendFactory]:
    """Decorator: register ``factory(spec, **context) -> Backend`` under ``name``."""

    def decorate(factory: BackendFactory) -> BackendFactory:
        _FACTORIES[name] = factory
        return factory

    return decorate


SpecCheck = Callable[[Mapping[str, Any], str], None]
"""``check(spec, model_id)``: raise ``ValueError`` (starting with the dotted key at fault, e.g.
``models.<id>.preset: ...``) for a spec this backend would refuse when built."""

_SPEC_CHECKS: dict[str, SpecCheck] = {}


def register_spec_check(name: str) -> Callable[[SpecCheck], SpecCheck]:
    """Decorator: register backend ``name``'s check of a ``models:`` spec (:func:`check_spec`)."""

    def decorate(check: SpecCheck) -> SpecCheck:
        _SPEC_CHECKS[name] = check
        return check

    return decorate


def check_spec(spec: Mapping[str, Any], model_id: str) -> None:
    """Let the backend of ``spec`` check it, so a typo fails when params are validated rather
    than when the first job builds the backend (after other jobs ran). A backend without a
    registered check accepts any spec here."""
    name = spec.get("backend")
    if name not in _SPEC_CHECKS and name in _LAZY_MODULES:
        importlib.import_module(_LAZY_MODULES[name])
    if name in _SPEC_CHECKS:
        _SPEC_CHECKS[name](spec, model_id)


def available_backends() -> list[str]:
    """Every backend name ``make_backend`` accepts."""
    return sorted(set(_FACTORIES) | set(_LAZY_MODULES))


def make_backend(spec: Mapping[str, Any], **context: Any) -> Backend:
    """Build the backend named by ``spec["backend"]``; ``context`` carries run facts every
    factory may use or ignore: ``model_name`` (the ``params.yaml`` model id) and
    ``answer_keys=True`` (the caller's requests carry answer keys). The scheduling keys of a
    spec (``gpu``, ``mem_mb``, ``runtime``: halluscope.resources) are for the executor, not the
    backend, and are dropped first."""
    if isinstance(spec, Mapping):
        spec = {k: v for k, v in spec.items() if k not in SCHEDULING_KEYS}
    name = spec.get("backend") if isinstance(spec, Mapping) else None
    if name not in _FACTORIES and name in _LAZY_MODULES:
        importlib.import_module(_LAZY_MODULES[name])
    if name not in _FACTORIES:
        raise ValueError(
            f"unknown model backend {name!r} in model spec {spec!r}; "
            f"valid backends: {', '.join(available_backends())}"
        )
    return _FACTORIES[name](spec, **context)
