"""Security: safe loaders only, and the API key goes nowhere but the configured server's header.

Static checks read the code of ``src/``, ``scripts/``, the Snakefile and ``rules/`` (Python through
its syntax tree, so strings and docstrings never count; Snakemake files by regular expression).
The API-key checks run the ``openai`` backend against a small local HTTP server in a thread with a
distinctive dummy key, write a throw-away ``results/`` tree and logs, and grep every byte of it.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import logging
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from halluscope.benchmarks.caos.captions.generate import GenerateSettings
from halluscope.io import write_jsonl
from halluscope.models import Request, ResponseCache, make_backend, user_message
from halluscope.models.generate import generate_captions
from halluscope.models.openai_backend import OpenAIBackendError
from halluscope.stages.llm import LLMSettings

ROOT = Path(__file__).resolve().parents[1]
KEY_ENV = "HALLUSCOPE_TEST_KEY"
DUMMY_KEY = "sk-halluscope-DUMMY-3f9c1e5b2d4680a7-must-never-be-stored"
MODEL = "gpt-test"
CAPTION = "A dog sits next to a chair."
GENERATION = {"max_new_tokens": 16, "temperature": 0.0, "seed": 0}

# ------------------------------------------------------------------------------------------------
# Static checks: YAML, NumPy and pickle


def _python_sources() -> list[Path]:
    files = sorted((ROOT / "src").rglob("*.py")) + sorted((ROOT / "scripts").rglob("*.py"))
    assert len(files) > 20, "the scan found too few files: wrong root?"
    return files


def _snakemake_sources() -> list[Path]:
    return [ROOT / "Snakefile", *sorted((ROOT / "rules").glob("*.smk"))]


def _label(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> dotted origin for every import of the module (``np`` -> ``numpy``)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    names[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str:
    """``np.load`` -> ``numpy.load`` (through the imports); ``""`` for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


@dataclass
class _Use:
    where: str
    name: str
    node: ast.AST


def _uses(files: list[Path]) -> Iterator[_Use]:
    """Every call and name/attribute reference of ``files``, with its dotted origin."""
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        aliases = _aliases(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Call, ast.Attribute, ast.Name)):
                target = node.func if isinstance(node, ast.Call) else node
                name = _dotted(target, aliases)
                if name:
                    yield _Use(f"{_label(path)}:{node.lineno}", name, node)


def _imports(files: list[Path]) -> Iterator[tuple[str, str]]:
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield f"{_label(path)}:{node.lineno}", alias.name
            elif isinstance(node, ast.ImportFrom) and node.module:
                yield f"{_label(path)}:{node.lineno}", node.module


def _grep(files: list[Path], pattern: str, unless: str | None = None) -> list[str]:
    """Lines of (Snakemake) files matching ``pattern`` and not containing ``unless``."""
    found = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if re.search(pattern, line) and (unless is None or unless not in line):
                found.append(f"{_label(path)}:{number}: {line.strip()}")
    return found


def _keyword(call: ast.Call, name: str) -> Any:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value.value if isinstance(keyword.value, ast.Constant) else keyword.value
    return None


_UNSAFE_YAML_CALLS = {"load", "load_all", "full_load", "full_load_all", "unsafe_load"}
_UNSAFE_YAML_CALLS |= {"unsafe_load_all"}
_UNSAFE_YAML_LOADERS = {"Loader", "FullLoader", "UnsafeLoader", "CLoader", "CFullLoader"}
_UNSAFE_YAML_LOADERS |= {"CUnsafeLoader"}


def _yaml_problems(python: list[Path], snakemake: list[Path]) -> tuple[list[str], int]:
    """(unsafe YAML loads, number of safe_load calls)."""
    bad, safe = [], 0
    for use in _uses(python):
        module, _, attr = use.name.rpartition(".")
        if module != "yaml":
            continue
        if isinstance(use.node, ast.Call) and attr in ("safe_load", "safe_load_all"):
            safe += 1
        elif isinstance(use.node, ast.Call) and attr in _UNSAFE_YAML_CALLS:
            bad.append(f"{use.where}: yaml.{attr}(...) (use yaml.safe_load)")
        elif attr in _UNSAFE_YAML_LOADERS:
            bad.append(f"{use.where}: yaml.{attr} (an unsafe loader)")
    bad += _grep(snakemake, r"\byaml\.(load|load_all|full_load\w*|unsafe_load\w*)\(")
    return bad, safe


def _numpy_problems(python: list[Path], snakemake: list[Path]) -> tuple[list[str], int]:
    """(np.load calls without a literal allow_pickle=False, number of np.load calls)."""
    bad, seen = [], 0
    for use in _uses(python):
        if isinstance(use.node, ast.Call) and use.name in ("numpy.load", "numpy.lib.npyio.load"):
            seen += 1
            if _keyword(use.node, "allow_pickle") is not False:
                bad.append(f"{use.where}: np.load without allow_pickle=False")
    bad += _grep(snakemake, r"\b(np|numpy)\.load\(", unless="allow_pickle=False")
    return bad, seen


_PICKLE_MODULES = {"pickle", "_pickle", "cPickle", "dill", "cloudpickle", "joblib", "shelve"}
_PICKLE_MODULES |= {"marshal"}
_PICKLE_CALLS = {
    "pandas.read_pickle",
    "gensim.models.KeyedVectors.load",  # gensim's native format is a pickle
    "gensim.models.Word2Vec.load",
    "gensim.models.keyedvectors.KeyedVectors.load",
}


def _pickle_problems(python: list[Path], snakemake: list[Path]) -> list[str]:
    """Imports of pickle-like modules and calls that unpickle."""
    bad = [
        f"{where}: imports {module}"
        for where, module in _imports(python)
        if module.split(".")[0] in _PICKLE_MODULES
    ]
    for use in _uses(python):
        if not isinstance(use.node, ast.Call):
            continue
        if use.name in _PICKLE_CALLS or use.name.split(".")[0] in _PICKLE_MODULES:
            bad.append(f"{use.where}: {use.name}(...)")
        elif use.name == "torch.load" and _keyword(use.node, "weights_only") is not True:
            bad.append(f"{use.where}: torch.load without weights_only=True")
    bad += _grep(snakemake, r"\b(pickle|joblib|dill|cloudpickle)\.load|read_pickle\(")
    return bad


def test_yaml_is_only_loaded_with_safe_load() -> None:
    """Guards against YAML loaders that build arbitrary Python objects (yaml.load, FullLoader)."""
    bad, safe = _yaml_problems(_python_sources(), _snakemake_sources())
    assert not bad, "unsafe YAML loading:\n" + "\n".join(bad)
    assert safe >= 2, "the scan should see the yaml.safe_load calls of config.py and data/demo.py"


def test_numpy_load_never_allows_pickle() -> None:
    """Guards against np.load unpickling objects: every call passes allow_pickle=False literally."""
    bad, seen = _numpy_problems(_python_sources(), _snakemake_sources())
    assert not bad, "np.load that may unpickle:\n" + "\n".join(bad)
    assert seen >= 2, "the scan should see the np.load calls of embeddings.py"


def test_no_pickle_is_loaded() -> None:
    """Guards against unpickling files (pickle/joblib/dill, pandas.read_pickle, gensim .load)."""
    bad = _pickle_problems(_python_sources(), _snakemake_sources())
    assert not bad, "pickle loading:\n" + "\n".join(bad)


_BAD_MODULE = """\
import pickle
import numpy as np
import yaml
from gensim.models import KeyedVectors
from yaml import load as yload

TEXT = "yaml.load(x) and np.load(y) in a string are not code"
a = yaml.load(open("a.yaml"), Loader=yaml.FullLoader)
b = yload("b: 1")
c = np.load("c.npy")
d = np.load("d.npy", allow_pickle=True)
e = pickle.load(open("e.pkl", "rb"))
f = KeyedVectors.load("f.kv")
ok = yaml.safe_load("g: 1"), np.load("h.npy", allow_pickle=False)
"""


def _where(problems: list[str]) -> list[str]:
    """``file:line`` of each problem, sorted by file then line number."""
    pairs = [p.split(":")[:2] for p in problems]
    return [f"{f}:{n}" for f, n in sorted(pairs, key=lambda fn: (fn[0], int(fn[1])))]


def test_static_scanners_catch_what_they_look_for(tmp_path: Path) -> None:
    """Guards the static checks themselves: each unsafe load of a sample module is flagged."""
    module = tmp_path / "bad_module.py"
    module.write_text(_BAD_MODULE, encoding="utf-8")
    rules = tmp_path / "bad.smk"
    rules.write_text("x = yaml.load(f)\ny = np.load(p)\nz = np.load(p, allow_pickle=False)\n")
    yaml_bad, safe = _yaml_problems([module], [rules])
    assert _where(yaml_bad) == [
        "bad.smk:1",
        "bad_module.py:8",
        "bad_module.py:8",
        "bad_module.py:9",
    ]
    assert safe == 1
    numpy_bad, seen = _numpy_problems([module], [rules])
    assert _where(numpy_bad) == ["bad.smk:2", "bad_module.py:10", "bad_module.py:11"]
    assert seen == 3
    pickle_bad = _pickle_problems([module], [rules])
    assert _where(pickle_bad) == ["bad_module.py:1", "bad_module.py:12", "bad_module.py:13"]


# ------------------------------------------------------------------------------------------------
# A local OpenAI-compatible server that records everything it receives


@dataclass
class _Seen:
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes


def _completion(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 7, "total_tokens": 10},
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server  # type: ignore[assignment]

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        self._answer()

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        self._answer()

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        with self.server.lock:
            self.server.seen.append(_Seen(self.command, self.path, self.headers.items(), body))
        status, headers, payload = self.server.reply
        data = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    """Answers every request with ``reply`` = (status, headers, JSON body); records requests."""

    daemon_threads = True

    def __init__(self, reply: tuple[int, dict[str, str], Any] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reply = reply or (200, {}, _completion(CAPTION))
        self.seen: list[_Seen] = []
        self.lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> _Server:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)


def _spec(base_url: str, **extra: Any) -> dict[str, Any]:
    return {
        "backend": "openai",
        "model": MODEL,
        "base_url": base_url,
        "api_key_env": KEY_ENV,
        "max_retries": 0,
        "timeout": 10,
        **extra,
    }


def _chat(request_id: str) -> Request:
    return Request(
        request_id=request_id, messages=(user_message("Say hi."),), params=GENERATION, task="chat"
    )


def _demo_items(project: Path) -> list[dict[str, Any]]:
    """Three tiny PNGs under ``results/data/demo/images`` and their ``items.jsonl``."""
    items = []
    for index, (image_id, colour) in enumerate(
        [("red", (200, 10, 10)), ("green", (10, 200, 10)), ("blue", (10, 10, 200))]
    ):
        relative = f"results/data/demo/images/{image_id}.png"
        buffer = io.BytesIO()
        Image.new("RGB", (4, 3 + index), colour).save(buffer, format="PNG")
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_bytes(buffer.getvalue())
        items.append(
            {
                "image_id": image_id,
                "image": relative,
                "image_sha256": hashlib.sha256(buffer.getvalue()).hexdigest(),
                "gt_objects": ["dog"],
                "other_objects": [],
                "relations": [],
                "caption": "",
                "source": {"dataset": "test"},
            }
        )
    write_jsonl(project / "results/data/demo/items.jsonl", items)
    return items


def _files_holding_the_key(tree: Path) -> list[str]:
    """Every file under ``tree`` whose bytes contain the dummy key (raw, or JSON-escaped)."""
    needles = {DUMMY_KEY.encode(), json.dumps(DUMMY_KEY).encode()[1:-1]}
    found = []
    for path in sorted(tree.rglob("*")):
        if path.is_file() and any(n in path.read_bytes() for n in needles):
            found.append(str(path.relative_to(tree)))
    return found


def _assert_key_only_in_authorization(seen: list[_Seen]) -> None:
    for request in seen:
        authorization = [v for k, v in request.headers if k.lower() == "authorization"]
        assert authorization == [f"Bearer {DUMMY_KEY}"], request.headers
        others = [(k, v) for k, v in request.headers if k.lower() != "authorization"]
        assert DUMMY_KEY not in repr(others)
        assert DUMMY_KEY.encode() not in request.body
        assert DUMMY_KEY not in request.path


# ------------------------------------------------------------------------------------------------
# The API key


def test_api_key_is_never_written_to_cache_responses_or_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Guards the key: after a live run and a cached rerun, no file in results/ or logs/ has it."""
    monkeypatch.setenv(KEY_ENV, DUMMY_KEY)
    project = tmp_path / "project"
    items = _demo_items(project)
    monkeypatch.chdir(project)  # item image paths are relative to the project root
    log_path = project / "logs" / "generate" / "demo" / MODEL / "i01.log"
    log_path.parent.mkdir(parents=True)
    handler = logging.FileHandler(log_path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root_logger = logging.getLogger()
    old_level = root_logger.level
    root_logger.addHandler(handler)
    root_logger.setLevel(logging.DEBUG)  # the openai and HTTP client libraries log at DEBUG
    try:
        with _Server() as server:
            backend = make_backend(_spec(f"{server.origin}/v1"), model_name=MODEL)
            out = project / "results" / "responses" / "demo" / MODEL / "i01.jsonl"
            runs = []
            for _ in range(2):  # live, then served from the cache
                cache = ResponseCache(project / "results" / "cache" / "responses")
                runs.append(
                    generate_captions(
                        backend=backend,
                        cache=cache,
                        items=items,
                        instruction_id="i01",
                        instruction="Describe the image.",
                        model_name=MODEL,
                        gen_params=GENERATION,
                        out_path=out,
                        template_version="v1",
                        batch_size=2,
                    )
                )
            backend.close()
    finally:
        root_logger.removeHandler(handler)
        root_logger.setLevel(old_level)
        handler.close()
    captured = capsys.readouterr()
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(captured.out + captured.err)
        log.write(f"{runs!r} {backend!r} {json.dumps(backend.identity)}\n")

    assert runs[0]["misses"] == 3 and runs[1] == {**runs[0], "hits": 3, "misses": 0}
    assert [json.loads(line)["text"] for line in out.read_text().splitlines()] == [CAPTION] * 3
    assert len(list((project / "results" / "cache").rglob("*.json"))) == 3
    assert log_path.stat().st_size > 0
    assert _files_holding_the_key(project) == []
    assert len(server.seen) == 3  # the rerun sent nothing
    _assert_key_only_in_authorization(server.seen)


def test_api_key_stays_out_of_stage_logs_even_with_debug_logging(tmp_path: Path) -> None:
    """Guards the key through the CLI stage with OPENAI_LOG=debug and stdout/stderr in logs/."""
    project = tmp_path / "project"
    _demo_items(project)
    env = {**os.environ, KEY_ENV: DUMMY_KEY, "OPENAI_LOG": "debug", "PYTHONUNBUFFERED": "1"}
    log_path = project / "logs" / "generate" / "demo" / MODEL / "i02.log"
    log_path.parent.mkdir(parents=True)
    with _Server() as server:
        argv = [
            sys.executable, "-m", "halluscope.cli", "stage", "generate",
            "--items", "results/data/demo/items.jsonl",
            "--settings", GenerateSettings(
                LLMSettings.from_generation(
                    MODEL, _spec(f"{server.origin}/v1"),
                    {**GENERATION, "batch_size": 2, "template_version": "v1", "cache_mode": "live"},
                ),
                "i02", "Describe the image in detail.",
            ).to_json(),
            "--cache", "results/cache/responses",
            "--out", f"results/responses/demo/{MODEL}/i02.jsonl",
        ]  # fmt: skip
        with open(log_path, "wb") as log:
            proc = subprocess.run(
                argv, cwd=project, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=120
            )
    log_text = log_path.read_text(encoding="utf-8", errors="replace")
    assert proc.returncode == 0, log_text
    assert (project / "results" / "responses" / "demo" / MODEL / "i02.jsonl").is_file()
    assert _files_holding_the_key(project) == []
    assert len(server.seen) == 3
    _assert_key_only_in_authorization(server.seen)


def test_rejected_key_error_does_not_echo_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards error paths: a 401 names the key's variable, never the key, and caches nothing."""
    monkeypatch.setenv(KEY_ENV, DUMMY_KEY)
    reply = (401, {}, {"error": {"message": "invalid api key", "type": "invalid_request_error"}})
    with _Server(reply) as server:
        backend = make_backend(_spec(f"{server.origin}/v1", max_retries=3))
        cache = ResponseCache(tmp_path / "results" / "cache")
        with pytest.raises(OpenAIBackendError) as caught:
            cache.resolve(backend, [_chat("k1")], "v1")
    message = str(caught.value)
    assert "HTTP 401" in message and f"${KEY_ENV}" in message
    assert DUMMY_KEY not in message and DUMMY_KEY not in repr(caught.value.args)
    assert len(server.seen) == 1  # 401 is not retried
    assert _files_holding_the_key(tmp_path) == []
    assert not list(tmp_path.rglob("*.json"))


def test_secret_looking_params_are_refused_by_the_cache(tmp_path: Path) -> None:
    """Guards the cache key payload: params named like secrets are refused, value not echoed."""
    request = Request(
        request_id="s", messages=(user_message("x"),), params={"api_key": DUMMY_KEY}, task="chat"
    )
    with _Server() as server:
        backend = make_backend(_spec(f"{server.origin}/v1"))
        with pytest.raises(ValueError, match="secret-looking key 'api_key'") as caught:
            ResponseCache(tmp_path / "cache").resolve(backend, [request], "v1")
    assert DUMMY_KEY not in str(caught.value)
    assert server.seen == [] and not (tmp_path / "cache").exists()


# ------------------------------------------------------------------------------------------------
# Requests go only to the configured base URL


def test_requests_go_only_to_the_base_url_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the destination: every request is a POST to <base_url>/chat/completions, no other."""
    monkeypatch.setenv(KEY_ENV, DUMMY_KEY)
    with _Server() as server:
        base_url = f"{server.origin}/gateway/tenant-7/v1"
        backend = make_backend(_spec(base_url, max_in_flight=2))
        answers = backend.generate([_chat(f"r{i}") for i in range(4)])
        backend.close()
    assert [a.text for a in answers] == [CAPTION] * 4
    assert [(s.method, s.path) for s in server.seen] == [
        ("POST", "/gateway/tenant-7/v1/chat/completions")
    ] * 4
    _assert_key_only_in_authorization(server.seen)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirect_to_another_host_is_not_followed(
    status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards the key against redirects: a 3xx to another host fails and the other host sees no
    request."""
    monkeypatch.setenv(KEY_ENV, DUMMY_KEY)
    with _Server() as elsewhere:
        port = elsewhere.server_address[1]
        target = f"http://localhost:{port}/v1/chat/completions"
        with _Server((status, {"Location": target}, {})) as server:
            backend = make_backend(_spec(f"{server.origin}/v1", max_retries=2))
            with pytest.raises(OpenAIBackendError, match="redirects are not followed") as caught:
                backend.generate([_chat("redirect")])
            backend.close()
    assert elsewhere.seen == []
    assert len(server.seen) == 1  # a redirect is not retried either
    assert f"HTTP {status}" in str(caught.value) and DUMMY_KEY not in str(caught.value)


def test_proxy_environment_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the destination against proxy variables: the request reaches base_url, not a proxy."""
    monkeypatch.setenv(KEY_ENV, DUMMY_KEY)
    with _Server() as proxy, _Server() as server:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
            monkeypatch.setenv(name, proxy.origin)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        backend = make_backend(_spec(f"{server.origin}/v1"))
        [answer] = backend.generate([_chat("proxied")])
        backend.close()
    assert answer.text == CAPTION
    assert proxy.seen == []
    assert len(server.seen) == 1
