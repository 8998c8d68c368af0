"""Bad input: every error names the file, line, record or key and says what was expected.

Cases go through the public functions or the ``halluscope`` CLI (exit status 2 and one error line
on stderr, never a traceback). Three kinds of caption look odd but are *not* errors and must be
handled: an empty caption, a 100,000-character caption and a caption in another script.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import http.server
import json
import os
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from halluscope.benchmarks.caos.captions.embed import EmbedSettings
from halluscope.benchmarks.caos.captions.extract import build_extractor
from halluscope.config import ConfigError
from halluscope.config import load as load_params
from halluscope.data.demo import load_annotations
from halluscope.data.fetch import ChecksumError, DataError, MissingDataError, resolve
from halluscope.data.sources import Source
from halluscope.embeddings import load_embedder
from halluscope.io import InputError, read_jsonl
from halluscope.models import Request, ResponseCache, make_backend, user_message
from halluscope.models.hf import load_image
from halluscope.models.openai_backend import OpenAIBackendError
from halluscope.objects.parser import ObjectParser
from halluscope.stages.data import DataSettings, load_items

ROOT = Path(__file__).resolve().parents[1]


def extract_settings(synonyms: object = "builtin") -> str:
    """The ``--settings`` of an extract job of the rule+lexicon method."""
    from halluscope.benchmarks.caos.captions.extract import ExtractSettings

    return ExtractSettings("rule+lexicon", str(synonyms), "pattern", "builtin").to_json()


def generate_settings(spec: dict, generation: dict | None = None, cache_mode: str = "live") -> str:
    """The ``--settings`` of a generate job of model ``m``, instruction i01."""
    from halluscope.benchmarks.caos.captions.generate import GenerateSettings
    from halluscope.stages.llm import LLMSettings

    block = {**(generation or {}), "template_version": "v1", "cache_mode": cache_mode}
    llm = LLMSettings.from_generation("m", spec, block)
    return GenerateSettings(llm, "i01", "Describe.").to_json()


PARAMS = ROOT / "params.yaml"
SENTENCE = "A dog sits next to a red chair. "  # 32 characters

# ------------------------------------------------------------------------------------------------
# helpers


def run_cli(
    *args: Any, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``python -m halluscope.cli ARGS`` in ``cwd``; output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "halluscope.cli", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def cli_error(proc: subprocess.CompletedProcess, command: str) -> str:
    """The single error line of a failed command (exit 2, no traceback; progress bars allowed)."""
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    prefix = f"halluscope {command}: error: "
    lines = [line for line in proc.stderr.replace("\r", "\n").splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(prefix)]
    assert len(errors) == 1 and lines[-1] == errors[0], proc.stderr
    return errors[0]


def write_items(path: Path, *records: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def item(image_id: Any, image: Any = None, **extra: Any) -> dict[str, Any]:
    return {
        "image_id": image_id,
        "image": image,
        "image_sha256": None,
        "gt_objects": ["dog"],
        "other_objects": [],
        "relations": [],
        "caption": "",
        "source": {"dataset": "test"},
        **extra,
    }


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_header(width: int, height: int) -> bytes:
    """A tiny PNG that *claims* ``width`` x ``height`` grey pixels (PIL checks size on open)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    idat = zlib.compress(b"\0" * 64)
    return (
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")
    )


def params_file(tmp_path: Path, edit: Any) -> Path:
    """A copy of the committed params.yaml with ``edit(params)`` applied."""
    params = copy.deepcopy(yaml.safe_load(PARAMS.read_text(encoding="utf-8")))
    edit(params)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def file_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A local static HTTP server: (base URL, folder it serves)."""
    folder = tmp_path / "served"
    folder.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", folder
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)


def source_for(rel: str, url: str | None, data: bytes) -> Source:
    return Source(
        path=rel,
        url=url,
        size=len(data),
        md5=hashlib.md5(data).hexdigest(),
        sha256=hashlib.sha256(data).hexdigest(),
        origin="test",
    )


# ------------------------------------------------------------------------------------------------
# images


def test_missing_image_names_the_path(tmp_path: Path) -> None:
    """Guards image loading: a missing file names its path and request, says it does not exist."""
    path = tmp_path / "images" / "astronaut.png"
    with pytest.raises(FileNotFoundError) as caught:
        load_image(path, None, request_id="sim/i01/astronaut")
    message = str(caught.value)
    assert str(path) in message and "'sim/i01/astronaut'" in message
    assert "does not exist" in message


def test_missing_image_in_an_api_request_names_the_item(tmp_path: Path) -> None:
    """Guards the generate stage (openai backend): a missing image names path and image id."""
    items = write_items(
        tmp_path / "results/data/demo/items.jsonl",
        item("astronaut", "results/data/demo/images/missing-file.png", image_sha256="0" * 64),
    )
    spec = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    proc = run_cli(
        "stage", "generate", "--items", items,
        "--settings", generate_settings({**spec, "api_key_env": "none"}, {"seed": 0}),
        "--cache", "results/cache", "--out", "results/responses/r.jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    line = cli_error(proc, "stage generate")
    assert "results/data/demo/images/missing-file.png" in line
    assert "'astronaut'" in line and ("does not exist" in line or "not found" in line)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"\x89PNG\r\n\x1a\n" + b"garbage" * 20, id="png-magic-then-garbage"),
        pytest.param(png_header(8, 8)[:30], id="truncated-header"),
        pytest.param(b"not an image at all\n", id="text-file"),
    ],
)
def test_corrupt_image_names_the_path(tmp_path: Path, data: bytes) -> None:
    """Guards image loading: unreadable bytes name the path and say it is not a readable image."""
    path = tmp_path / "chelsea.png"
    path.write_bytes(data)
    with pytest.raises(ValueError) as caught:
        load_image(path, None, request_id="sim/i01/chelsea")
    message = str(caught.value)
    assert str(path) in message and "'sim/i01/chelsea'" in message
    assert "not a readable image" in message


@pytest.mark.parametrize(
    ("width", "height"),
    [
        pytest.param(40_000, 40_000, id="over-twice-the-limit"),
        pytest.param(
            10_000,
            9_000,
            id="between-limit-and-twice",
            marks=[
                pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning"),
            ],
        ),
    ],
)
def test_decompression_bomb_is_refused(tmp_path: Path, width: int, height: int) -> None:
    """Guards image loading: more pixels than Image.MAX_IMAGE_PIXELS is refused, naming the path."""
    from PIL import Image

    assert width * height > Image.MAX_IMAGE_PIXELS
    path = tmp_path / "bomb.png"
    path.write_bytes(png_header(width, height))
    with pytest.raises(ValueError) as caught:
        load_image(path, None, request_id="sim/i01/bomb")
    message = str(caught.value)
    assert str(path) in message and "decompression bomb" in message
    assert str(Image.MAX_IMAGE_PIXELS) in message


@pytest.mark.parametrize(
    "image",
    [
        "../../etc/passwd",
        "results/data/demo/images/../../../../etc/passwd",
        "images/../../secret.png",
    ],
)
def test_image_path_escaping_the_data_folder_is_refused(tmp_path: Path, image: str) -> None:
    """Guards items.jsonl: an image path with '..' is refused naming file, line and the path."""
    path = write_items(
        tmp_path / "items.jsonl", item("astronaut", "images/a.png"), item("x", image)
    )
    with pytest.raises(InputError) as caught:
        load_items(path)
    message = str(caught.value)
    assert f"{path}:2:" in message and repr(image) in message
    assert "escapes" in message and "expected a path without '..'" in message


def test_fetch_refuses_a_path_outside_the_registry(tmp_path: Path) -> None:
    """Guards raw-input resolution: '../../etc/passwd' is not a registered file and is refused."""
    with pytest.raises(DataError) as caught:
        resolve("../../etc/passwd", tmp_path / "mirror", tmp_path / "cache", allow_download=False)
    message = str(caught.value)
    assert "'../../etc/passwd'" in message and "not registered" in message


# ------------------------------------------------------------------------------------------------
# JSON / JSONL / YAML files


def test_malformed_json_line_names_file_and_line(tmp_path: Path) -> None:
    """Guards JSONL reading (CLI): a broken line gives file:line and 'one JSON object per line'."""
    responses = tmp_path / "responses.jsonl"
    responses.write_text('{"image_id": "a", "text": "a dog"}\n{"image_id": "b", "text": "a ca\n')
    proc = run_cli(
        "stage", "extract", "--responses", responses, "--settings", extract_settings(),
        "--out", tmp_path / "objects.jsonl", cwd=tmp_path,
    )  # fmt: skip
    line = cli_error(proc, "stage extract")
    assert f"{responses}:2:" in line and "malformed JSON" in line
    assert "expected one JSON object per line" in line
    assert not (tmp_path / "objects.jsonl").exists()


@pytest.mark.parametrize(
    ("cut", "expected"),
    [
        pytest.param(
            '{"image_id": 3, "caption": ',
            "the record starting on this line is cut short: Expecting ',' delimiter at the end of "
            "the file",
            id="value-cut",
        ),
        pytest.param(
            '{"image_id": 3, "caption": "A cat"',
            "the record starting on this line is cut short: Expecting ',' delimiter where line 4 "
            "starts the next record",
            id="brace-cut",
        ),
        pytest.param(
            '{"image_id": 3, "caption": "A ca',
            "Invalid control character at",
            id="string-cut",
        ),
    ],
)
def test_record_cut_short_names_its_own_line(tmp_path: Path, cut: str, expected: str) -> None:
    """Guards the JSON-records reader (``halluscope chair --captions``, ``pope --answers``): line 3
    of 4 cut short is line 3, never a line the decoder reached reading on (line 5 of 4)."""
    from halluscope.io import read_json_records

    path = tmp_path / "bad3.jsonl"
    path.write_text(
        '{"image_id": 1, "caption": "A dog."}\n{"image_id": 2, "caption": "A cat."}\n'
        f'{cut}\n{{"image_id": 4, "caption": "A bus."}}\n',
        encoding="utf-8",
    )
    assert len(path.read_text().splitlines()) == 4
    with pytest.raises(InputError) as caught:
        read_json_records(path)
    assert str(caught.value).startswith(f"{path}:3: malformed JSON ({expected}"), caught.value
    gt = tmp_path / "gt.json"
    gt.write_text('{"1": ["dog"], "2": ["cat"], "3": [], "4": ["bus"]}', encoding="utf-8")
    out = tmp_path / "chair.json"
    proc = run_cli("chair", "--captions", path, "--gt", gt, "--out", out, cwd=tmp_path)
    assert cli_error(proc, "chair").startswith(f"halluscope chair: error: {path}:3: malformed")
    assert not out.exists()


def test_error_inside_a_multi_line_record_names_both_lines(tmp_path: Path) -> None:
    """Guards the JSON-records reader: a pretty-printed record broken on its 4th line names that
    line and the one the record starts on."""
    from halluscope.io import read_json_records

    path = tmp_path / "captions.json"
    path.write_text('{"image_id": 1}\n{\n  "image_id": 2,\n  "caption": "x"\n  "y": 1\n}\n')
    with pytest.raises(InputError) as caught:
        read_json_records(path)
    assert str(caught.value) == (
        f"{path}:5: malformed JSON (Expecting ',' delimiter, in the record starting on line 2)"
    )


def test_jsonl_lines_end_at_line_feeds_only(tmp_path: Path) -> None:
    """Guards JSONL reading: a string holding U+2028 or U+0085 (written raw by write_jsonl) is
    one line, so what the pipeline writes reads back, and later lines keep their numbers."""
    from halluscope.io import iter_jsonl_numbered, write_jsonl

    path = tmp_path / "responses.jsonl"
    records = [{"text": "a\u2028b"}, {"text": "c\x85d\x0ce"}, {"text": "f"}]
    write_jsonl(path, records)
    assert list(iter_jsonl_numbered(path)) == list(enumerate(records, start=1))
    path.write_text(path.read_text(encoding="utf-8") + "[1]\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"^{path}:4: expected a JSON object, got list$"):
        read_jsonl(path)


def test_jsonl_line_that_is_not_an_object(tmp_path: Path) -> None:
    """Guards JSONL reading: a JSON line that is not an object names file:line and the type."""
    path = tmp_path / "items.jsonl"
    path.write_text('{"image_id": "a"}\n\n["b", "c"]\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_jsonl(path)
    assert str(caught.value) == f"{path}:3: expected a JSON object, got list"


def test_non_utf8_jsonl_names_file_and_line(tmp_path: Path) -> None:
    """Guards text decoding (CLI): Latin-1 bytes give file:line and 'expected a UTF-8 text file'."""
    responses = tmp_path / "responses.jsonl"
    responses.write_bytes(
        b'{"image_id": "a", "text": "ok"}\n{"image_id": "b", "text": "caf\xe9"}\n'
    )
    proc = run_cli(
        "stage", "extract", "--responses", responses, "--settings", extract_settings(),
        "--out", tmp_path / "objects.jsonl", cwd=tmp_path,
    )  # fmt: skip
    line = cli_error(proc, "stage extract")
    assert f"{responses}:2:" in line and "not valid UTF-8" in line
    assert "expected a UTF-8 text file" in line


def test_non_utf8_synonyms_of_the_extract_stage_name_file_and_line(tmp_path: Path) -> None:
    """Guards ``stage extract --synonyms`` (not only ``halluscope chair``): a Latin-1 synonyms
    file gives its file:line and byte offset, not the decoder's bare message."""
    responses = tmp_path / "responses.jsonl"
    responses.write_text('{"image_id": "a", "text": "a man"}\n', encoding="utf-8")
    synonyms = tmp_path / "synonyms.txt"
    synonyms.write_bytes(b"person, man\ncar, caf\xe9\n")
    proc = run_cli(
        "stage", "extract", "--responses", responses, "--settings", extract_settings(synonyms),
        "--out", tmp_path / "objects.jsonl", cwd=tmp_path,
    )  # fmt: skip
    line = cli_error(proc, "stage extract")
    assert f"{synonyms}:2: synonyms file is not valid UTF-8 (byte offset 20" in line, line
    assert not (tmp_path / "objects.jsonl").exists()


@pytest.mark.parametrize("which", ["annotations", "params"])
def test_non_utf8_yaml_names_the_file(tmp_path: Path, which: str) -> None:
    """Guards YAML inputs: a non-UTF-8 annotations.yaml / params.yaml names the file and UTF-8."""
    path = tmp_path / f"{which}.yaml"
    path.write_bytes(b"images:\n  - id: caf\xe9\n" if which == "annotations" else b"k: caf\xe9\n")
    loader = load_annotations if which == "annotations" else load_params
    with pytest.raises(ValueError) as caught:
        loader(path)
    message = str(caught.value)
    assert str(path) in message and "UTF-8" in message


def test_malformed_params_yaml_is_a_config_error(tmp_path: Path) -> None:
    """Guards params loading: broken YAML is a ConfigError naming file and line, on one line."""
    path = tmp_path / "params.yaml"
    path.write_text("caos: [1\n  k: 3\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_params(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:") and "malformed YAML" in message
    assert "\n" not in message


def test_duplicate_image_ids_in_items(tmp_path: Path) -> None:
    """Guards items.jsonl: a repeated image id names the file, the line and the id."""
    path = write_items(tmp_path / "items.jsonl", item("a"), item("b"), item("a"))
    with pytest.raises(InputError) as caught:
        load_items(path)
    assert str(caught.value).startswith(f"{path}:3: duplicate image id 'a'")


def test_duplicate_ids_in_demo_annotations(tmp_path: Path) -> None:
    """Guards annotations.yaml: a repeated id names both records and says ids must be unique."""
    record = {
        "id": "astronaut",
        "source": {"package": "scikit-image", "loader": "skimage.data.astronaut", "license": "CC0"},
        "caption": "An astronaut.",
        "coco": ["person"],
        "other": [],
        "relations": [],
    }
    path = tmp_path / "annotations.yaml"
    path.write_text(yaml.safe_dump({"images": [record, dict(record)]}), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_annotations(path)
    message = str(caught.value)
    assert f"{path}: record 1" in message and "duplicate id 'astronaut'" in message
    assert "record 0" in message and "expected unique ids" in message


@pytest.mark.parametrize("image_id", [None, "", 42])
def test_missing_or_non_string_image_id(tmp_path: Path, image_id: Any) -> None:
    """Guards items.jsonl: a missing, empty or numeric image_id names file:line and the type."""
    record = item(image_id)
    if image_id is None:
        del record["image_id"]
    path = write_items(tmp_path / "items.jsonl", item("a"), record)
    with pytest.raises(InputError) as caught:
        load_items(path)
    assert str(caught.value) == f"{path}:2: expected a non-empty string 'image_id'"


def test_response_without_text_names_file_and_line(tmp_path: Path) -> None:
    """Guards the extract stage (CLI): a response with a non-string 'text' names file and line."""
    responses = tmp_path / "responses.jsonl"
    responses.write_text('{"image_id": "a", "text": "a dog"}\n{"image_id": "b", "text": null}\n')
    proc = run_cli(
        "stage", "extract", "--responses", responses, "--settings", extract_settings(),
        "--out", tmp_path / "objects.jsonl", cwd=tmp_path,
    )  # fmt: skip
    line = cli_error(proc, "stage extract")
    assert f"{responses}:2:" in line and "expected a string 'text' field" in line


def test_missing_input_file_names_it(tmp_path: Path) -> None:
    """Guards the CLI: an input file that does not exist is named, with 'file not found'."""
    proc = run_cli(
        "stage", "extract", "--responses", tmp_path / "nowhere.jsonl",
        "--settings", extract_settings(),
        "--out", tmp_path / "o.jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    line = cli_error(proc, "stage extract")
    assert f"{tmp_path / 'nowhere.jsonl'}: file not found" in line


def test_unreadable_cache_entry_names_the_file(tmp_path: Path) -> None:
    """Guards the response cache: a damaged entry names its file and says to delete it."""
    cache = ResponseCache(tmp_path / "cache")
    key = "ab" * 32
    cache.path(key).parent.mkdir(parents=True)
    cache.path(key).write_text('{"response": {"text": ', encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        cache.get(key)
    message = str(caught.value)
    assert str(cache.path(key)) in message and "unreadable cache entry" in message
    assert "delete it" in message


def test_duplicate_replay_records_name_both_lines(tmp_path: Path) -> None:
    """Guards replay recordings: two answers for one request name both lines."""
    path = tmp_path / "recording.jsonl"
    path.write_text(
        '{"image_id": 1, "prompt": "Describe.", "text": "a dog"}\n'
        '{"image_id": 2, "prompt": "Describe.", "text": "a cat"}\n'
        '{"image_id": "1", "prompt": "Describe.", "text": "a bus"}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        make_backend({"backend": "replay", "path": str(path)})
    message = str(caught.value)
    assert message.startswith(f"{path}:3: duplicate record for image '1'")
    assert "first at line 1" in message and "one answer per request" in message


# ------------------------------------------------------------------------------------------------
# captions that look odd but are valid


def extract_cli(tmp_path: Path, texts: list[str]) -> list[list[dict[str, Any]]]:
    """Run the extract stage CLI on ``texts``; return each response's object list."""
    responses = tmp_path / "responses.jsonl"
    responses.write_text(
        "".join(
            json.dumps({"image_id": f"im{i}", "text": t}, ensure_ascii=False) + "\n"
            for i, t in enumerate(texts)
        ),
        encoding="utf-8",
    )
    out = tmp_path / "objects.jsonl"
    proc = run_cli(
        "stage", "extract", "--responses", responses, "--settings", extract_settings(),
        "--out", out, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(out)
    assert [r["image_id"] for r in records] == [f"im{i}" for i in range(len(texts))]
    return [r["objects"] for r in records]


def test_empty_caption_is_not_an_error(tmp_path: Path) -> None:
    """Guards empty captions: NOT an error; zero mentions in extract and CHAIR, no crash."""
    assert extract_cli(tmp_path, ["", "   ", "\n"]) == [[], [], []]
    assert ObjectParser(None, variant="pattern").parse("") == []
    captions = tmp_path / "captions.jsonl"
    captions.write_text('{"image_id": "a", "caption": ""}\n', encoding="utf-8")
    gt = tmp_path / "gt.json"
    gt.write_text('{"a": ["dog"]}', encoding="utf-8")
    proc = run_cli(
        "chair", "--captions", captions, "--gt", gt, "--out", tmp_path / "chair.json", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    [result] = json.loads((tmp_path / "chair.json").read_text())["captions"]
    assert result["mentions"] == [] and result["CHAIRs"] == 0 and result["CHAIRi"] == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(SENTENCE * 3125, {"dog": 3125, "chair": 3125}, id="sentences"),
        pytest.param("dog " * 25_000, {"dog": 25_000}, id="one-word-repeated"),
        pytest.param("x" * 100_000, {}, id="one-token"),
        pytest.param("." * 100_000, {}, id="punctuation"),
        pytest.param("(" * 100_000, {}, id="brackets"),
        pytest.param("狗" * 100_000, {}, id="cjk"),
    ],
)  # fmt: skip
def test_100k_character_caption_is_parsed_quickly(text: str, expected: dict[str, int]) -> None:
    """Guards long captions: 100,000 characters are NOT an error; all mentions found, in < 3 s."""
    assert len(text) == 100_000
    extract = build_extractor("builtin", "pattern", "builtin")
    start = time.perf_counter()
    objects = extract(text)
    elapsed = time.perf_counter() - start
    counts: dict[str, int] = {}
    for obj in objects:
        counts[obj["name"]] = counts.get(obj["name"], 0) + 1
    assert counts == expected
    positions = [obj["position"] for obj in objects]
    assert positions == sorted(positions)
    assert elapsed < 3.0, f"{elapsed:.2f} s for 100,000 characters"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("一只狗坐在椅子上，旁边有一只猫。", [], id="chinese"),
        pytest.param("Собака сидит на стуле рядом с кошкой.", [], id="cyrillic"),
        pytest.param("كلب يجلس على كرسي بجانب قطة", [], id="arabic"),
        pytest.param("Ο σκύλος κάθεται σε μια καρέκλα.", [], id="greek"),
        pytest.param("A d\u043eg on a ch\u0430ir.", [], id="cyrillic-homoglyphs"),
        pytest.param("Ein Hund und a dog 和一只猫 on a chair.", ["dog", "chair"], id="mixed"),
    ],
)
def test_caption_in_another_script(tmp_path: Path, text: str, expected: list[str]) -> None:
    """Guards non-Latin captions: NOT an error; no false mentions, English words still found."""
    [objects] = extract_cli(tmp_path, [text])
    assert [o["name"] for o in objects] == expected
    assert all(o["surface"] in text for o in objects)


# ------------------------------------------------------------------------------------------------
# vectors


def test_object_without_vector_is_reported_not_zeroed(tmp_path: Path) -> None:
    """Guards CAOS: an object with no vector is NOT an error; it is listed in 'missing'."""
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("4 3\nperson 1 0 0\ncar 0 1 0\nchair 0 0 1\ndog 1 1 0\n", encoding="utf-8")
    objects = tmp_path / "objects.jsonl"
    objects.write_text(
        json.dumps(
            {
                "id": "c1",
                "gt": ["person"],
                "objects": [
                    {"name": "dog", "in_domain": True, "present": False},
                    {"name": "zorblax", "in_domain": False, "present": False},
                ],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "caos.json"
    proc = run_cli(
        "caos", "--objects", objects, "--vectors", vectors, "--frequent", "person,car,chair",
        "--k", 2, "--out", out, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [caption] = json.loads(out.read_text())["captions"]
    assert caption["missing"] == ["zorblax"]
    assert caption["CAOS_T"] == pytest.approx(2**-0.5)  # from dog alone, zorblax skipped


def test_nan_in_vector_file_names_file_and_word(tmp_path: Path) -> None:
    """Guards the embed stage: a GloVe file with NaN names the file, the word and 'finite'."""
    path = tmp_path / "glove.txt"
    path.write_text("person 1 0 0\ncar 0 1 0\ncat nan 1 1\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_embedder("glove", {"kind": "glove", "source": str(path)})
    assert str(caught.value) == f"{path}: vector of 'cat' contains NaN/inf; expected finite numbers"


def test_nan_in_vector_file_through_the_caos_command(tmp_path: Path) -> None:
    """Guards `halluscope caos`: a word2vec file with NaN names the file, the word and 'finite'."""
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("4 3\nperson 1 0 0\ncar 0 1 0\nchair 0 0 1\ncat nan 1 1\n")
    objects = tmp_path / "objects.jsonl"
    objects.write_text('{"id": "c", "gt": ["person"], "objects": []}\n', encoding="utf-8")
    proc = run_cli(
        "caos", "--objects", objects, "--vectors", vectors, "--frequent", "person,car,chair",
        "--k", 2, "--out", tmp_path / "o.json", cwd=tmp_path,
    )  # fmt: skip
    line = cli_error(proc, "caos")
    assert str(vectors) in line and "'cat'" in line and "finite" in line


# ------------------------------------------------------------------------------------------------
# params.yaml and ids


@pytest.mark.parametrize(
    ("key", "edit", "expected"),
    [
        pytest.param(
            "generate.models",
            lambda p: p["generate"]["models"].append("gpt-9"),
            "generate.models: unknown model id 'gpt-9'; valid ids: ",
            id="model",
        ),
        pytest.param(
            "oracle.members",
            lambda p: p["oracle"].update(method="ensemble", members=["sim-precise", "gpt-9"]),
            "oracle.members: unknown model id 'gpt-9'; valid ids: ",
            id="oracle-member",
        ),
        pytest.param(
            "embed.embedders",
            lambda p: p["embed"]["embedders"].append("bert"),
            "embed.embedders: unknown embedder id 'bert'; valid ids: ",
            id="embedder",
        ),
        pytest.param(
            "generate.instructions",
            lambda p: p["generate"]["instructions"].append("i99"),
            "generate.instructions: unknown instruction id 'i99'; valid ids: ",
            id="instruction",
        ),
        pytest.param(
            "tables.table1_instructions",
            lambda p: p["tables"]["table1_instructions"].append("i99"),
            "tables.table1_instructions: unknown instruction id 'i99'; valid ids: ",
            id="table1-instruction",
        ),
    ],
)
def test_unknown_id_names_key_and_valid_ids(
    tmp_path: Path, key: str, edit: Any, expected: str
) -> None:
    """Guards params.yaml cross-references: an unknown id names the file, key and valid ids."""
    path = params_file(tmp_path, edit)
    with pytest.raises(ConfigError) as caught:
        load_params(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and expected in message
    assert message.split("valid ids: ")[1]  # the valid ids are listed


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda p: p["caos"].update(k="three"), "key 'caos.k': 'three' is not of type 'integer'"),
        (lambda p: p["figures"].update(dpi="high"), "key 'figures.dpi': 'high' is not of type"),
        (lambda p: p["pope"].update(enabled="yes"), "key 'pope.enabled': 'yes' is not of type"),
        (lambda p: p["generate"].update(batch_size=0), "key 'generate.batch_size': 0 is less"),
        (lambda p: p["generate"].update(cache_mode="often"), "'often' is not one of ['live'"),
        (
            lambda p: p["caos"].update(kk=3),
            "unknown key 'caos.kk' (allowed here: enabled, frequent, k",
        ),
        (lambda p: p["caos"].update(k=11, k_max=10), "caos.k=11 exceeds caos.k_max=10"),
    ],
    ids=["int", "dpi", "bool", "minimum", "enum", "unknown-key", "k-above-k-max"],
)
def test_params_type_error_names_key_and_expectation(
    tmp_path: Path, edit: Any, expected: str
) -> None:
    """Guards params.yaml: a mistyped or unknown value names the file, the key and the rule."""
    path = params_file(tmp_path, edit)
    with pytest.raises(ConfigError) as caught:
        load_params(path)
    assert str(caught.value).startswith(f"{path}: ") and expected in str(caught.value)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("generate.temperature", float("nan")),
        ("figures.dpi", float("inf")),
        ("caos.k", float("-inf")),
    ],
)
def test_params_non_finite_number_names_the_key(tmp_path: Path, key: str, value: float) -> None:
    """Guards params.yaml: ``.nan`` / ``.inf`` pass every schema bound (NaN compares false), so
    they are refused first, naming the dotted key, by the Snakefile's validation and by
    ``halluscope check-params``."""
    section, name = key.split(".")
    path = params_file(tmp_path, lambda p: p[section].update({name: value}))
    assert str(yaml.safe_load(path.read_text(encoding="utf-8"))[section][name]) == str(value)
    expected = f"{path}: key '{key}': {value} is not a finite number; expected a finite number"
    with pytest.raises(ConfigError) as caught:
        load_params(path)
    assert str(caught.value) == expected and caught.value.key == key
    proc = run_cli("check-params", "--params", path, cwd=tmp_path)
    assert cli_error(proc, "check-params") == f"halluscope check-params: error: {expected}"


def test_unknown_backend_in_a_model_spec(tmp_path: Path) -> None:
    """Guards the generate stage (CLI): an unknown backend lists the valid backends."""
    items = write_items(tmp_path / "items.jsonl", item("a"))
    proc = run_cli(
        "stage", "generate", "--items", items, "--settings", generate_settings({"backend": "gpt"}),
        "--cache", tmp_path / "cache",
        "--out", tmp_path / "r.jsonl", cwd=tmp_path,
    )  # fmt: skip
    line = cli_error(proc, "stage generate")
    assert "unknown model backend 'gpt'" in line and "valid backends: " in line
    assert "sim" in line.split("valid backends: ")[1]


def test_unknown_cache_mode(tmp_path: Path) -> None:
    """Guards the generate stage (CLI): an unknown cache mode lists the valid modes."""
    items = write_items(tmp_path / "items.jsonl", item("a"))
    proc = run_cli(
        "stage", "generate", "--items", items,
        "--settings",
        generate_settings({"backend": "sim", "preset": "sim-precise"}, {}, "sometimes"),
        "--cache", tmp_path / "cache",
        "--out", tmp_path / "r.jsonl", cwd=tmp_path,
    )  # fmt: skip
    line = cli_error(proc, "stage generate")
    assert "unknown cache mode 'sometimes'; valid modes: live, record, replay" in line


def test_unknown_embedder_kind(tmp_path: Path) -> None:
    """Guards the embed stage (CLI): an unknown embedder kind names it and the valid kinds."""
    items = write_items(tmp_path / "items.jsonl", item("a"))
    proc = run_cli(
        "stage", "embed", "--settings", EmbedSettings("bert", {"kind": "bert", "source": "x"},
        ["dog"]).to_json(), "--items", items, "--out", tmp_path / "v.npz",
        "--missing", tmp_path / "m.json", cwd=tmp_path,
    )  # fmt: skip
    line = cli_error(proc, "stage embed")
    assert "embedder bert: unknown kind 'bert'" in line
    assert "valid kinds: glove, word2vec, sentence-transformers" in line


def test_unknown_dataset(tmp_path: Path) -> None:
    """Guards the data stage (CLI): an unknown dataset names data.dataset and the valid ones."""
    proc = run_cli(
        "stage", "data", "--settings", DataSettings("imagenet", Path("a.yaml")).to_json(),
        "--items", "i.jsonl",
        "--images", "images", cwd=tmp_path,
    )  # fmt: skip
    line = cli_error(proc, "stage data")
    assert "data.dataset: unknown dataset 'imagenet'; valid datasets: demo" in line


# ------------------------------------------------------------------------------------------------
# API key


def test_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the openai backend: an unset key variable is named before any request is sent."""
    monkeypatch.delenv("HALLUSCOPE_UNSET_KEY", raising=False)
    backend = make_backend(
        {
            "backend": "openai",
            "model": "m",
            "base_url": "http://127.0.0.1:9/v1",
            "api_key_env": "HALLUSCOPE_UNSET_KEY",
        }
    )
    request = Request(request_id="k", messages=(user_message("hi"),), task="chat")
    with pytest.raises(OpenAIBackendError) as caught:
        backend.generate([request])
    message = str(caught.value)
    assert "environment variable HALLUSCOPE_UNSET_KEY" in message and "is not set" in message
    assert backend.attempts == 0


def test_missing_api_key_through_the_cli(tmp_path: Path) -> None:
    """Guards the generate stage (CLI): an unset key variable is one error line with exit 2."""
    items = write_items(tmp_path / "items.jsonl", item("a"))
    spec = {
        "backend": "openai",
        "model": "m",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "HALLUSCOPE_UNSET_KEY",
    }
    env = {k: v for k, v in os.environ.items() if k != "HALLUSCOPE_UNSET_KEY"}
    proc = run_cli(
        "stage", "generate", "--items", items, "--settings", generate_settings(spec),
        "--cache", tmp_path / "cache",
        "--out", tmp_path / "r.jsonl", cwd=tmp_path, env=env,
    )  # fmt: skip
    line = cli_error(proc, "stage generate")
    assert "HALLUSCOPE_UNSET_KEY" in line and "is not set" in line


# ------------------------------------------------------------------------------------------------
# raw inputs: checksums and the mirror


def test_checksum_mismatch_on_a_downloaded_file(
    tmp_path: Path, file_server: tuple[str, Path], no_proxy: None
) -> None:
    """Guards downloads: other bytes than registered name URL, file and both checksums; no file."""
    base_url, folder = file_server
    expected = b"the recorded bytes\n"
    served = b"tampered bytes!!!!\n"
    assert len(served) == len(expected)
    (folder / "synonyms.txt").write_bytes(served)
    rel = "test/synonyms.txt"
    source = source_for(rel, f"{base_url}/synonyms.txt", expected)
    cache = tmp_path / "cache"
    with pytest.raises(ChecksumError) as caught:
        resolve(
            rel, None, cache, True, use_default_mirror=False, sources={rel: source},
            lock_path=tmp_path / "lock.json", progress=False, retries=0,
        )  # fmt: skip
    message = str(caught.value)
    assert f"downloaded from {base_url}/synonyms.txt" in message and rel in message
    assert f"sha256 {hashlib.sha256(expected).hexdigest()}" in message
    assert f"sha256 {hashlib.sha256(served).hexdigest()}" in message
    assert "expected" in message and "differ" in message
    assert not (cache / rel).exists()
    assert not (cache / (rel + ".part")).exists()  # a bad prefix is never resumed


def test_missing_mirror_names_the_file_and_where_to_put_it(tmp_path: Path) -> None:
    """Guards raw inputs without mirror or network: the error names file, URL and destination."""
    mirror = tmp_path / "no-such-mirror"
    cache = tmp_path / "cache"
    with pytest.raises(MissingDataError) as caught:
        resolve("chair/synonyms.txt", mirror, cache, allow_download=False)
    message = str(caught.value)
    assert "chair/synonyms.txt" in message and "get it at: https://" in message
    assert f"put it at: {mirror / 'chair/synonyms.txt'}" in message
    assert str(cache / "chair/synonyms.txt") in message
    proc = run_cli(
        "fetch", "--mirror", mirror, "--cache", cache, "--no-download", "--quiet",
        "chair/synonyms.txt", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("halluscope fetch: error: 1 data file is missing")
    assert str(mirror / "chair/synonyms.txt") in proc.stderr


def test_settings_json_with_unknown_or_missing_keys_names_them() -> None:
    """A stage's settings JSON (a rule's params, or typed by hand) with a wrong key is an
    InputError naming the flag, the unknown and missing keys and the expected ones."""
    from halluscope.benchmarks.nope.stages import NopeGeneratorSettings
    from halluscope.benchmarks.trihe.stages import JudgeSettings
    from halluscope.io import InputError

    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    good = json.loads(JudgeSettings.from_config(params).to_json())
    assert JudgeSettings.from_json(json.dumps(good)).judges == params["trihe"]["judges"]
    with pytest.raises(InputError, match=r"--settings: unknown key\(s\) \['bogus'\], missing"):
        JudgeSettings.from_json(json.dumps({**good, "bogus": 1}))
    generator = json.loads(NopeGeneratorSettings.from_config(params).to_json())
    settings = NopeGeneratorSettings.from_json(json.dumps(generator))
    assert settings.llm.model_id == params["nope"]["llm"]["model"]
    broken = {k: v for k, v in generator.items() if k != "relevances"}
    with pytest.raises(InputError, match=r"missing key\(s\) \['relevances'\]"):
        NopeGeneratorSettings.from_json(json.dumps(broken))
    llm = {k: v for k, v in generator["llm"].items() if k != "spec"}
    with pytest.raises(InputError, match=r"--settings: llm: unknown key\(s\) \[\], missing"):
        NopeGeneratorSettings.from_json(json.dumps({**generator, "llm": llm}))
    with pytest.raises(InputError, match=r"--settings: not JSON"):
        NopeGeneratorSettings.from_json("{")
