"""The ``hf`` backend on every common transformers VLM family: the same answers at any batch size.

Each family of :data:`tiny_models.FAMILIES` is a tiny random checkpoint built from its config
with the family's real model and processor classes and a chat template of its format (nothing is
downloaded), loaded through the public ``hf`` spec (``from_spec``) like any checkpoint, and asked
about four of the demo's real images with prompts of different lengths, so that a batch of four
really pads. What a random model decodes is meaningless; what is asserted is what batching could
break: at batch size 1 and 4 the greedy tokens are identical, the first-token logits agree within
:data:`halluscope.models.hf.BATCH_LOGIT_ATOL` (float32, CPU), and ``meta`` counts exactly the
generated tokens and says why the answer ended.

Steps this machine cannot run are listed per family (``Family.not_tested``) and in
docs/models.md, whose family table :func:`family_table` writes and a test keeps equal.
"""

from __future__ import annotations

import hashlib
import os
import re

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before huggingface_hub reads it at import time
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from collections.abc import Iterator  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402
from tiny_models import FAMILIES, Family, build_family, family_table, stand_ins  # noqa: E402

from halluscope.data.demo import encode_png, load_demo_image  # noqa: E402
from halluscope.models import Request, user_message  # noqa: E402
from halluscope.models import hf as hf_module  # noqa: E402

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")

ROOT = Path(__file__).resolve().parents[1]
MAX_NEW = 5
IMAGES = ("astronaut", "chelsea", "coffee", "rocket")
PROMPTS = (  # different lengths, so that a batch of four pads
    "describe the image",
    "provide a brief description of the given image",
    "is there a cat in the image answer yes or no",
    "describe the image using minimal words but maximum impact as a short textual summary",
)


@pytest.fixture(scope="module")
def demo_images(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Four of the demo's images (the package-shipped photographs) as PNG files."""
    root = tmp_path_factory.mktemp("family-images")
    paths = {}
    for name in IMAGES:
        paths[name] = root / f"{name}.png"
        paths[name].write_bytes(encode_png(load_demo_image(name)))
    return paths


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Each family's tiny checkpoint, built on first use and shared by the module's tests."""
    root = tmp_path_factory.mktemp("families")
    built: dict[str, Path] = {}

    class Lazy(dict):
        def __missing__(self, slug: str) -> Path:
            family = next(f for f in FAMILIES if f.slug == slug)
            built[slug] = build_family(family, root / slug)
            return built[slug]

    yield Lazy()


@pytest.fixture
def video_stand_ins() -> Iterator[None]:
    """The families' video parts replaced (see :func:`tiny_models.stand_ins`)."""
    with stand_ins():
        yield


def _requests(images: dict[str, Path]) -> list[Request]:
    return [
        Request(
            request_id=f"family/{name}",
            image_id=name,
            image_path=str(path),
            image_sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
            messages=(user_message(prompt),),
            params={"seed": 0, "max_new_tokens": MAX_NEW, "temperature": 0.0},
            task="caption",
        )
        for (name, path), prompt in zip(images.items(), PROMPTS, strict=True)
    ]


def _backend(directory: Path, family: Family, batch_size: int) -> hf_module.HFBackend:
    spec = {
        "backend": "hf",
        "model": str(directory),
        "kind": "image-text-to-text",
        "dtype": "float32",
        "device": "cpu",
        "batch_size": batch_size,
        **family.spec,
    }
    backend = hf_module.from_spec(spec, model_name=family.slug)
    backend._load()
    return backend


@dataclass
class Spy:
    """What ``model.generate`` got and gave, per request in order: the batch's input ids and
    mask row, the generated sequence row, the first step's logits row."""

    batches: list[int] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)


def _spy(backend: hf_module.HFBackend, monkeypatch: pytest.MonkeyPatch) -> Spy:
    spy, model = Spy(), backend._model
    original = model.generate

    def generate(**kwargs: Any) -> Any:
        out = original(**kwargs, output_logits=True, return_dict_in_generate=True)
        ids, mask = kwargs["input_ids"], kwargs["attention_mask"]
        spy.batches.append(int(ids.shape[0]))
        for n in range(ids.shape[0]):
            spy.rows.append(
                {
                    "input_ids": ids[n],
                    "mask": mask[n],
                    "sequence": out.sequences[n],
                    "logits": out.logits[0][n],
                    "width": int(ids.shape[1]),
                }
            )
        return out.sequences

    monkeypatch.setattr(model, "generate", generate)
    return spy


def _answer(row: dict[str, Any], model: Any, encoder_decoder: bool) -> list[int]:
    """The generated tokens of one row, cut after the first eos, from the model's own facts (its
    decoder start token; the prompt width), not from the backend's code."""
    sequence = row["sequence"].tolist()
    if encoder_decoder:
        assert sequence[0] == model.generation_config.decoder_start_token_id
        tokens = sequence[1:]
    else:
        assert sequence[: row["width"]] == row["input_ids"].tolist()
        tokens = sequence[row["width"] :]
    eos = model.generation_config.eos_token_id
    eos = set(eos if isinstance(eos, list) else [eos])
    stop = next((n for n, t in enumerate(tokens) if t in eos), None)
    return tokens if stop is None else tokens[: stop + 1]


def _set_generation(model: Any, **values: Any) -> None:
    """Set generation defaults on the model and on any inner model that generates (BLIP-2 and
    InstructBLIP hand ``generate`` to their language model, which reads its own defaults)."""
    for module in model.modules():
        config = getattr(module, "generation_config", None)
        if config is not None:
            for key, value in values.items():
                setattr(config, key, value)


def _image_token(config: Any) -> int | None:
    for key in ("image_token_id", "image_token_index"):
        if getattr(config, key, None) is not None:
            return int(getattr(config, key))
    return None


@pytest.mark.usefixtures("video_stand_ins")
@pytest.mark.parametrize("family", FAMILIES, ids=[f.slug for f in FAMILIES])
def test_batch_of_four_answers_as_one_by_one(
    family: Family,
    checkpoints: dict[str, Path],
    demo_images: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Greedy tokens identical, first-token logits within BATCH_LOGIT_ATOL, pads on the side
    that keeps positions, ``meta`` equal to the tokens generated."""
    directory, requests = checkpoints[family.slug], _requests(demo_images)
    together_backend = _backend(directory, family, batch_size=4)
    alone_backend = _backend(directory, family, batch_size=1)
    together_spy = _spy(together_backend, monkeypatch)
    alone_spy = _spy(alone_backend, monkeypatch)
    together = together_backend.generate(requests)
    alone = alone_backend.generate(requests)
    assert together_spy.batches == [4] and alone_spy.batches == [1, 1, 1, 1]
    model = together_backend._model
    assert hf_module.is_encoder_decoder(model.config) is family.encoder_decoder
    assert together_backend._format == ("plain" if family.plain else "chat"), "auto format"

    masks = [row["mask"] for row in together_spy.rows]
    assert not all(bool(m.all()) for m in masks), "prompts of different lengths must pad"
    kept = 0 if family.encoder_decoder else -1  # right pads keep the start, left pads the end
    assert together_backend.padding_side == ("right" if family.encoder_decoder else "left")
    assert all(bool(m[kept]) for m in masks)
    image_token = _image_token(model.config)
    if image_token is not None:
        assert all(int((r["input_ids"] == image_token).sum()) > 0 for r in together_spy.rows)

    worst = 0.0
    for n, (batched, single) in enumerate(zip(together_spy.rows, alone_spy.rows, strict=True)):
        tokens = _answer(batched, model, family.encoder_decoder)
        assert tokens == _answer(single, model, family.encoder_decoder), requests[n].request_id
        worst = max(worst, float((batched["logits"] - single["logits"]).abs().max()))
        assert together[n].meta["new_tokens"] == len(tokens)
    assert worst <= hf_module.BATCH_LOGIT_ATOL, f"first-token logits differ by {worst:.2e}"
    assert [r.text for r in together] == [r.text for r in alone]
    assert [r.meta for r in together] == [r.meta for r in alone]


@pytest.mark.usefixtures("video_stand_ins")
@pytest.mark.parametrize("family", FAMILIES, ids=[f.slug for f in FAMILIES])
def test_meta_counts_generated_tokens_and_says_why_it_ended(
    family: Family,
    checkpoints: dict[str, Path],
    demo_images: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With eos held back until the limit every answer is cut by it (``length``, exactly MAX_NEW
    tokens: never the decoder start token, nor Florence-2's forced last eos counted as a stop);
    with a token the model emits made the eos, each answer stops there (``stop``, counted up to
    it); batch size 1 gives the same ``meta`` by the test above."""
    directory, requests = checkpoints[family.slug], _requests(demo_images)
    backend = _backend(directory, family, batch_size=4)
    model = backend._model
    eos = model.generation_config.eos_token_id
    _set_generation(model, min_new_tokens=MAX_NEW)
    cut = backend.generate(requests)
    assert [r.meta for r in cut] == [{"new_tokens": MAX_NEW, "finish_reason": "length"}] * 4

    _set_generation(model, min_new_tokens=None, suppress_tokens=[eos], forced_eos_token_id=None)
    spy = _spy(backend, monkeypatch)
    backend.generate(requests)
    answers = [_answer(row, model, family.encoder_decoder) for row in spy.rows]
    pad = backend.tokenizer.pad_token_id
    stop_token = next((t for t in answers[0][1:] if t != pad), answers[0][0])
    expected = [
        {"new_tokens": tokens.index(stop_token) + 1, "finish_reason": "stop"}
        if stop_token in tokens
        else {"new_tokens": MAX_NEW, "finish_reason": "length"}
        for tokens in answers
    ]
    _set_generation(model, eos_token_id=stop_token)
    assert [r.meta for r in backend.generate(requests)] == expected


def test_no_chat_template_outside_the_plain_families_names_the_key(
    checkpoints: dict[str, Path], tmp_path: Path
) -> None:
    """A LLaVA without its chat template: ``auto`` cannot guess where the image goes, so the
    backend says in one line which spec key to set, before any request is answered."""
    import json
    import shutil

    bare = tmp_path / "llava-without-template"
    shutil.copytree(checkpoints["llava-1-5"], bare)
    for name in ("chat_template.jinja", "chat_template.json"):
        (bare / name).unlink(missing_ok=True)
    for name in ("processor_config.json", "tokenizer_config.json"):
        if (bare / name).exists():
            config = json.loads((bare / name).read_text())
            config.pop("chat_template", None)
            (bare / name).write_text(json.dumps(config))
    backend = hf_module.from_spec(
        {"backend": "hf", "model": str(bare), "kind": "image-text-to-text"}
    )
    with pytest.raises(
        ValueError, match=r"\(llava\) has no chat template; set 'chat_template'"
    ) as err:
        backend._load()
    assert "\n" not in str(err.value)


NEEDING = [f for f in FAMILIES if f.needs]


@pytest.mark.parametrize("family", FAMILIES, ids=[f.slug for f in FAMILIES])
def test_the_backend_knows_each_familys_extra_packages(
    family: Family, checkpoints: dict[str, Path]
) -> None:
    """FAMILY_PACKAGES (the spec check's table) agrees with the families, and the vlm extra of
    pyproject.toml installs every package named there."""
    import json
    import tomllib

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pinned = [re.split(r"[=<>]", r)[0] for r in extra["optional-dependencies"]["vlm"]]
    assert sorted(pinned) == sorted(hf_module.VLM_EXTRA)
    assert set(family.needs) <= set(pinned)

    config = json.loads((checkpoints[family.slug] / "config.json").read_text())
    assert hf_module.FAMILY_PACKAGES.get(config["model_type"], ()) == family.needs


@pytest.mark.parametrize("family", NEEDING, ids=[f.slug for f in NEEDING])
def test_a_missing_package_stops_before_any_job_naming_the_install_command(
    family: Family, checkpoints: dict[str, Path]
) -> None:
    """Without the stand-ins, a family whose package is missing here fails params validation
    (the spec check) and, at load, names the family, the package and ``make install-vlm``,
    in one line, from the ImportError transformers raises."""
    import importlib.util

    missing = [p for p in family.needs if importlib.util.find_spec(p) is None]
    if not missing:
        pytest.skip(f"{', '.join(family.needs)} installed here")
    spec = {"backend": "hf", "model": str(checkpoints[family.slug]), "kind": "image-text-to-text"}
    with pytest.raises(
        ValueError, match=rf"^models\.m: hf backend: .* needs the package {missing[0]}"
    ):
        hf_module.check_spec(spec, "m")
    with pytest.raises(RuntimeError) as err:
        hf_module.from_spec(spec)._load()
    message = str(err.value)
    assert "\n" not in message and hf_module.INSTALL_VLM in message
    assert re.search(rf"needs the package ({'|'.join(missing)}),", message), message


def test_docs_show_the_family_table_of_these_tests() -> None:
    """docs/models.md lists exactly the families tested here (regenerate it with
    ``python tests/tiny_models.py``)."""
    docs = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    assert family_table() in docs, "docs/models.md is stale: run python tests/tiny_models.py"


def test_an_import_error_of_the_weights_load_names_the_package(
    checkpoints: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A modeling file that imports an optional package (as remote-code models do) fails the
    load in the same one line; the message is read from the ImportError transformers raises."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise ImportError("TinyVisionModel requires the Timm library but it was not found.")

    monkeypatch.setattr(transformers.AutoModelForImageTextToText, "from_pretrained", refuse)
    spec = {"backend": "hf", "model": str(checkpoints["llava-1-5"]), "kind": "image-text-to-text"}
    with pytest.raises(
        RuntimeError, match=r"\(llava\) needs the package timm, .*`pip install timm`"
    ):
        hf_module.from_spec(spec)._load()
