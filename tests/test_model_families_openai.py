"""The family matrix's requests through the ``openai`` backend, checked against the schema of the
llama.cpp server (llama-cpp-python's own request model), not against a real multimodal server.

Why not a real one: serving images from llama.cpp needs the tiny LLaVA as a GGUF plus a projector,
made by llama.cpp's ``convert_hf_to_gguf.py`` (in the pinned llama-cpp-python sources). That
script cannot convert the test checkpoints with what the lock installs: it imports
``sentencepiece`` (not installed) before it looks for a tokenizer, and its other route accepts only
BPE tokenizers whose pre-tokenizer hash it knows, which a tokenizer trained here never has. So
the same requests the ``hf`` matrix answers (image as a data URL, the instruction, the
generation settings) are sent to a scripted endpoint and validated with the server's own
``CreateChatCompletionRequest``, which its ``/v1/chat/completions`` handler parses them with.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
from llama_server import CHAT_PATH, ScriptedServer

from halluscope.data.demo import encode_png, load_demo_image
from halluscope.models import Request, make_backend, user_message
from halluscope.models.hf import generation_settings

server_types = pytest.importorskip("llama_cpp.server.types")

IMAGES = ("astronaut", "chelsea", "coffee", "rocket")
PROMPTS = (
    "describe the image",
    "provide a brief description of the given image",
    "is there a cat in the image answer yes or no",
    "describe the image using minimal words but maximum impact as a short textual summary",
)
PARAMS = {"seed": 0, "max_new_tokens": 5, "temperature": 0.0}


def test_the_matrix_requests_fit_the_llama_cpp_server_schema(tmp_path: Path) -> None:
    requests = []
    for name, prompt in zip(IMAGES, PROMPTS, strict=True):
        path = tmp_path / f"{name}.png"
        path.write_bytes(encode_png(load_demo_image(name)))
        requests.append(
            Request(
                request_id=f"family/{name}",
                image_id=name,
                image_path=str(path),
                image_sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
                messages=(user_message(prompt),),
                params=dict(PARAMS),
            )
        )
    with ScriptedServer() as server:
        spec = {"backend": "openai", "model": "tiny-llava", "base_url": server.base_url}
        make_backend({**spec, "api_key_env": "none"}).generate(requests)
    assert len(server.received) == len(requests)
    settings = generation_settings(PARAMS)
    bodies = sorted(server.received, key=lambda r: r.body["messages"][0]["content"][1]["text"])
    ordered = sorted(requests, key=lambda r: r.messages[0]["content"])
    for got, request in zip(bodies, ordered, strict=True):
        assert got.path == CHAT_PATH
        parsed = server_types.CreateChatCompletionRequest.model_validate(got.body)
        assert parsed.max_tokens == settings["max_new_tokens"]
        assert parsed.temperature == 0.0 and parsed.seed == settings["seed"]
        image, text = got.body["messages"][0]["content"]
        assert text == {"type": "text", "text": request.messages[0]["content"]}
        url = image["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
        data = base64.b64decode(url.split(",", 1)[1])
        assert hashlib.sha256(data).hexdigest() == request.image_sha256
