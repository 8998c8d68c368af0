"""File input/output shared by every stage.

Artifacts are written to a temporary file in the target folder and renamed into place, so an
interrupted job never leaves a half-written file that looks complete. JSON is written with sorted
keys and no timestamps so that identical inputs give byte-identical artifacts.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

_UMASK = os.umask(0)
os.umask(_UMASK)


class InputError(ValueError):
    """Bad input: the message names the file, the line or record, and what was expected."""


def dataclass_from_mapping(cls: type, value: Mapping[str, Any], what: str) -> Any:
    """``cls(**value)`` for a settings dataclass read from a JSON value (a rule's ``params:`` or
    a hand-written flag), with an :class:`InputError` naming ``what``, the unknown and missing
    keys and the expected ones, instead of a ``TypeError`` about ``__init__``."""
    import dataclasses

    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    required = {
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    if not isinstance(value, Mapping):
        raise InputError(f"{what}: expected a JSON object with keys {names}, got {value!r}")
    unknown = sorted(set(value) - set(names))
    missing = sorted(required - set(value))
    if unknown or missing:
        raise InputError(
            f"{what}: unknown key(s) {unknown}, missing key(s) {missing}; expected keys {names}"
        )
    return cls(**value)


def _write_target(path: Path) -> Path:
    """The file an atomic write to ``path`` replaces: ``path`` itself, checked.

    A symlink is refused, never written through: renaming over it would replace the link, and
    writing its target would change a file the user did not name (a shared data file, a
    DVC-cached output). An existing path that is not a regular file (a directory, FIFO, socket or
    device such as ``/dev/null``) is refused too: renaming over it would replace it, or fail with
    an obscure message.
    """
    if path.is_symlink():
        raise InputError(
            f"{path}: is a symlink (to {os.readlink(path)}); refusing to write the output through "
            "it (give the path of a regular file, or remove the link first)"
        )
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return path
    if not stat.S_ISREG(mode):
        kinds = (
            (stat.S_ISDIR, "a directory"),
            (stat.S_ISFIFO, "a FIFO"),
            (stat.S_ISSOCK, "a socket"),
            (stat.S_ISCHR, "a device"),
            (stat.S_ISBLK, "a device"),
        )
        kind = next((name for test, name in kinds if test(mode)), "not a regular file")
        raise InputError(
            f"{path}: exists and is {kind}, not a regular file; refusing to replace it "
            "with the output (give the path of a file)"
        )
    return path


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder, fsync, rename).

    A symlink at ``path`` or an existing non-regular file (directory, FIFO, device) raises
    :class:`InputError` naming it; nothing is written.
    """
    path = _write_target(Path(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600; artifacts get normal permissions
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 text atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def dumps(obj: Any) -> str:
    """Canonical JSON for artifacts: sorted keys, UTF-8 kept, no trailing spaces."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


def write_json(path: str | Path, obj: Any, *, allow_nan: bool = True) -> None:
    """Write one JSON document (indented, sorted keys) atomically.

    ``allow_nan=False``: a NaN or infinity raises ``ValueError`` instead of writing the bare
    ``NaN`` / ``Infinity`` that strict JSON readers reject (the hand-check commands' outputs).
    """
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=2, allow_nan=allow_nan)
    atomic_write_text(path, text + "\n")


def write_jsonl(path: str | Path, records: Iterable[Any]) -> None:
    """Write JSON lines atomically, one record per line, in the given order."""
    atomic_write_text(path, "".join(dumps(r) + "\n" for r in records))


def caption_text(record: Mapping[str, Any]) -> Any:
    """A caption record's text: ``caption`` when the record has that key, else ``text``.

    Why one function: the pipeline (replay recordings), ``halluscope chair`` and ``halluscope
    objects`` read the same files; a record with both keys must be read the same way by all of
    them, as their help texts say.
    """
    return record["caption"] if "caption" in record else record.get("text")


def read_text(path: Path) -> str:
    """The file as UTF-8 text, a leading byte-order mark dropped (editors on Windows write one;
    JSON parsers refuse it as "Expecting value")."""
    try:
        return path.read_text(encoding="utf-8").removeprefix("\ufeff")
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except UnicodeDecodeError as err:
        line = path.read_bytes()[: err.start].count(b"\n") + 1
        raise InputError(
            f"{path}:{line}: not valid UTF-8 (byte {err.start}); expected a UTF-8 text file"
        ) from None


def iter_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield the JSON objects of a JSONL file; errors name the file and the line number."""
    for _, record in iter_jsonl_numbered(path):
        yield record


def iter_jsonl_numbered(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Like :func:`iter_jsonl`, with each object's 1-based line number (blank lines skipped).

    Lines end at line feeds only (text mode reads ``\\r\\n`` and ``\\r`` as one): ``str.splitlines``
    also splits at U+2028, U+0085 and other characters that :func:`dumps` writes raw inside
    strings, so it would break a record :func:`write_jsonl` wrote and count lines no editor shows.
    """
    path = Path(path)
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(
                f"{path}:{number}: malformed JSON ({err.msg} at column {err.colno}); "
                "expected one JSON object per line"
            ) from None
        if not isinstance(record, dict):
            raise InputError(
                f"{path}:{number}: expected a JSON object, got {type(record).__name__}"
            )
        yield number, record


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read a whole JSONL file (see :func:`iter_jsonl`)."""
    return list(iter_jsonl(path))


def read_json_records(path: str | Path) -> list[Any]:
    """Read a JSON array, a JSONL file or concatenated JSON documents (the POPE caption files)."""
    path = Path(path)
    text = read_text(path)
    decoder = json.JSONDecoder()
    records: list[Any] = []
    index = 0
    while True:
        while index < len(text) and text[index].isspace():
            index += 1
        if index >= len(text):
            break
        try:
            obj, index = decoder.raw_decode(text, index)
        except json.JSONDecodeError as err:
            raise malformed_record(path, text, index, err) from None
        if isinstance(obj, list) and not records and index >= len(text.rstrip()):
            return obj
        records.append(obj)
    return records


def malformed_record(path: Path, text: str, start: int, err: json.JSONDecodeError) -> InputError:
    """The error for the record of ``text`` starting at ``start`` that does not decode.

    Why not the decoder's line alone: a record cut short (a JSONL line truncated after ``"key":``)
    makes the decoder read on into the next lines, and it fails at the end of the file or where
    the next record starts, lines after the one at fault (line 5 of a 4-line file). Such an error
    names the line the record starts on; an error inside a record spread over several lines (a
    pretty-printed document) names its own line and the record's first.
    """
    first = text.count("\n", 0, start) + 1
    line = text.count("\n", 0, err.pos) + 1
    if line == first:
        return InputError(f"{path}:{line}: malformed JSON ({err.msg})")
    if not text[err.pos :].strip():
        return InputError(
            f"{path}:{first}: malformed JSON (the record starting on this line is cut short: "
            f"{err.msg} at the end of the file)"
        )
    line_start = text.rfind("\n", 0, err.pos) + 1
    line_end = text.find("\n", err.pos)
    rest = text[line_start : len(text) if line_end < 0 else line_end]
    if not text[line_start : err.pos].strip() and _is_json_value(rest):
        return InputError(
            f"{path}:{first}: malformed JSON (the record starting on this line is cut short: "
            f"{err.msg} where line {line} starts the next record)"
        )
    return InputError(
        f"{path}:{line}: malformed JSON ({err.msg}, in the record starting on line {first})"
    )


def _is_json_value(text: str) -> bool:
    """Whether ``text`` is one whole JSON value (a JSONL line by itself)."""
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def read_json(path: str | Path) -> Any:
    """Read one JSON document; errors name the file and line."""
    path = Path(path)
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"{path}:{err.lineno}: malformed JSON ({err.msg})") from None


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """SHA-256 hex digest of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def input_error_exit(prog: str, err: Exception) -> int:
    """Print ``<prog>: error: <message>`` (a KeyError's key, unquoted) and return exit status 2.

    Why shared: ``halluscope`` and the ``python -m halluscope.stages.*`` entry points promise the
    same one-line error for bad input, never a traceback. It lives here, not in the CLI, so that
    no stage imports the CLI (which imports every stage: an import cycle).
    """
    import sys

    message = err.args[0] if isinstance(err, KeyError) and err.args else err
    print(f"{prog}: error: {message}", file=sys.stderr)
    return 2


def reports_by_model(paths: list[Path], models: list[str]) -> dict[str, dict]:
    """Per-model score files keyed by the ``model`` they name; every model must have one."""
    found = {}
    for path in paths:
        data = read_json(path)
        found[str(data.get("model"))] = data
    missing = [m for m in models if m not in found]
    if missing:
        raise InputError(f"no score file for model(s) {missing} among {[str(p) for p in paths]}")
    return found
