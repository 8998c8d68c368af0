"""Data acquisition: mirror, cache, resumable verified downloads, trust-on-first-use lock.

Downloads run against a local ``http.server`` (with HTTP Range support written here), never the
real hosts, so the tests are offline and exercise resume and failure paths deterministically.
"""

from __future__ import annotations

import dataclasses
import hashlib
import http.server
import json
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from halluscope.cli import main
from halluscope.data.fetch import (
    ChecksumError,
    DataError,
    MissingDataError,
    UnreachableError,
    digest_file,
    resolve,
    resolve_many,
)
from halluscope.data.sources import COCO_ANNOTATIONS_ZIP, SOURCES, Source

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
PAYLOAD = bytes(range(256)) * 40  # 10,240 bytes


# ------------------------------------------------------------------------------ test server


@dataclass
class FileServer:
    """A threaded HTTP server over in-memory files, with Range support and fault injection."""

    files: dict[str, bytes]
    base_url: str = ""
    requests: list[dict[str, str | None]] = field(default_factory=list)
    drop_after: int | None = None  # first GET sends only this many body bytes, then hangs up
    ignore_range: bool = False  # answer 200 with the whole file even to a Range request

    def url(self, name: str) -> str:
        return f"{self.base_url}/{name}"


def _handler(state: FileServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep pytest output clean
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server naming)
            range_header = self.headers.get("Range")
            state.requests.append({"path": self.path, "range": range_header})
            data = state.files.get(self.path.lstrip("/"))
            if data is None:
                self.send_error(404)
                return
            start = 0
            match = re.fullmatch(r"bytes=(\d+)-", range_header or "")
            if match and not state.ignore_range:
                start = int(match.group(1))
                if start >= len(data):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(data)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                self.send_response(200)
            body = data[start:]
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            if state.drop_after is not None:
                self.wfile.write(body[: state.drop_after])
                state.drop_after = None
                self.close_connection = True
                return
            self.wfile.write(body)

    return Handler


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FileServer]:
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    state = FileServer(files={})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def make_source(rel: str, url: str | None, data: bytes | None, **changes: object) -> Source:
    """A registry entry for ``data`` (``data=None``: trust on first use)."""
    fields: dict[str, object] = {
        "path": rel,
        "url": url,
        "size": None if data is None else len(data),
        "md5": None if data is None else hashlib.md5(data).hexdigest(),
        "sha256": None if data is None else hashlib.sha256(data).hexdigest(),
        "origin": "test",
    }
    fields.update(changes)
    return Source(**fields)  # type: ignore[arg-type]


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    return {
        "mirror": tmp_path / "mirror",
        "cache": tmp_path / "cache",
        "lock": tmp_path / "data" / "checksums.lock.json",
    }


def fetch(rel: str, sources: dict[str, Source], dirs: dict[str, Path], **kw: object) -> Path:
    options: dict[str, object] = {
        "lock_path": dirs["lock"],
        "sources": sources,
        "progress": False,
        "backoff": 0.0,
    }
    options.update(kw)
    allow = bool(options.pop("allow_download", True))
    return resolve(rel, dirs["mirror"], dirs["cache"], allow, **options)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ downloads


def test_download_verifies_and_renames(server: FileServer, dirs: dict[str, Path]) -> None:
    server.files["a.bin"] = PAYLOAD
    sources = {"x/a.bin": make_source("x/a.bin", server.url("a.bin"), PAYLOAD)}
    path = fetch("x/a.bin", sources, dirs)
    assert path == dirs["cache"] / "x" / "a.bin"
    assert path.read_bytes() == PAYLOAD
    assert not (dirs["cache"] / "x" / "a.bin.part").exists()
    assert len(server.requests) == 1 and server.requests[0]["range"] is None
    # second use: from the cache, verified, no network
    assert fetch("x/a.bin", sources, dirs) == path
    assert len(server.requests) == 1


def test_resume_from_partial_file(server: FileServer, dirs: dict[str, Path]) -> None:
    server.files["a.bin"] = PAYLOAD
    part = dirs["cache"] / "x" / "a.bin.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(PAYLOAD[:4000])
    sources = {"x/a.bin": make_source("x/a.bin", server.url("a.bin"), PAYLOAD)}
    path = fetch("x/a.bin", sources, dirs)
    assert path.read_bytes() == PAYLOAD
    assert server.requests == [{"path": "/a.bin", "range": "bytes=4000-"}]
    assert not part.exists()


def test_interrupted_transfer_is_resumed(server: FileServer, dirs: dict[str, Path]) -> None:
    server.files["a.bin"] = PAYLOAD
    server.drop_after = 3000
    sources = {"x/a.bin": make_source("x/a.bin", server.url("a.bin"), PAYLOAD)}
    path = fetch("x/a.bin", sources, dirs, retries=2)
    assert path.read_bytes() == PAYLOAD
    assert [r["range"] for r in server.requests] == [None, "bytes=3000-"]


def test_complete_part_file_is_not_downloaded_again(
    server: FileServer, dirs: dict[str, Path]
) -> None:
    server.files["a.bin"] = PAYLOAD
    part = dirs["cache"] / "x" / "a.bin.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(PAYLOAD)
    tofu = make_source("x/a.bin", server.url("a.bin"), None)  # size unknown: server says 416
    assert fetch("x/a.bin", {"x/a.bin": tofu}, dirs).read_bytes() == PAYLOAD
    assert server.requests == [{"path": "/a.bin", "range": f"bytes={len(PAYLOAD)}-"}]


def test_overlong_part_file_restarts(server: FileServer, dirs: dict[str, Path]) -> None:
    server.files["a.bin"] = PAYLOAD
    part = dirs["cache"] / "x" / "a.bin.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(PAYLOAD + b"junk")
    tofu = make_source("x/a.bin", server.url("a.bin"), None)  # nothing to compare against
    assert fetch("x/a.bin", {"x/a.bin": tofu}, dirs).read_bytes() == PAYLOAD
    assert [r["range"] for r in server.requests] == [f"bytes={len(PAYLOAD) + 4}-", None]
    locked = json.loads(dirs["lock"].read_text())["files"]["x/a.bin"]
    assert locked["sha256"] == hashlib.sha256(PAYLOAD).hexdigest()


def test_server_ignoring_range_restarts(server: FileServer, dirs: dict[str, Path]) -> None:
    server.files["a.bin"] = PAYLOAD
    server.ignore_range = True
    part = dirs["cache"] / "x" / "a.bin.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(PAYLOAD[:100])
    sources = {"x/a.bin": make_source("x/a.bin", server.url("a.bin"), PAYLOAD)}
    assert fetch("x/a.bin", sources, dirs).read_bytes() == PAYLOAD


def test_checksum_mismatch_is_refused(server: FileServer, dirs: dict[str, Path]) -> None:
    server.files["a.bin"] = PAYLOAD[:-1] + b"X"  # same size, other bytes
    source = make_source("x/a.bin", server.url("a.bin"), PAYLOAD)
    actual_md5 = hashlib.md5(server.files["a.bin"]).hexdigest()
    with pytest.raises(ChecksumError) as info:
        fetch("x/a.bin", {"x/a.bin": source}, dirs)
    message = str(info.value)
    assert "x/a.bin" in message and source.md5 in message and actual_md5 in message
    assert source.url in message
    assert not (dirs["cache"] / "x" / "a.bin").exists()
    assert not (dirs["cache"] / "x" / "a.bin.part").exists()  # a bad prefix is not resumed


def test_corrupt_mirror_file_is_refused_without_fallback(
    server: FileServer, dirs: dict[str, Path]
) -> None:
    server.files["a.bin"] = PAYLOAD
    bad = dirs["mirror"] / "x" / "a.bin"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"truncated")
    source = make_source("x/a.bin", server.url("a.bin"), PAYLOAD)
    with pytest.raises(ChecksumError) as info:
        fetch("x/a.bin", {"x/a.bin": source}, dirs)
    message = str(info.value)
    assert str(bad) in message and source.md5 in message
    assert hashlib.md5(b"truncated").hexdigest() in message
    assert server.requests == []


def test_http_error_is_reported(server: FileServer, dirs: dict[str, Path]) -> None:
    sources = {"x/a.bin": make_source("x/a.bin", server.url("gone.bin"), PAYLOAD)}
    with pytest.raises(DataError, match=r"gone\.bin failed: HTTP 404"):
        fetch("x/a.bin", sources, dirs)


# ------------------------------------------------------------------------------ mirror, missing


def test_mirror_is_used_without_network(
    server: FileServer, dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    server.files["a.bin"] = PAYLOAD
    mirrored = dirs["mirror"] / "x" / "a.bin"
    mirrored.parent.mkdir(parents=True)
    mirrored.write_bytes(PAYLOAD)

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the network must not be used when the mirror has the file")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    sources = {"x/a.bin": make_source("x/a.bin", server.url("a.bin"), PAYLOAD)}
    assert fetch("x/a.bin", sources, dirs) == mirrored
    assert server.requests == []
    assert not dirs["cache"].exists()


def test_missing_files_are_all_listed(server: FileServer, dirs: dict[str, Path]) -> None:
    sources = {
        "x/a.bin": make_source("x/a.bin", server.url("a.bin"), PAYLOAD),
        "x/b.bin": make_source("x/b.bin", server.url("b.bin"), PAYLOAD[:10]),
        "x/derived.json": make_source("x/derived.json", None, b"{}", how="build it with X"),
    }
    with pytest.raises(MissingDataError) as info:
        resolve_many(
            list(sources),
            dirs["mirror"],
            dirs["cache"],
            allow_download=False,
            lock_path=dirs["lock"],
            sources=sources,
        )
    message = str(info.value)
    assert message.startswith("3 data files are missing")
    for rel in sources:
        assert rel in message
        assert str(dirs["mirror"] / rel) in message
    assert server.url("a.bin") in message and server.url("b.bin") in message
    assert "build it with X" in message
    assert [s.path for s, _ in info.value.missing] == list(sources)
    assert server.requests == []


def closed_port() -> int:
    """A local port with nothing listening (bound for a moment to pick it, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """No data anywhere: ``$HALLUSCOPE_DATA_MIRROR`` names an empty folder (so ../shared/data is
    not read either), an empty download cache and lock, no proxy between us and the URL."""
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    places = {name: tmp_path / name for name in ("mirror", "cache")}
    places["mirror"].mkdir()
    places["lock"] = empty_lock(tmp_path / "lock.json")
    monkeypatch.setenv("HALLUSCOPE_DATA_MIRROR", str(places["mirror"]))
    monkeypatch.setenv("HALLUSCOPE_DATA_CACHE", str(places["cache"]))
    monkeypatch.setenv("HALLUSCOPE_CHECKSUM_LOCK", str(places["lock"]))
    return places


def assert_unreachable_line(message: str, rel: str, url: str, offline: dict[str, Path]) -> None:
    """One line naming the file, both ways to a mirror, the cache and the URL."""
    assert "\n" not in message.strip(), message
    for part in (rel, "../shared/data", "HALLUSCOPE_DATA_MIRROR", url, str(offline["cache"])):
        assert part in message, (part, message)
    assert str(offline["mirror"] / rel) in message  # where to copy it


def test_unreachable_url_fails_at_once_naming_the_mirror(
    offline: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Guards offline runs: a public file in neither the mirror nor the cache, whose URL refuses
    the connection, fails within seconds (no retries with backoff) in one line that names the
    file, ../shared/data, $HALLUSCOPE_DATA_MIRROR, the cache and the URL."""
    url = f"http://127.0.0.1:{closed_port()}/a.bin"
    sources = {"x/a.bin": make_source("x/a.bin", url, PAYLOAD)}
    start = time.monotonic()
    with pytest.raises(UnreachableError) as info:
        resolve("x/a.bin", sources=sources, progress=False)  # default backoff and retries
    assert time.monotonic() - start < 5
    assert_unreachable_line(str(info.value), "x/a.bin", url, offline)
    assert "connection refused" in str(info.value)
    assert "retrying" not in capsys.readouterr().err


def test_cli_fetch_offline_is_one_line(
    offline: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same through ``halluscope fetch`` with a registered file: exit 2, one error line."""
    rel = "chair/synonyms.txt"
    url = f"http://127.0.0.1:{closed_port()}/synonyms.txt"
    monkeypatch.setitem(SOURCES, rel, dataclasses.replace(SOURCES[rel], url=url))
    start = time.monotonic()
    assert main(["fetch", "--quiet", rel]) == 2
    assert time.monotonic() - start < 5
    err = capsys.readouterr().err
    assert err.startswith("halluscope fetch: error: ") and err.count("\n") == 1, err
    assert_unreachable_line(err, rel, url, offline)


def test_failed_name_lookup_is_not_retried(
    offline: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No DNS (the usual offline case) is one attempt, like a refused connection."""
    calls = []

    def no_dns(*args: object, **kwargs: object) -> None:
        calls.append(args)
        raise urllib.error.URLError(socket.gaierror(-3, "Temporary failure in name resolution"))

    monkeypatch.setattr(urllib.request, "urlopen", no_dns)
    url = "https://data.example.invalid/a.bin"
    sources = {"x/a.bin": make_source("x/a.bin", url, PAYLOAD)}
    with pytest.raises(UnreachableError) as info:
        resolve("x/a.bin", sources=sources, progress=False, backoff=30.0)
    assert len(calls) == 1
    assert "name lookup failed: Temporary failure in name resolution" in str(info.value)
    assert_unreachable_line(str(info.value), "x/a.bin", url, offline)


def test_reset_while_sending_is_retried(
    server: FileServer, dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection dropped while the request is sent is transient: retried, then downloaded."""
    server.files["a.bin"] = PAYLOAD
    real, calls = urllib.request.urlopen, []

    def reset_once(*args: object, **kwargs: object) -> object:
        calls.append(args)
        if len(calls) == 1:
            raise urllib.error.URLError(ConnectionResetError(104, "Connection reset by peer"))
        return real(*args, **kwargs)

    monkeypatch.setattr(urllib.request, "urlopen", reset_once)
    sources = {"x/a.bin": make_source("x/a.bin", server.url("a.bin"), PAYLOAD)}
    assert fetch("x/a.bin", sources, dirs).read_bytes() == PAYLOAD
    assert len(calls) == 2


def test_unknown_file_is_an_error(dirs: dict[str, Path]) -> None:
    with pytest.raises(DataError, match="unknown data file 'nope.json'"):
        fetch("nope.json", {}, dirs)


# ------------------------------------------------------------------------------ trust on first use


def test_trust_on_first_use_records_then_verifies(
    server: FileServer, dirs: dict[str, Path]
) -> None:
    server.files["ann.zip"] = PAYLOAD
    sources = {"coco/ann.zip": make_source("coco/ann.zip", server.url("ann.zip"), None)}
    path = fetch("coco/ann.zip", sources, dirs)
    lock = json.loads(dirs["lock"].read_text())
    entry = lock["files"]["coco/ann.zip"]
    assert entry == {
        "md5": hashlib.md5(PAYLOAD).hexdigest(),
        "sha256": hashlib.sha256(PAYLOAD).hexdigest(),
        "size": len(PAYLOAD),
        "url": server.url("ann.zip"),
    }
    before = dirs["lock"].read_bytes()
    assert fetch("coco/ann.zip", sources, dirs) == path  # verified against the lock
    assert dirs["lock"].read_bytes() == before
    # upstream changes its bytes: a fresh download is refused, naming the lock file
    path.unlink()
    server.files["ann.zip"] = PAYLOAD + b"more"
    with pytest.raises(ChecksumError) as info:
        fetch("coco/ann.zip", sources, dirs)
    assert str(dirs["lock"]) in str(info.value)
    assert entry["sha256"] in str(info.value)


def test_trust_on_first_use_applies_to_mirror_copies(dirs: dict[str, Path]) -> None:
    mirrored = dirs["mirror"] / "coco" / "ann.zip"
    mirrored.parent.mkdir(parents=True)
    mirrored.write_bytes(PAYLOAD)
    sources = {"coco/ann.zip": make_source("coco/ann.zip", "http://127.0.0.1:9/none", None)}
    fetch("coco/ann.zip", sources, dirs, allow_download=False)
    assert json.loads(dirs["lock"].read_text())["files"]["coco/ann.zip"]["size"] == len(PAYLOAD)
    mirrored.write_bytes(PAYLOAD[::-1])
    with pytest.raises(ChecksumError):
        fetch("coco/ann.zip", sources, dirs, allow_download=False)


# ------------------------------------------------------------------------------ registry and CLI


def test_registry_shape() -> None:
    assert all(key == source.path for key, source in SOURCES.items())
    assert SOURCES[COCO_ANNOTATIONS_ZIP.path].trust_on_first_use
    assert [s.path for s in SOURCES.values() if s.trust_on_first_use] == [COCO_ANNOTATIONS_ZIP.path]
    pinned = re.compile(r"https://raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/[0-9a-f]{40}/\S+")
    for source in SOURCES.values():
        if source.url is None:
            assert source.how and source.md5, source.path  # mirror only: must say how to get it
        elif not source.trust_on_first_use:
            assert pinned.fullmatch(source.url), source.url
            assert source.url.endswith(source.origin.split(":", 1)[1]), source.path
            assert len(source.md5 or "") == 32 and len(source.sha256 or "") == 64


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} (../shared/data) is absent")
def test_registry_matches_shared_data() -> None:
    on_disk = {
        p.relative_to(SHARED).as_posix()
        for p in SHARED.rglob("*")
        if p.is_file() and p.name != "README.md"
    }
    registered = {rel for rel, s in SOURCES.items() if not s.trust_on_first_use}
    assert on_disk == registered
    for rel in sorted(registered):
        source = SOURCES[rel]
        digest = digest_file(SHARED / rel)
        assert (digest.size, digest.md5, digest.sha256) == (
            source.size,
            source.md5,
            source.sha256,
        ), rel


def empty_lock(path: Path) -> Path:
    """A checksum lock file with no entry yet (``--lock`` must name an existing one)."""
    path.write_text('{"files": {}}\n', encoding="utf-8")
    return path


def test_cli_fetch_no_download_lists_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "fetch",
            "--no-mirror",
            "--no-download",
            "--cache",
            str(tmp_path / "cache"),
            "--lock",
            str(empty_lock(tmp_path / "lock.json")),
            "chair/synonyms.txt",
            "trihe/tri-he.json",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "2 data files are missing" in err
    assert SOURCES["chair/synonyms.txt"].url in err and SOURCES["trihe/tri-he.json"].url in err


def test_cli_fetch_prints_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lock = ["--lock", str(empty_lock(tmp_path / "lock.json"))]
    if SHARED.is_dir():
        args = ["fetch", "--mirror", str(SHARED), "--no-download", "--quiet", *lock]
        assert main([*args, "phd/README.upstream.md", "chair/synonyms.txt"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out == [str(SHARED / "phd/README.upstream.md"), str(SHARED / "chair/synonyms.txt")]
    else:  # without the real bytes, check the refusal path of a wrong mirror copy
        fake = tmp_path / "mirror" / "phd" / "README.upstream.md"
        fake.parent.mkdir(parents=True)
        fake.write_bytes(b"not the file")
        args = ["fetch", "--mirror", str(tmp_path / "mirror"), "--no-download", *lock]
        assert main([*args, "phd/README.upstream.md"]) == 2
        assert "checksum mismatch" in capsys.readouterr().err
    assert main(["fetch", "--list"]) == 0
    listing = capsys.readouterr().out
    assert "coco/annotations_trainval2014.zip" in listing and "(mirror only)" in listing
