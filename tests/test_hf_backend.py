"""The ``hf`` backend on real, tiny, randomly initialised transformers models built here.

Nothing is downloaded: a word-level tokenizer is trained on a small caption corpus, a tiny LLaVA
(CLIP vision tower + Llama) and a tiny Llama causal LM are built from configs and saved with
``save_pretrained``; the backend then loads them from disk like any checkpoint. The answers are
random words, but every code path (processor, chat template, left padding, batching, seeding,
decoding, identity) is the real one.
"""

from __future__ import annotations

import hashlib
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before huggingface_hub reads it at import time
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from tiny_models import CHAT_TEMPLATE, build_tiny_models  # noqa: E402

from halluscope.models import Request, make_backend, user_message  # noqa: E402
from halluscope.models import hf as hf_module  # noqa: E402

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

GREEDY = {"seed": 0, "max_new_tokens": 6, "temperature": 0.0}
PROMPTS = (
    "Provide a brief description of the given image.",
    "Describe the image using minimal words but maximum impact, as a short textual summary.",
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Build and save a tiny LLaVA, a tiny causal LM and two demo PNGs."""
    return build_tiny_models(tmp_path_factory.mktemp("tiny-hf"))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _image_requests(tiny: dict[str, Path], params: dict | None = None) -> list[Request]:
    return [
        Request(
            request_id=f"tiny-llava/{name}",
            image_id=name,
            image_path=str(tiny[name]),
            image_sha256=_sha(tiny[name]),
            messages=(user_message(prompt),),
            params=dict(params or GREEDY),
            task="caption",
        )
        for name, prompt in zip(("astronaut", "chelsea"), PROMPTS, strict=True)
    ]


def _text_requests(params: dict | None = None) -> list[Request]:
    return [
        Request(
            request_id=f"tiny-lm/{n}",
            messages=({"role": "system", "content": "answer yes or no"}, user_message(prompt)),
            params=dict(params or GREEDY),
            task="chat",
        )
        for n, prompt in enumerate(PROMPTS)
    ]


def _count_generate_calls(backend: hf_module.HFBackend, monkeypatch: pytest.MonkeyPatch) -> list:
    """Record the batch size of every ``model.generate`` call."""
    calls: list[int] = []
    model = backend._model
    original = model.generate

    def spy(*args: object, **kwargs: object) -> object:
        calls.append(int(kwargs["input_ids"].shape[0]))
        return original(*args, **kwargs)

    monkeypatch.setattr(model, "generate", spy)
    return calls


# ----------------------------------------------------------------------------------------------
# (a) image-text-to-text: tiny LLaVA


@pytest.fixture(scope="module")
def llava(tiny: dict[str, Path]) -> hf_module.HFBackend:
    spec = {
        "backend": "hf",
        "model": str(tiny["llava"]),
        "kind": "image-text-to-text",
        "dtype": "auto",
        "device": "auto",
        "batch_size": 4,
    }
    backend = make_backend(spec, items={}, model_name="tiny-llava")
    assert isinstance(backend, hf_module.HFBackend)
    return backend


def test_llava_batch_of_two_images(
    llava: hf_module.HFBackend, tiny: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    llava._load()
    calls = _count_generate_calls(llava, monkeypatch)
    requests = _image_requests(tiny)
    first = llava.generate(requests)
    again = llava.generate(requests)
    assert calls == [2, 2], "both requests must go to the model in ONE batch"
    assert [r.request_id for r in first] == [r.request_id for r in requests]
    for response in first:
        assert response.model == "tiny-llava"
        assert isinstance(response.text, str)
        assert 1 <= response.meta["new_tokens"] <= GREEDY["max_new_tokens"]
        assert response.meta["finish_reason"] in ("stop", "length")
        assert response.identity["name"] == str(tiny["llava"])
        assert response.identity["revision"].startswith("local-")
    assert any(r.text for r in first), "random words expected from at least one answer"
    assert [r.text for r in first] == [r.text for r in again], "greedy + same seed must repeat"
    # CPU here: auto picks float32 on the CPU.
    assert str(llava._device) == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        assert llava._model.dtype == torch.float32


def test_llava_left_padding(llava: hf_module.HFBackend, tiny: dict[str, Path]) -> None:
    requests = _image_requests(tiny)
    images = [hf_module.load_image(r.image_path) for r in requests]
    assert llava.tokenizer.padding_side == "left"
    batch = llava._encode(requests, images)
    mask = batch["attention_mask"]
    assert mask.shape[0] == 2 and batch["pixel_values"].shape[0] == 2
    assert bool(mask[:, -1].all()), "the last position must be real text in every row"
    assert not bool(mask[:, 0].all()), "the shorter prompt must be padded on the left"
    image_token = llava.tokenizer.convert_tokens_to_ids("<image>")
    assert int((batch["input_ids"] == image_token).sum()) == 2 * 25  # (30/6)^2 patches per image


def test_llava_batched_equals_alone(llava: hf_module.HFBackend, tiny: dict[str, Path]) -> None:
    """Left padding + attention mask: batching does not change greedy answers (tiny fp32 model)."""
    requests = _image_requests(tiny)
    together = [r.text for r in llava.generate(requests)]
    alone = [llava.generate([r])[0].text for r in requests]
    assert together == alone


def test_llava_sampling_is_seeded(llava: hf_module.HFBackend, tiny: dict[str, Path]) -> None:
    sampled = {"seed": 3, "max_new_tokens": 8, "temperature": 1.0, "top_p": 0.95}
    one = [r.text for r in llava.generate(_image_requests(tiny, sampled))]
    two = [r.text for r in llava.generate(_image_requests(tiny, sampled))]
    other = [r.text for r in llava.generate(_image_requests(tiny, {**sampled, "seed": 4}))]
    assert one == two
    assert one != other


def test_llava_groups_by_params_and_image(
    llava: hf_module.HFBackend, tiny: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Different decoding settings or image/no image never share a batch; order is kept."""
    llava._load()
    calls = _count_generate_calls(llava, monkeypatch)
    a, b = _image_requests(tiny)
    longer = Request(
        request_id="longer",
        image_id=b.image_id,
        image_path=b.image_path,
        messages=b.messages,
        params={**GREEDY, "max_new_tokens": 3},
    )
    text_only = Request(request_id="text", messages=(user_message(PROMPTS[0]),), params=GREEDY)
    answers = llava.generate([a, longer, text_only, b])
    assert [r.request_id for r in answers] == [a.request_id, "longer", "text", b.request_id]
    assert sorted(calls) == [1, 1, 2]
    assert answers[1].meta["new_tokens"] <= 3


def test_llava_through_the_cache(tiny: dict[str, Path], tmp_path: Path) -> None:
    """A cached rerun answers from disk without loading the weights."""
    from halluscope.io import read_jsonl
    from halluscope.models import ResponseCache, generate_captions

    items = [
        {"image_id": n, "image": str(tiny[n]), "image_sha256": _sha(tiny[n])}
        for n in ("astronaut", "chelsea")
    ]
    spec = {"backend": "hf", "model": str(tiny["llava"]), "kind": "image-text-to-text"}
    outs = []
    for run in range(2):
        backend = make_backend(spec, model_name="tiny-llava")
        cache = ResponseCache(tmp_path / "cache")
        out = tmp_path / f"run{run}.jsonl"
        stats = generate_captions(
            backend,
            cache,
            items,
            "i01",
            PROMPTS[0],
            "tiny-llava",
            GREEDY,
            out,
            "v1",
            batch_size=8,
            progress=False,
        )
        outs.append(out.read_bytes())
        assert stats["hits"] == (0 if run == 0 else 2)
        assert (backend._model is None) == (run == 1)
    assert outs[0] == outs[1]
    assert [r["image_id"] for r in read_jsonl(tmp_path / "run0.jsonl")] == ["astronaut", "chelsea"]


def test_llava_identity_is_stable_and_cheap(tiny: dict[str, Path]) -> None:
    spec = {"backend": "hf", "model": str(tiny["llava"]), "kind": "image-text-to-text"}
    a, b = make_backend(spec), make_backend(spec)
    assert (
        a.identity
        == b.identity
        == {
            "backend": "hf",
            "name": str(tiny["llava"]),
            "revision": a.identity["revision"],
        }
    )
    assert a._model is None, "the identity must not load the weights"


# ----------------------------------------------------------------------------------------------
# (b) causal-lm: tiny Llama


@pytest.fixture(scope="module")
def lm(tiny: dict[str, Path]) -> hf_module.HFBackend:
    spec = {"backend": "hf", "model": str(tiny["lm"]), "kind": "causal-lm", "device": "cpu"}
    return make_backend(spec, model_name="tiny-lm")


def test_causal_lm_batch(
    lm: hf_module.HFBackend, tiny: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    lm._load()
    calls = _count_generate_calls(lm, monkeypatch)
    requests = _text_requests()
    first = lm.generate(requests)
    again = lm.generate(requests)
    assert calls == [2, 2]
    assert [r.request_id for r in first] == [r.request_id for r in requests]
    assert [r.text for r in first] == [r.text for r in again]
    assert any(r.text for r in first)
    for response in first:
        assert response.model == "tiny-lm"
        assert response.identity["name"] == str(tiny["lm"])
        assert response.identity["revision"].startswith("local-")
    alone = [lm.generate([r])[0].text for r in requests]
    assert [r.text for r in first] == alone


def test_causal_lm_left_padding(lm: hf_module.HFBackend) -> None:
    requests = _text_requests()
    assert lm.tokenizer.padding_side == "left"
    batch = lm._encode(requests, [None, None])
    mask = batch["attention_mask"]
    assert bool(mask[:, -1].all()) and not bool(mask[:, 0].all())
    prompt = lm.tokenizer.decode(batch["input_ids"][1], skip_special_tokens=False)
    assert prompt.startswith("<s>") and "ASSISTANT" in prompt.upper(), prompt


def test_causal_lm_refuses_images(lm: hf_module.HFBackend, tiny: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match="text-only causal-lm"):
        lm.generate(_image_requests(tiny)[:1])


def test_causal_lm_without_chat_template(tiny: dict[str, Path], tmp_path: Path) -> None:
    """No template: refuse ``chat``; ``plain`` and a ``chat_template`` override both work."""
    import json
    import shutil

    bare = tmp_path / "bare-lm"
    shutil.copytree(tiny["lm"], bare)
    (bare / "chat_template.jinja").unlink(missing_ok=True)
    config = json.loads((bare / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (bare / "tokenizer_config.json").write_text(json.dumps(config))
    spec = {"backend": "hf", "model": str(bare), "kind": "causal-lm"}
    with pytest.raises(ValueError, match="has no chat template.*prompt_format: plain"):
        make_backend(spec).generate(_text_requests())

    plain = make_backend({**spec, "prompt_format": "plain"})
    assert plain.identity["prompt_format"] == "plain"
    assert [r.text for r in plain.generate(_text_requests())] == [
        r.text for r in plain.generate(_text_requests())
    ]

    custom = make_backend({**spec, "chat_template": CHAT_TEMPLATE})
    assert (
        custom.identity["chat_template_sha256"]
        == hashlib.sha256(CHAT_TEMPLATE.encode()).hexdigest()
    )
    assert len(custom.generate(_text_requests())) == 2


# ----------------------------------------------------------------------------------------------
# (c) errors and identity helpers


def test_image_id_without_file_is_refused(llava: hf_module.HFBackend) -> None:
    request = Request(request_id="r0", image_id="astronaut", messages=(user_message("hi"),))
    with pytest.raises(ValueError, match="names image 'astronaut' but has no image file"):
        llava.generate([request])


def test_text_only_by_design_is_answered_without_an_image(llava: hf_module.HFBackend) -> None:
    """A question whose item has no image by design (HallusionBench's text-only questions) is
    asked from its text (the refusal above is for an image that should be there), the same
    reply on every call."""
    request = Request(
        request_id="r0",
        image_id="HB-VS_chart_0_0",
        messages=(user_message("Is Paris the capital of France?"),),
        params=dict(GREEDY),
        task="hallusionbench",
        meta={"text_only": True},
    )
    (alone,) = llava.generate([request])
    assert alone.request_id == "r0" and isinstance(alone.text, str)
    assert llava.generate([request])[0].text == alone.text


def test_missing_image_names_the_path(llava: hf_module.HFBackend, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-image.png"
    request = Request(
        request_id="r1", image_id="x", image_path=str(missing), messages=(user_message("hi"),)
    )
    with pytest.raises(FileNotFoundError, match="no-such-image.png"):
        llava.generate([request])


def test_corrupt_image_names_the_path(tmp_path: Path) -> None:
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\nthis is not really a png")
    with pytest.raises(ValueError, match="broken.png.*not a readable image"):
        hf_module.load_image(broken)


def test_image_hash_mismatch_is_refused(tiny: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match="does not match its sha256"):
        hf_module.load_image(tiny["chelsea"], sha256=_sha(tiny["astronaut"]))


def test_decompression_bomb_is_refused(
    tiny: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from PIL import Image

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # the PNGs have > 2 * 1000 pixels
    with pytest.raises(ValueError, match="astronaut.png.*decompression bomb"):
        hf_module.load_image(tiny["astronaut"])


def test_unknown_kind_lists_valid_kinds(tiny: dict[str, Path]) -> None:
    spec = {"backend": "hf", "model": str(tiny["lm"]), "kind": "text-to-speech"}
    with pytest.raises(ValueError, match="image-text-to-text, causal-lm"):
        make_backend(spec)


def test_bad_specs() -> None:
    with pytest.raises(ValueError, match="valid kinds"):
        make_backend({"backend": "hf", "model": "org/model"})
    with pytest.raises(ValueError, match="unknown key.*'temprature'"):
        make_backend({"backend": "hf", "model": "x", "kind": "causal-lm", "temprature": 0})
    with pytest.raises(ValueError, match="unknown device"):
        make_backend({"backend": "hf", "model": "x", "kind": "causal-lm", "device": "gpu"})
    with pytest.raises(ValueError, match="unknown dtype"):
        make_backend({"backend": "hf", "model": "x", "kind": "causal-lm", "dtype": "fp8"})
    with pytest.raises(FileNotFoundError, match="does not exist"):
        _ = make_backend({"backend": "hf", "model": "./no/such/dir", "kind": "causal-lm"}).identity


def test_local_revision_follows_contents(tmp_path: Path) -> None:
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text('{"a": 1}')
    (model / "model.safetensors").write_bytes(b"0" * 10)
    first = hf_module.local_dir_revision(model)
    assert first == hf_module.local_dir_revision(model)
    (model / "model.safetensors").write_bytes(b"1" * 10)  # same size: weights count by size
    assert hf_module.local_dir_revision(model) == first
    (model / "config.json").write_text('{"a": 2}')
    assert hf_module.local_dir_revision(model) != first
    snapshot = tmp_path / "models--org--m" / "snapshots" / ("ab" * 20)
    snapshot.mkdir(parents=True)
    assert hf_module.local_dir_revision(snapshot) == "ab" * 20


def test_hub_revision_is_the_snapshot_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    commit = "0123456789abcdef0123456789abcdef01234567"
    seen = {}

    def fake_download(repo_id: str, filename: str, revision: str | None = None) -> str:
        seen.update(repo_id=repo_id, filename=filename, revision=revision)
        return f"/cache/models--org--m/snapshots/{commit}/{filename}"

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    backend = make_backend(
        {"backend": "hf", "model": "org/m", "kind": "image-text-to-text", "revision": "main"}
    )
    assert backend.identity == {"backend": "hf", "name": "org/m", "revision": commit}
    assert seen == {"repo_id": "org/m", "filename": "config.json", "revision": "main"}

    def offline(*_: object, **__: object) -> str:
        raise OSError("offline and not cached")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", offline)
    fresh = make_backend({"backend": "hf", "model": "org/other", "kind": "causal-lm"})
    with pytest.raises(RuntimeError, match="cannot resolve model 'org/other'"):
        _ = fresh.identity


def test_cuda_out_of_memory_halves_the_batch(
    tiny: dict[str, Path], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A batch that runs out of GPU memory (injected here: a CPU machine) is halved and retried
    with the same answers, logged once with the size that fit, which the next batches keep."""
    spec = {"backend": "hf", "model": str(tiny["llava"]), "kind": "image-text-to-text"}
    backend = make_backend({**spec, "batch_size": 4})
    backend._load()
    from dataclasses import replace

    twice = _image_requests(tiny) * 2  # four requests, two images
    requests = [replace(r, request_id=f"{r.request_id}/{n}") for n, r in enumerate(twice)]
    alone = [make_backend({**spec, "batch_size": 1}).generate([r])[0].text for r in requests]
    calls: list[int] = []
    original = backend._model.generate

    def generate(**kwargs: object) -> object:
        calls.append(int(kwargs["input_ids"].shape[0]))
        if calls[-1] > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (injected)")
        return original(**kwargs)

    monkeypatch.setattr(backend._model, "generate", generate)
    with caplog.at_level("WARNING", logger="halluscope.models.hf"):
        first = backend.generate(requests)
        second = backend.generate(requests)
    assert calls == [4, 2, 2, 2, 2]
    assert [r.text for r in first] == alone == [r.text for r in second]
    logged = [r.getMessage() for r in caplog.records if "out of memory" in r.getMessage()]
    assert len(logged) == 1 and "batch size 4; batch size 2 fits" in logged[0]

    one = make_backend({**spec, "batch_size": 1})
    one._load()
    monkeypatch.setattr(
        one._model, "generate", lambda **_: (_ for _ in ()).throw(torch.cuda.OutOfMemoryError())
    )
    with pytest.raises(torch.cuda.OutOfMemoryError):
        one.generate(requests[:1])  # nothing smaller to try
