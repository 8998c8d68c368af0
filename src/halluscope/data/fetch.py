"""Find a raw input file locally or download it, and refuse bytes that are not the recorded ones.

Resolution order for a registered file (:data:`halluscope.data.sources.SOURCES`):

1. the *mirror*: a folder with the same relative layout (``--mirror``, else
   ``$HALLUSCOPE_DATA_MIRROR``, else ``../shared/data`` next to the project root when it exists);
2. the *cache*: files downloaded earlier (``--cache``, else ``$HALLUSCOPE_DATA_CACHE``, else
   ``$XDG_CACHE_HOME/halluscope/data``; outside the repository so a 240 MB zip can never be
   committed by accident);
3. a download into the cache: streamed to ``<file>.part`` (resumed with an HTTP ``Range`` request
   when a previous attempt was interrupted), verified, then renamed into place atomically, so a
   file with the final name is always complete. A broken transfer is retried with backoff; a
   host that cannot be reached at all (no network, DNS failure, connection refused) is not:
   :class:`UnreachableError` says at once, in one line, which file is missing and where a copy
   would be found (the mirror, the cache).

Every file is verified wherever it comes from: size, md5 and sha256 as registered. A mismatch is
an error that names the file and both checksums; nothing silently falls back to another copy.

Trust on first use: a file with no published checksum (the MSCOCO annotation zip) is hashed the
first time it is seen and its size, md5 and sha256 are written to the checksum lock file
(``data/checksums.lock.json`` in the project, or ``$HALLUSCOPE_CHECKSUM_LOCK``). Commit that file:
from then on every use, on every machine, is verified against it like a pinned checksum. To
accept new bytes deliberately (an upstream re-release), delete the entry and run again.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import http.client
import json
import os
import re
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.data.sources import SOURCES, Source
from halluscope.io import InputError, write_json

__all__ = [
    "ChecksumError",
    "ChecksumLock",
    "DataError",
    "Digest",
    "MissingDataError",
    "UnreachableError",
    "default_cache_dir",
    "default_lock_path",
    "default_mirror",
    "digest_file",
    "project_root",
    "resolve",
    "resolve_many",
    "verify",
]

_USER_AGENT = "halluscope-fetch/0.1 (+urllib)"
_CHUNK = 1 << 16
#: HTTP statuses worth retrying (transient server or rate-limit errors).
_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
#: errnos of a connection that cannot be opened at all (no route, no interface), beside DNS
#: failures, refusals and connect timeouts: waiting seconds between attempts does not help.
_UNREACHABLE_ERRNOS = frozenset(
    {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN, errno.EHOSTDOWN, errno.EADDRNOTAVAIL}
)


class DataError(InputError):
    """A raw input file cannot be provided (missing, unreachable or not the recorded bytes)."""


class ChecksumError(DataError):
    """A file's bytes differ from the registered or locked checksums."""


class MissingDataError(DataError):
    """Files that are neither in the mirror nor the cache and cannot be downloaded.

    ``missing`` holds ``(source, where to put it)`` pairs so callers can report them.
    """

    def __init__(self, message: str, missing: list[tuple[Source, Path]]) -> None:
        super().__init__(message)
        self.missing = missing


class UnreachableError(DataError):
    """A file to download whose host cannot be reached (DNS failure, connection refused, no
    route, connect timeout). Raised at the first attempt: an offline machine stays offline for
    the seconds a retry would wait, and the useful answer is where else the file could be."""

    def __init__(self, message: str, url: str, reason: str) -> None:
        super().__init__(message)
        self.url = url
        self.reason = reason


# --------------------------------------------------------------------------------------------
# default locations
# --------------------------------------------------------------------------------------------


def project_root() -> Path:
    """The project folder: ``$HALLUSCOPE_ROOT``, else the checkout holding this package, else cwd.

    Defaults are anchored here rather than at the working directory so that the mirror and the
    lock file are the same whether a command runs from the root, ``tests/`` or a Snakemake job.
    """
    env = os.environ.get("HALLUSCOPE_ROOT")
    if env:
        return Path(env).resolve()
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "pyproject.toml").is_file() and (checkout / "src" / "halluscope").is_dir():
        return checkout
    return Path.cwd().resolve()


def default_mirror() -> Path:
    """``$HALLUSCOPE_DATA_MIRROR``, else ``../shared/data`` relative to the project root."""
    env = os.environ.get("HALLUSCOPE_DATA_MIRROR")
    if env:
        return Path(env)
    return project_root().parent / "shared" / "data"


def default_cache_dir() -> Path:
    """``$HALLUSCOPE_DATA_CACHE``, else ``$XDG_CACHE_HOME/halluscope/data`` (~/.cache)."""
    env = os.environ.get("HALLUSCOPE_DATA_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "halluscope" / "data"


def default_lock_path() -> Path:
    """``$HALLUSCOPE_CHECKSUM_LOCK``, else ``data/checksums.lock.json`` in the project."""
    env = os.environ.get("HALLUSCOPE_CHECKSUM_LOCK")
    if env:
        return Path(env)
    return project_root() / "data" / "checksums.lock.json"


# --------------------------------------------------------------------------------------------
# checksums
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Digest:
    """Size and checksums of a file's bytes (any field may be unknown for an expectation)."""

    size: int | None
    md5: str | None
    sha256: str | None

    def describe(self) -> str:
        parts = []
        if self.md5 is not None:
            parts.append(f"md5 {self.md5}")
        if self.sha256 is not None:
            parts.append(f"sha256 {self.sha256}")
        if self.size is not None:
            parts.append(f"{self.size} bytes")
        return ", ".join(parts) or "nothing recorded"

    def mismatches(self, actual: Digest) -> list[str]:
        """Names of the fields recorded here that differ in ``actual``."""
        return [
            name
            for name in ("size", "md5", "sha256")
            if getattr(self, name) is not None and getattr(self, name) != getattr(actual, name)
        ]


def digest_file(path: Path) -> Digest:
    """Size, md5 and sha256 of ``path`` in one pass over the bytes."""
    md5 = hashlib.md5(usedforsecurity=False)
    sha = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            md5.update(block)
            sha.update(block)
            size += len(block)
    return Digest(size, md5.hexdigest(), sha.hexdigest())


class ChecksumLock:
    """The trust-on-first-use record: ``{"files": {relative path: {size, md5, sha256, url}}}``.

    The file is rewritten atomically with sorted keys, so it diffs cleanly in git.
    """

    VERSION = 1
    ABOUT = (
        "Checksums recorded by `halluscope fetch` the first time a file without a published "
        "checksum was seen (trust on first use). Every later use is verified against them. "
        "Commit this file; delete an entry only to accept new upstream bytes on purpose."
    )

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def entries(self) -> dict[str, dict[str, Any]]:
        """The recorded entries (empty when the lock file does not exist yet)."""
        if not self.path.is_file():
            return {}
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise DataError(f"{self.path}: checksum lock file is not valid JSON ({err})") from None
        files = doc.get("files") if isinstance(doc, dict) else None
        if not isinstance(files, dict) or not all(isinstance(v, dict) for v in files.values()):
            raise DataError(
                f"{self.path}: expected {{'files': {{path: {{'size', 'md5', 'sha256'}}}}}}"
            )
        return files

    def get(self, relative_path: str) -> Digest | None:
        """The locked digest of ``relative_path``, or ``None`` if it was never seen."""
        entry = self.entries().get(relative_path)
        if entry is None:
            return None
        try:
            return Digest(int(entry["size"]), str(entry["md5"]), str(entry["sha256"]))
        except (KeyError, TypeError, ValueError):
            raise DataError(
                f"{self.path}: entry {relative_path!r} needs 'size', 'md5' and 'sha256'"
            ) from None

    def record(self, source: Source, digest: Digest) -> None:
        """Add ``source`` with ``digest`` (read-modify-write right away to keep races short)."""
        files = self.entries()
        files[source.path] = {
            "md5": digest.md5,
            "sha256": digest.sha256,
            "size": digest.size,
            "url": source.url,
        }
        write_json(self.path, {"about": self.ABOUT, "files": files, "version": self.VERSION})


def expected_digest(source: Source) -> Digest | None:
    """What the registry pins for ``source`` (``None`` for trust-on-first-use files)."""
    if source.trust_on_first_use:
        return None
    return Digest(source.size, source.md5, source.sha256)


def verify(path: Path, source: Source, lock: ChecksumLock | None = None) -> Digest:
    """Check ``path`` against the registry or the lock file; record it there on first use.

    Raises :class:`ChecksumError` naming the file, the expected and the actual checksums.
    """
    actual = digest_file(path)
    expected = expected_digest(source)
    origin = "registry (halluscope.data.sources)"
    if expected is None:
        lock = lock or ChecksumLock(default_lock_path())
        expected = lock.get(source.path)
        origin = f"lock file {lock.path}"
        if expected is None:
            lock.record(source, actual)
            print(
                f"halluscope fetch: {source.path}: no published checksum; recorded "
                f"{actual.describe()} in {lock.path} (trust on first use: commit this file)",
                file=sys.stderr,
            )
            return actual
    bad = expected.mismatches(actual)
    if bad:
        raise ChecksumError(
            f"{path}: checksum mismatch for {source.path} ({', '.join(bad)} differ): expected "
            f"{expected.describe()} (from the {origin}), got {actual.describe()}. The file is "
            "refused: replace it with the original, or delete it so it is downloaded again."
        )
    return actual


# --------------------------------------------------------------------------------------------
# download
# --------------------------------------------------------------------------------------------

_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")
_UNSATISFIED_RANGE = re.compile(r"bytes\s+\*/(\d+)")


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """An advisory lock so two jobs never append to the same ``.part`` file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _progress(total: int | None, initial: int, desc: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=initial,
        desc=desc,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        file=sys.stderr,
        disable=not enabled,
        mininterval=0.5,
    )


def _transfer(
    url: str, part: Path, expected_size: int | None, desc: str, progress: bool, timeout: float
) -> None:
    """One HTTP request that appends to (or restarts) ``part``; raises on a broken transfer."""
    offset = part.stat().st_size if part.exists() else 0
    if expected_size is not None and offset > expected_size:
        part.unlink()  # longer than the file can be: not a prefix of it
        offset = 0
    if expected_size is not None and offset == expected_size:
        return  # complete already; verification decides
    headers = {"User-Agent": _USER_AGENT, "Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    request = urllib.request.Request(url, headers=headers)
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as err:
        if err.code != 416 or not offset:
            raise
        match = _UNSATISFIED_RANGE.match(err.headers.get("Content-Range", ""))
        if match and int(match.group(1)) == offset:
            return  # nothing left to send: the part holds the whole file (verification decides)
        part.unlink()  # longer than the file, or unknown: start over rather than trust it
        raise http.client.HTTPException(f"range from byte {offset} not satisfiable") from None
    with response:
        mode = "ab"
        if response.status == 206:
            match = _CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
            if match is None or int(match.group(1)) != offset:
                raise http.client.HTTPException(
                    f"unexpected Content-Range {response.headers.get('Content-Range')!r} "
                    f"for a request from byte {offset}"
                )
        elif response.status == 200:
            mode, offset = "wb", 0  # the server ignored the Range header: start over
        else:
            raise http.client.HTTPException(f"unexpected HTTP status {response.status}")
        length = response.headers.get("Content-Length")
        total = offset + int(length) if length is not None else expected_size
        with open(part, mode) as handle, _progress(total, offset, desc, progress) as bar:
            while block := response.read(_CHUNK):
                handle.write(block)
                bar.update(len(block))
        if total is not None and part.stat().st_size < total:
            raise http.client.IncompleteRead(b"", total - part.stat().st_size)


def download(
    url: str,
    part: Path,
    *,
    expected_size: int | None = None,
    desc: str = "",
    progress: bool = True,
    timeout: float = 60.0,
    retries: int = 4,
    backoff: float = 1.0,
) -> None:
    """Download ``url`` into ``part``, resuming what is already there, with retries.

    An interrupted transfer keeps ``part``; the next attempt (or the next run) asks only for the
    missing bytes with ``Range: bytes=<size>-``. A server that ignores ranges restarts the file.
    A connection that cannot be opened at all (:func:`_cannot_connect`) raises
    :class:`UnreachableError` at once; errors of a transfer under way are retried.
    """
    part.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(retries + 1):
        try:
            _transfer(url, part, expected_size, desc, progress, timeout)
            return
        except urllib.error.HTTPError as err:
            if err.code not in _RETRY_STATUS or attempt == retries:
                raise DataError(f"download of {url} failed: HTTP {err.code} {err.reason}") from None
            reason = f"HTTP {err.code}"
        except (OSError, http.client.HTTPException) as err:
            unreachable = _cannot_connect(err)
            if unreachable is not None:
                raise UnreachableError(
                    f"{url} is unreachable ({unreachable})", url, unreachable
                ) from None
            if attempt == retries:
                raise DataError(
                    f"download of {url} failed after {retries + 1} attempts ({err!r}); "
                    f"{part} keeps the bytes received so far and the next run resumes it"
                ) from None
            reason = repr(err)
        delay = backoff * 2**attempt
        print(
            f"halluscope fetch: {desc or url}: {reason}; retrying in {delay:.0f}s", file=sys.stderr
        )
        time.sleep(delay)


def _cannot_connect(err: BaseException) -> str | None:
    """Why no connection could be opened, or ``None`` for any other failure.

    ``urlopen`` wraps in :class:`urllib.error.URLError` only errors raised while connecting and
    sending the request; of those, a failed name lookup, a refusal, no route and a connect
    timeout mean the host cannot be reached now, while a reset mid-request is worth a retry.
    """
    if not isinstance(err, urllib.error.URLError) or isinstance(err, urllib.error.HTTPError):
        return None
    reason = err.reason
    if isinstance(reason, socket.gaierror):
        return f"name lookup failed: {reason.strerror or reason}"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, TimeoutError):
        return "connecting timed out"
    if isinstance(reason, OSError) and reason.errno in _UNREACHABLE_ERRNOS:
        return reason.strerror or str(reason)
    return None


# --------------------------------------------------------------------------------------------
# resolution
# --------------------------------------------------------------------------------------------


def _lookup(relative_path: str, sources: Mapping[str, Source]) -> Source:
    try:
        return sources[relative_path]
    except KeyError:
        raise DataError(
            f"unknown data file {relative_path!r}: not registered in "
            "halluscope.data.sources.SOURCES (`halluscope fetch --list` shows them)"
        ) from None


def _mirror_dir(mirror: Path | None, use_default_mirror: bool) -> Path | None:
    if mirror is not None:
        return Path(mirror)
    return default_mirror() if use_default_mirror else None


def _fetch_into_cache(
    source: Source, target: Path, lock: ChecksumLock, progress: bool, download_options: dict
) -> Path:
    """Download ``source`` to ``target`` (via ``.part``), verify, rename atomically."""
    assert source.url is not None
    part = target.with_name(target.name + ".part")
    with _exclusive(target.with_name(target.name + ".lock")):
        if target.is_file():  # another job finished it while we waited
            verify(target, source, lock)
            return target
        locked = lock.get(source.path) if source.trust_on_first_use else None
        expected_size = source.size if locked is None else locked.size
        download(
            source.url,
            part,
            expected_size=expected_size,
            desc=source.path,
            progress=progress,
            **download_options,
        )
        try:
            verify(part, source, lock)
        except ChecksumError as err:
            part.unlink(missing_ok=True)  # a bad prefix must not be resumed next time
            raise ChecksumError(f"downloaded from {source.url}: {err}") from None
        os.replace(part, target)
    return target


def resolve(
    relative_path: str,
    mirror: Path | None = None,
    cache_dir: Path | None = None,
    allow_download: bool = True,
    *,
    lock_path: Path | None = None,
    sources: Mapping[str, Source] | None = None,
    use_default_mirror: bool = True,
    progress: bool = True,
    **download_options: Any,
) -> Path:
    """The verified local path of a registered raw input (mirror, else cache, else download).

    ``mirror=None`` means the default mirror (if ``use_default_mirror``); ``cache_dir=None`` the
    default cache. ``download_options`` go to :func:`download` (``timeout``, ``retries``,
    ``backoff``). Raises :class:`MissingDataError` when the file is nowhere and cannot be
    downloaded, :class:`UnreachableError` (one line naming the file, the mirror, the cache and
    the URL) when it is nowhere and its host cannot be reached, :class:`ChecksumError` when a
    copy is not the recorded bytes.
    """
    source = _lookup(relative_path, SOURCES if sources is None else sources)
    lock = ChecksumLock(lock_path or default_lock_path())
    mirror_dir = _mirror_dir(mirror, use_default_mirror)
    if mirror_dir is not None and (mirror_dir / relative_path).is_file():
        path = mirror_dir / relative_path
        verify(path, source, lock)
        return path
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = cache / relative_path
    if target.is_file():
        verify(target, source, lock)
        return target
    if allow_download and source.url is not None:
        try:
            return _fetch_into_cache(source, target, lock, progress, download_options)
        except UnreachableError as err:
            raise UnreachableError(
                _unreachable_message(source, mirror_dir, cache, err.reason), err.url, err.reason
            ) from None
    missing = [(source, (mirror_dir or default_mirror()) / relative_path)]
    raise MissingDataError(_missing_message(missing, cache, allow_download), missing)


def _unreachable_message(source: Source, mirror_dir: Path | None, cache: Path, reason: str) -> str:
    """One line: the file, where it was looked for, the URL and why it cannot be reached."""
    if mirror_dir is None:
        where = "not in a data mirror (none was read: ../shared/data or $HALLUSCOPE_DATA_MIRROR)"
        put = cache / source.path
    else:
        where = f"not in the data mirror {mirror_dir} (../shared/data or $HALLUSCOPE_DATA_MIRROR)"
        put = mirror_dir / source.path
    return (
        f"{source.path}: {where} nor in the cache {cache}, and {source.url} is unreachable "
        f"({reason}); copy the file to {put}, or run again with network access"
    )


def _missing_message(missing: list[tuple[Source, Path]], cache: Path, allow_download: bool) -> str:
    noun = "file is" if len(missing) == 1 else "files are"
    lines = [
        f"{len(missing)} data {noun} missing (neither in the mirror nor in the cache {cache}):"
    ]
    for source, where in missing:
        lines.append(f"  {source.path}")
        if source.url is None:
            lines.append(f"    get it:    {source.how}")
        else:
            state = "" if allow_download else "  (downloading is off: --no-download)"
            lines.append(f"    get it at: {source.url}{state}")
        lines.append(f"    put it at: {where}  (or {cache / source.path})")
    return "\n".join(lines)


def resolve_many(
    relative_paths: Iterable[str],
    mirror: Path | None = None,
    cache_dir: Path | None = None,
    allow_download: bool = True,
    **options: Any,
) -> list[Path]:
    """:func:`resolve` for several files; one error lists *every* missing file at once."""
    resolved: list[Path] = []
    missing: list[tuple[Source, Path]] = []
    for rel in relative_paths:
        try:
            resolved.append(resolve(rel, mirror, cache_dir, allow_download, **options))
        except MissingDataError as err:
            missing.extend(err.missing)
    if missing:
        cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        raise MissingDataError(_missing_message(missing, cache, allow_download), missing)
    return resolved


def resolve_input(value: str | Path) -> Path:
    """A config file value: a registered data file (``trihe/tri-he.json``) is resolved through
    the mirror / cache / pinned download; anything else is a project file path, as given.

    Why both: a question file may be the demo's authored YAML (tracked by Snakemake as an input)
    or a published benchmark file that lives outside the repository (verified by checksum).
    """
    key = str(value)
    if key in SOURCES and not Path(key).is_file():
        return resolve(key)
    return Path(value)
