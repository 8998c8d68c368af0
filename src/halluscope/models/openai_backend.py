"""``openai`` backend: any OpenAI-compatible chat endpoint (OpenAI, vLLM, llama.cpp server, Ollama).

Why a backend of its own: hosted and self-served models are reached the same way, so one careful
client covers them all. Careful means:

- **Bounded concurrency**: at most ``max_in_flight`` requests are open at once (an
  :class:`asyncio.Semaphore` plus an HTTP connection pool of the same size), so a batch neither
  floods a small local server nor trips a provider's rate limit at once.
- **Retries we control**: the ``openai`` client is built with ``max_retries=0`` and this module
  retries 429, 408, 5xx, timeouts, connection errors and malformed bodies (no ``choices``, no text)
  with exponential backoff and full jitter (``uniform(0, min(backoff_max, backoff_base * 2**n))``,
  from a seeded generator), or exactly the server's ``Retry-After``/``retry-after-ms`` when it sends
  one. Other statuses (400, 401, 404...) fail at once: repeating them cannot help. After the last
  attempt the error names the request id, the base URL and the last status.
- **Secrets stay in the environment**: the API key is read from the variable named by
  ``api_key_env`` (default ``OPENAI_API_KEY``) when the first request is sent, not when the backend
  is built, so ``replay``-mode runs and CI need no key. It is never part of the identity, the cache
  key, responses or error messages. ``api_key_env: none`` is for local servers that need no key (a
  dummy is sent).
- **One destination**: requests go only to ``base_url`` (required, no default): redirects are not
  followed and proxy/netrc settings from the environment are ignored (``trust_env=False``).

Spec (``params.yaml`` ``models.<id>``)::

    {backend: openai, model: gpt-4o-mini, base_url: "https://api.openai.com/v1",
     api_key_env: OPENAI_API_KEY, revision: "", max_in_flight: 4, timeout: 60,
     max_retries: 5, backoff_base: 1.0, backoff_max: 30.0, json_schema: null,
     errors: raise, jitter_seed: 0}

Requests: system/assistant turns are sent as text; the image (``Request.image_path``) is attached to
the first user turn as a base64 data URL (PNG, JPEG, GIF or WebP, detected from the bytes; when the
request carries ``image_sha256`` the bytes must match it, since that hash is what the cache key
holds). Generation params: ``temperature``, ``top_p``, ``max_new_tokens`` (sent as ``max_tokens``),
``seed``, ``stop``, ``presence_penalty``, ``frequency_penalty`` and ``json_schema``; any other
param is refused rather than silently ignored, because it would be in the cache key without
changing the answer. ``json_schema`` (a JSON-schema object, or ``true`` for any JSON object) asks
for ``response_format={"type": "json_object", "schema": ...}``, the form the llama.cpp server
accepts; a spec-level ``json_schema`` is the default for every request and is part of the identity.

What goes over the wire (request bodies, image checks, reply parsing, which failures are
retryable and how long to wait) is :mod:`halluscope.models.openai_wire`; this module is the client.

Failures: with ``errors: raise`` (default) a batch with a failed request raises
:class:`OpenAIBackendError` (the first failure in request order) once every request of the batch
has finished; with ``errors: return`` failed requests come back as ``Response(text="",
meta={"error": ...})``, which the cache never stores and ``generate_captions`` reports after
storing the batch's successes.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import random
import threading
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from halluscope.models.base import Request, Response, register_backend
from halluscope.models.openai_wire import (
    PARAM_NAMES,
    Retryable,
    backoff_delay,
    chat_body,
    check_json_schema,
    completion_text,
    image_data_url,
    image_mime,
    is_retry_status,
    parse_retry_after,
    short,
)

__all__ = [
    "PARAM_NAMES",
    "OpenAIBackendError",
    "OpenAIChatBackend",
    "check_json_schema",
    "from_spec",
    "image_data_url",
    "image_mime",
    "parse_retry_after",
]

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
NO_KEY = "none"
DUMMY_API_KEY = "sk-no-key-required"
"""Sent when ``api_key_env: none``: the ``openai`` client insists on some key."""

ERROR_MODES = ("raise", "return")


class OpenAIBackendError(RuntimeError):
    """A request failed for good (retries used up, or a status that retrying cannot fix)."""

    def __init__(self, message: str, request_id: str, status: int | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id
        self.status = status


@dataclass
class _Runtime:
    """The private event loop and the client bound to it (kept apart from the backend so that a
    finalizer can close them without keeping the backend alive)."""

    loop: asyncio.AbstractEventLoop
    client: Any = None

    def close(self) -> None:
        if self.loop.is_closed():
            return
        client, self.client = self.client, None
        if client is not None:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                self.loop.run_until_complete(client.close())
            else:
                # A finalizer can run while another event loop runs in this thread (garbage
                # collection inside another backend's batch); ours then runs on a helper thread.
                closer = threading.Thread(
                    target=self.loop.run_until_complete, args=(client.close(),)
                )
                closer.start()
                closer.join()
        self.loop.close()

    def run(self, coroutine: Any) -> Any:
        """Run ``coroutine`` to completion; on an interrupt, cancel what is still in flight so
        that the next batch does not inherit half-finished requests."""
        try:
            return self.loop.run_until_complete(coroutine)
        except BaseException:
            pending = [task for task in asyncio.all_tasks(self.loop) if not task.done()]
            for task in pending:
                task.cancel()
            if pending:
                self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            raise


class OpenAIChatBackend:
    """Chat completions against one OpenAI-compatible ``base_url`` (see the module docstring)."""

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key_env: str | None = DEFAULT_API_KEY_ENV,
        revision: str = "",
        max_in_flight: int = 4,
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        json_schema: Any = None,
        errors: str = "raise",
        jitter_seed: int = 0,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ValueError(f"openai backend: 'model' must be a non-empty string, got {model!r}")
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"openai backend for {model!r}: 'base_url' must be an http(s) URL, got {base_url!r}"
            )
        if api_key_env is not None and (not isinstance(api_key_env, str) or not api_key_env):
            raise ValueError("openai backend: 'api_key_env' must be a variable name or 'none'")
        if (
            isinstance(max_in_flight, bool)
            or not isinstance(max_in_flight, int)
            or max_in_flight < 1
        ):
            raise ValueError(
                f"openai backend: max_in_flight must be an int >= 1, got {max_in_flight!r}"
            )
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(
                f"openai backend: max_retries must be an int >= 0, got {max_retries!r}"
            )
        for label, value in (
            ("timeout", timeout),
            ("backoff_base", backoff_base),
            ("backoff_max", backoff_max),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"openai backend: {label} must be a number >= 0, got {value!r}")
        if errors not in ERROR_MODES:
            raise ValueError(f"openai backend: errors must be one of {ERROR_MODES}, got {errors!r}")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = (
            None if api_key_env is None or api_key_env.lower() == NO_KEY else api_key_env
        )
        self.revision = str(revision)
        self.max_in_flight = max_in_flight
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.json_schema = check_json_schema(json_schema, f"model {model!r} spec")
        self.errors = errors
        self._rng = random.Random(jitter_seed)
        self._lock = threading.Lock()
        self._runtime: _Runtime | None = None
        self._finalizer: weakref.finalize | None = None
        self.attempts = 0
        """HTTP attempts sent so far (successes, failures and retries)."""

    def __repr__(self) -> str:
        return f"OpenAIChatBackend(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def identity(self) -> dict:
        """Model name, endpoint and revision; plus the default schema when one is configured."""
        identity: dict[str, Any] = {
            "backend": "openai",
            "name": self.model,
            "base_url": self.base_url,
            "revision": self.revision,
        }
        if self.json_schema is not None:
            identity["json_schema"] = copy.deepcopy(self.json_schema)
        return identity

    # -- public API -------------------------------------------------------------------------------

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        """Answer ``requests`` concurrently (at most ``max_in_flight`` open), in request order."""
        requests = list(requests)
        if not requests:
            return []
        # bad input fails before any call
        bodies = [chat_body(r, self.model, self.json_schema) for r in requests]
        with self._lock:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return self._run(requests, bodies)
            # Called from inside an event loop (a notebook): run ours on a worker thread.
            with ThreadPoolExecutor(max_workers=1) as pool:
                return pool.submit(self._run, requests, bodies).result()

    def close(self) -> None:
        """Close the HTTP connections (also done when the backend is garbage collected)."""
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()
            self._runtime = None
            self._finalizer = None

    def __enter__(self) -> OpenAIChatBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transport --------------------------------------------------------------------------------

    def _api_key(self) -> str:
        """The key from the configured variable (read per client, never stored on the backend)."""
        if self.api_key_env is None:
            return DUMMY_API_KEY
        key = os.environ.get(self.api_key_env)
        if not key:
            raise OpenAIBackendError(
                f"openai backend {self.model!r} ({self.base_url}): the environment variable "
                f"{self.api_key_env} that should hold the API key is not set; set it, or use "
                "api_key_env: none for a local server that needs no key",
                request_id="",
            )
        return key

    def _client(self) -> Any:
        import httpx2
        import openai

        key = self._api_key()
        # The pool is bounded like the semaphore: a second guard on concurrency.
        http = openai.DefaultAsyncHttpxClient(
            follow_redirects=False,
            trust_env=False,
            limits=httpx2.Limits(
                max_connections=self.max_in_flight, max_keepalive_connections=self.max_in_flight
            ),
        )
        return openai.AsyncOpenAI(
            api_key=key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,
            http_client=http,
            default_headers={"Authorization": f"Bearer {key}"},
        )

    def _run(self, requests: list[Request], bodies: list[dict[str, Any]]) -> list[Response]:
        if self._runtime is None or self._runtime.loop.is_closed():
            self._runtime = _Runtime(asyncio.new_event_loop())
            self._finalizer = weakref.finalize(self, self._runtime.close)
        runtime = self._runtime
        if runtime.client is None:
            runtime.client = self._client()
        results = runtime.run(self._gather(runtime.client, requests, bodies))
        responses: list[Response] = []
        failures = 0
        first: OpenAIBackendError | None = None
        for request, result in zip(requests, results, strict=True):
            if isinstance(result, OpenAIBackendError):
                failures += 1
                first = first or result
                responses.append(
                    Response(
                        request_id=request.request_id,
                        text="",
                        model=self.model,
                        identity=self.identity,
                        meta={"error": str(result)},
                    )
                )
            elif isinstance(result, BaseException):
                raise result
            else:
                responses.append(result)
        if first is not None and self.errors == "raise":
            if failures > 1:
                raise OpenAIBackendError(
                    f"{first} ({failures - 1} more of the {len(requests)} requests in this batch "
                    "failed too)",
                    first.request_id,
                    first.status,
                ) from first
            raise first
        return responses

    async def _gather(
        self, client: Any, requests: list[Request], bodies: list[dict[str, Any]]
    ) -> list[Any]:
        semaphore = asyncio.Semaphore(self.max_in_flight)
        return await asyncio.gather(
            *(self._one(client, semaphore, r, b) for r, b in zip(requests, bodies, strict=True)),
            return_exceptions=True,
        )

    async def _one(
        self, client: Any, semaphore: asyncio.Semaphore, request: Request, body: dict[str, Any]
    ) -> Response:
        """One request with our retry loop; the wait between attempts frees the slot."""
        last: Retryable | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                await asyncio.sleep(self._delay(attempt - 1, last))
            async with semaphore:
                try:
                    return await self._attempt(client, request, body)
                except Retryable as err:
                    last = err
        assert last is not None
        attempts = "1 attempt" if self.max_retries == 0 else f"{self.max_retries + 1} attempts"
        status = f"HTTP {last.status}" if last.status is not None else "no HTTP status"
        raise OpenAIBackendError(
            f"openai backend {self.model!r}: request {request.request_id!r} to {self.base_url} "
            f"failed after {attempts}; last status: {status} "
            f"({last.reason})",
            request.request_id,
            last.status,
        )

    def _delay(self, retry: int, last: Retryable | None) -> float:
        """The server's Retry-After when given, else full jitter over an exponential cap."""
        return backoff_delay(retry, last, self._rng, self.backoff_base, self.backoff_max)

    async def _attempt(self, client: Any, request: Request, body: dict[str, Any]) -> Response:
        import openai

        self.attempts += 1
        try:
            completion = await client.chat.completions.create(**body)
        except openai.APIStatusError as err:
            status = err.status_code
            reason = short(getattr(err, "message", err))
            if is_retry_status(status):
                raise Retryable(reason, status, parse_retry_after(err.response.headers)) from None
            hint = ""
            if status in (401, 403):
                hint = f"; check the key in ${self.api_key_env}" if self.api_key_env else ""
            elif 300 <= status < 400:
                hint = "; redirects are not followed, point base_url at the final address"
            raise OpenAIBackendError(
                f"openai backend {self.model!r}: request {request.request_id!r} to "
                f"{self.base_url} was refused with HTTP {status} ({reason}){hint}",
                request.request_id,
                status,
            ) from None
        except openai.APITimeoutError:
            raise Retryable(f"timed out after {self.timeout:g} s") from None
        except openai.APIConnectionError as err:
            cause = err.__cause__ or err
            raise Retryable(f"connection error: {short(cause) or type(cause).__name__}") from None
        except (openai.APIResponseValidationError, ValueError) as err:
            raise Retryable(f"malformed response body: {short(err)}") from None
        text, meta = completion_text(completion)
        if body.get("response_format"):
            try:
                json.loads(text)
                meta["json_valid"] = True
            except ValueError:
                meta["json_valid"] = False
        return Response(
            request_id=request.request_id,
            text=text,
            model=self.model,
            identity=self.identity,
            meta=meta,
        )


_OPTION_KEYS = (
    "revision",
    "max_in_flight",
    "timeout",
    "max_retries",
    "backoff_base",
    "backoff_max",
    "json_schema",
    "errors",
    "jitter_seed",
)
"""Spec keys passed on as they are to :class:`OpenAIChatBackend` (keyword arguments)."""
_SPEC_KEYS = {"backend", "model", "name", "base_url", "api_key_env", *_OPTION_KEYS}


@register_backend("openai")
def from_spec(
    spec: Mapping[str, Any], model_name: str | None = None, **_: Any
) -> OpenAIChatBackend:
    """Build the backend from a model spec (keys in the module docstring; unknown keys fail).

    ``model`` is the name the endpoint knows (``name`` is accepted as an alias); the ``model_name``
    context (the ``params.yaml`` model id) is only a last resort.
    """
    if any(key.lower().replace("-", "_") in ("api_key", "key", "token") for key in spec):
        raise ValueError(
            "openai model spec contains an API key entry; keys never go in params.yaml: export the "
            "key in an environment variable and name that variable with 'api_key_env'"
        )
    unknown = sorted(set(spec) - _SPEC_KEYS)
    if unknown:
        raise ValueError(
            f"openai model spec has unknown keys {unknown}; valid keys: "
            f"{', '.join(sorted(_SPEC_KEYS))}"
        )
    model = spec.get("model") or spec.get("name") or model_name
    if "base_url" not in spec:
        raise ValueError(
            f"openai model spec for {model!r} needs 'base_url' (e.g. https://api.openai.com/v1 or "
            "http://127.0.0.1:8000/v1): requests go only where the spec says"
        )
    options = {key: spec[key] for key in _OPTION_KEYS if key in spec}
    api_key_env = spec.get("api_key_env", DEFAULT_API_KEY_ENV)
    return OpenAIChatBackend(
        model,  # type: ignore[arg-type]
        spec["base_url"],
        api_key_env=None if api_key_env is None else str(api_key_env),
        **options,
    )
