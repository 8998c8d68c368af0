"""The wire format of the ``openai`` backend: chat-completions request bodies and replies.

Why apart from the client (:mod:`halluscope.models.openai_backend`): what is sent and how a reply
or an error is read are pure functions of the request and the reply, testable without a server;
the client keeps the transport (concurrency, retries, the key, the event loop).

- Bodies (:func:`chat_body`): the request's messages, the image of the first user turn as a
  base64 data URL (checked against the request's ``image_sha256``), the generation params of
  :data:`PARAM_NAMES` (others are refused) and ``json_schema`` as ``response_format``.
- Replies (:func:`completion_text`): the first choice's text and deterministic metadata; a
  malformed body raises :class:`Retryable`, as do the statuses of :func:`is_retry_status`.
- Retry timing: :func:`parse_retry_after` (the server's ``Retry-After``/``retry-after-ms``) and
  :func:`backoff_delay` (full jitter over an exponential cap when the server gives no delay).
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from halluscope.models.base import Request

PARAM_NAMES: dict[str, str] = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_new_tokens": "max_tokens",
    "seed": "seed",
    "stop": "stop",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}
"""Request params -> chat-completions fields (``json_schema`` is handled separately)."""

RETRY_STATUSES = frozenset({408, 429})
"""Retried besides every 5xx status."""

_IMAGE_TYPES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def is_retry_status(status: int) -> bool:
    """Worth repeating: 408, 429 and every 5xx (other statuses cannot improve by repeating)."""
    return status in RETRY_STATUSES or status >= 500


class Retryable(Exception):
    """One failed attempt that may succeed when repeated; ``delay`` = the server's Retry-After."""

    def __init__(self, reason: str, status: int | None = None, delay: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.delay = delay


def image_mime(data: bytes) -> str:
    """MIME type from the magic bytes (file suffixes lie; servers decode by type)."""
    for magic, mime in _IMAGE_TYPES:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    raise ValueError("unsupported image format (expected PNG, JPEG, GIF or WebP bytes)")


def image_data_url(path: str | Path, expected_sha256: str | None = None, owner: str = "") -> str:
    """``data:<mime>;base64,...`` for the image at ``path``, checked against its cache hash."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"image {str(path)!r}{owner} does not exist; expected the image file named in "
            "items.jsonl"
        ) from None
    if expected_sha256 is not None:
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected_sha256.lower():
            raise ValueError(
                f"image {path} has sha256 {actual}, but the request says {expected_sha256}; the "
                "answer would be cached under the wrong image"
            )
    try:
        mime = image_mime(data)
    except ValueError as err:
        raise ValueError(f"image {path}: {err}") from None
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date)."""
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def check_json_schema(schema: Any, where: str) -> Any:
    """A JSON-schema object (checked against its metaschema) or ``True``; ``None`` = plain text.

    Why check here: the llama.cpp server turns the schema into a grammar and an invalid one can
    crash it, taking every other in-flight request down too.
    """
    if schema is None or schema is False:
        return None
    if schema is True:
        return True
    if not isinstance(schema, Mapping):
        raise ValueError(
            f"{where}: json_schema must be a JSON-schema object or true, got {schema!r}"
        )
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - jsonschema is a dependency of halluscope.config
        return dict(schema)
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as err:
        raise ValueError(
            f"{where}: json_schema is not a valid JSON schema: {err.message}"
        ) from None
    return dict(schema)


def short(text: Any, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def chat_messages(request: Request) -> list[dict[str, Any]]:
    """The request's messages, the image (if any) attached to the first user turn."""
    messages: list[dict[str, Any]] = [dict(m) for m in request.messages]
    if not messages:
        raise ValueError(f"openai backend: request {request.request_id!r} has no messages")
    if request.image_path is None:
        return messages
    url = image_data_url(
        request.image_path,
        request.image_sha256,
        owner=f" of image {request.image_id!r} (request {request.request_id!r})",
    )
    for message in messages:
        if message["role"] == "user":
            message["content"] = [
                {"type": "image_url", "image_url": {"url": url}},
                {"type": "text", "text": message["content"]},
            ]
            return messages
    raise ValueError(
        f"openai backend: request {request.request_id!r} has an image but no user message "
        "to attach it to"
    )


def chat_body(request: Request, model: str, default_schema: Any = None) -> dict[str, Any]:
    """The chat-completions arguments for one request (validated, image inlined);
    ``default_schema``: the spec-level ``json_schema`` used when the request sets none."""
    params = dict(request.params)
    unknown = sorted(set(params) - set(PARAM_NAMES) - {"json_schema"})
    if unknown:
        raise ValueError(
            f"openai backend {model!r}: request {request.request_id!r} has params "
            f"{unknown} that the chat-completions API does not take; valid params: "
            f"{', '.join(sorted([*PARAM_NAMES, 'json_schema']))}"
        )
    body: dict[str, Any] = {"model": model, "messages": chat_messages(request)}
    for name, field_name in PARAM_NAMES.items():
        if params.get(name) is not None:
            body[field_name] = params[name]
    schema = (
        check_json_schema(params["json_schema"], f"request {request.request_id!r}")
        if "json_schema" in params
        else default_schema
    )
    if schema is not None:
        body["response_format"] = (
            {"type": "json_object"} if schema is True else {"type": "json_object", "schema": schema}
        )
    return body


def backoff_delay(
    retry: int, last: Retryable | None, rng: random.Random, base: float, cap: float
) -> float:
    """The server's Retry-After when given, else full jitter over an exponential cap:
    ``uniform(0, min(cap, base * 2**retry))`` from ``rng``."""
    if last is not None and last.delay is not None:
        return last.delay
    return rng.uniform(0.0, min(cap, base * (2.0**retry)))


def completion_text(completion: Any) -> tuple[str, dict[str, Any]]:
    """The first choice's text plus deterministic metadata; a malformed body is retryable."""
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        body = completion if isinstance(completion, str) else type(completion).__name__
        raise Retryable(f"malformed response body: no choices ({short(body, 120)})", 200)
    message = getattr(choices[0], "message", None)
    text = getattr(message, "content", None)
    if not isinstance(text, str):
        raise Retryable("malformed response body: choices[0].message.content is not text", 200)
    meta: dict[str, Any] = {}
    finish = getattr(choices[0], "finish_reason", None)
    if isinstance(finish, str):
        meta["finish_reason"] = finish
    served = getattr(completion, "model", None)
    if isinstance(served, str):
        meta["served_model"] = served
    usage = getattr(completion, "usage", None)
    tokens = {name: getattr(usage, name, None) for name in ("prompt_tokens", "completion_tokens")}
    if all(isinstance(v, int) for v in tokens.values()):
        meta["usage"] = tokens
    return text, meta
