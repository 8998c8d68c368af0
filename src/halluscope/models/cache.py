"""Content-addressed response cache shared by every backend.

Why: model calls are the slow and costly part of the DAG. Keying each answer on everything that
can change it (and nothing else) makes reruns free, lets a killed stage resume by replaying what it
already has, and lets tests and CI run with ``mode="replay"`` and no model or network at all.

Key = sha256 of the canonical JSON (sorted keys, compact separators) of

- ``identity``: the backend identity (model name + revision/snapshot, or what else decides
  the backend's answers, e.g. a simulated model's preset),
- ``task`` and the full ``messages``,
- ``image``: ``{"sha256": ...}`` of the image *content* (computed from ``image_path`` when the
  request has no hash); never raw bytes or paths. Only when a request has no image file at all
  (e.g. captions recorded elsewhere) does the image id stand in: ``{"id": ...}``; ``None`` for
  text-only calls,
- ``params``: every generation parameter, including ``seed``,
- ``template_version``: the version of the prompt template that built the messages,
- ``format``: this module's key format version,
- ``answer_key``: only when the request carries one (``Request.answer_key``, the ground truth a
  test instrument answers from). :meth:`ResponseCache.resolve` drops it from the requests of
  every backend that does not read it (``reads_answer_key``), so real backends' keys are the
  same with or without it.

``Request.request_id``, ``Request.meta``, ``Request.image_path`` and ``Request.image_id`` (when a
hash exists) are deliberately *not* in the key: they name or locate a call, they do not change its
answer.

Modes:

- ``live``: serve hits; send misses to the backend; store the successful answers.
- ``record``: ignore existing entries, send *every* request to the backend and (over)write its
  entry. Use it to refresh a cache on purpose (e.g. a new server build with the same name); it does
  not resume, by design.
- ``replay``: serve hits only; a miss raises :class:`CacheMissError` naming the request. Nothing
  reaches the backend.

Layout: ``root/<first 2 hex of key>/<key>.json``, each written to a temporary file in the same
folder, fsynced and renamed into place, so several processes can share one cache and a reader never
sees a half-written entry. Only successful responses are stored. Parameters or identities with
secret-looking keys (``api_key``, ``authorization``...) are refused: they would end up in the key
payload stored on disk.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from halluscope.io import atomic_write_text
from halluscope.models.base import (
    Backend,
    Request,
    Response,
    reads_answer_key,
    without_answer_key,
)

CACHE_FORMAT = 1
MODES = ("live", "record", "replay")
Mode = Literal["live", "record", "replay"]

_SECRET_KEY = re.compile(
    r"^(api[_-]?key|.*secret.*|.*password.*|authori[sz]ation|bearer|(access|auth|api|bearer)[_-]?token)$",
    re.IGNORECASE,
)


class CacheMissError(LookupError):
    """A replay-mode request has no cached answer."""


def _check_no_secrets(value: Any, where: str) -> None:
    """Refuse secret-looking keys anywhere in ``value`` (they would be written to disk)."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if _SECRET_KEY.match(str(key)):
                raise ValueError(
                    f"{where} contains the secret-looking key {key!r}; secrets must come from the "
                    "environment inside the backend, never through request params or identities"
                )
            _check_no_secrets(item, where)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_no_secrets(item, where)


def canonical_json(value: Any) -> str:
    """Canonical JSON: sorted keys, compact, ASCII-escaped (stable across platforms)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def image_key(request: Request) -> dict[str, str] | None:
    """The image part of the key: content hash, else image id, else ``None`` (text-only)."""
    if request.image_sha256:
        return {"sha256": request.image_sha256.lower()}
    if request.image_path:
        from halluscope.io import sha256_file

        return {"sha256": sha256_file(request.image_path)}
    if request.image_id is not None:
        return {"id": str(request.image_id)}
    return None


def key_payload(
    identity: Mapping[str, Any], request: Request, template_version: str
) -> dict[str, Any]:
    """Everything that can change an answer (see the module docstring)."""
    _check_no_secrets(identity, "the backend identity")
    _check_no_secrets(request.params, f"the params of request {request.request_id!r}")
    payload = {
        "format": CACHE_FORMAT,
        "identity": dict(identity),
        "image": image_key(request),
        "messages": [dict(m) for m in request.messages],
        "params": dict(request.params),
        "task": request.task,
        "template_version": str(template_version),
    }
    if request.answer_key is not None:
        _check_no_secrets(request.answer_key, f"the answer key of request {request.request_id!r}")
        payload["answer_key"] = request.answer_key
    return payload


def cache_key(identity: Mapping[str, Any], request: Request, template_version: str) -> str:
    """sha256 hex digest of the canonical key payload."""
    payload = canonical_json(key_payload(identity, request, template_version))
    return hashlib.sha256(payload.encode("ascii")).hexdigest()


def is_success(response: Response) -> bool:
    """A response worth storing: it has text and no ``meta["error"]``."""
    return isinstance(response.text, str) and not response.meta.get("error")


_KEY_RE = re.compile(r"[0-9a-f]{64}")


class ResponseCache:
    """One JSON file per answer under ``root``; see the module docstring for keys and modes."""

    def __init__(self, root: str | Path, mode: Mode = "live") -> None:
        if mode not in MODES:
            raise ValueError(f"unknown cache mode {mode!r}; valid modes: {', '.join(MODES)}")
        self.root = Path(root)
        self._root_str = os.fspath(self.root)
        self.mode: Mode = mode
        self.hits = 0
        self.misses = 0

    def _file(self, key: str) -> str:
        """The entry's path as a string (lookups are hot: plain string joins, compiled check)."""
        if len(key) != 64 or not _KEY_RE.fullmatch(key):
            raise ValueError(f"not a cache key (64 lower-case hex digits): {key!r}")
        return f"{self._root_str}/{key[:2]}/{key}.json"

    def path(self, key: str) -> Path:
        """Where the entry for ``key`` lives."""
        return Path(self._file(key))

    def get(self, key: str) -> Response | None:
        """The cached response for ``key`` or ``None``; counts hits and misses."""
        path = self._file(key)
        try:
            with open(path, "rb") as handle:
                text = handle.read()
        except FileNotFoundError:
            self.misses += 1
            return None
        try:
            entry = json.loads(text)
            response = Response.from_dict(entry["response"])
        except (json.JSONDecodeError, KeyError, TypeError) as err:
            raise ValueError(
                f"{path}: unreadable cache entry ({err}); entries are written atomically, so this "
                "file was changed outside halluscope; delete it to recompute the answer"
            ) from None
        self.hits += 1
        return response

    def put(self, key: str, response: Response, payload: Mapping[str, Any] | None = None) -> bool:
        """Store a successful response (returns ``False`` and stores nothing for a failure).

        ``payload`` (the key payload) is stored beside the answer so an entry can be inspected.
        """
        if not is_success(response):
            return False
        entry = {
            "format": CACHE_FORMAT,
            "key": key,
            "payload": dict(payload) if payload is not None else None,
            "response": response.to_dict(),
        }
        # atomic (temp file, fsync, rename): concurrent writers never leave half an entry
        atomic_write_text(
            self.path(key), json.dumps(entry, sort_keys=True, ensure_ascii=False, indent=1) + "\n"
        )
        return True

    def resolve(
        self,
        backend: Backend,
        requests: Sequence[Request],
        template_version: str,
        batch_size: int = 8,
        progress: Callable[[int], None] | None = None,
    ) -> list[Response]:
        """Answer ``requests`` in order: cache first (per mode), misses to the backend in batches.

        Each batch's successful answers are stored as soon as they arrive, so a killed run loses at
        most one batch. Failed answers are returned but never stored. ``progress(n)`` is called
        with the number of requests finished since the last call. Answer keys reach (and key)
        only the backends that read them.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if not reads_answer_key(backend):
            requests = [without_answer_key(request) for request in requests]
        identity = dict(backend.identity)
        results: list[Response | None] = [None] * len(requests)
        todo: list[tuple[int, str, dict[str, Any]]] = []
        for index, request in enumerate(requests):
            payload = key_payload(identity, request, template_version)
            key = hashlib.sha256(canonical_json(payload).encode("ascii")).hexdigest()
            cached = None if self.mode == "record" else self.get(key)
            if cached is not None:
                results[index] = replace(cached, request_id=request.request_id)
                if progress:
                    progress(1)
                continue
            if self.mode == "replay":
                raise CacheMissError(
                    f"replay mode: no cached answer for request {request.request_id!r} "
                    f"(image {request.image_id!r}, task {request.task!r}, model "
                    f"{identity.get('name')!r}, key {key}) in {self.root}; run the stage with "
                    "cache mode 'live' to compute it"
                )
            todo.append((index, key, payload))
        for start in range(0, len(todo), batch_size):
            chunk = todo[start : start + batch_size]
            batch = [requests[index] for index, _, _ in chunk]
            answers = backend.generate(batch)
            if len(answers) != len(batch):
                raise RuntimeError(
                    f"backend {identity.get('name')!r} returned {len(answers)} responses for "
                    f"{len(batch)} requests"
                )
            for (index, key, payload), request, answer in zip(chunk, batch, answers, strict=True):
                if answer.request_id != request.request_id:
                    raise RuntimeError(
                        f"backend {identity.get('name')!r} answered {answer.request_id!r} in the "
                        f"place of {request.request_id!r}; responses must keep the request order"
                    )
                self.put(key, answer, payload)
                results[index] = answer
            if progress:
                progress(len(chunk))
        return [r for r in results if r is not None]
