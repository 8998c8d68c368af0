"""Outputs replaced outside this project's runs: found before the DAG is built, and rebuilt.

Why: Snakemake keys its record of a job (params, code) by path. ``dvc checkout``, ``git
checkout`` of tracked results or a copy from elsewhere replace the bytes under a path and leave
that record as it was, so a score built with ``caos.k=5`` passes as the ``k=3`` one Snakemake
remembers building, and tables rebuilt from it print ``top-3`` over ``k=5`` numbers.

How, with the project's own record and Snakemake's public params trigger: every run, finished or
failed, ends by writing the size, mtime and SHA-256 of each file under the profile's result
folders (:func:`record`, in ``.halluscope/outputs-<profile>.json``; the folders hold only what
runs wrote). Before the next DAG is built, a file whose size or mtime is not the recorded one
and whose bytes are not either, or a file the record lacks, was put there by something else
(:func:`replaced_outputs`); the record counts one more replacement of the job that wrote it,
found by the rules' output patterns (:func:`replaced_jobs`, :func:`note`). Every rule's ``code``
param carries that count (:func:`code_param`, nothing while there was none), so the job of a
replaced file, or of the ``directory()`` output holding it, has params other than those
Snakemake recorded and reruns with what depends on it, with the current params: numbers and
labels agree again, in a dry run as in a real one. A touch that keeps the bytes (``dvc commit``)
is no replacement; a folder without a record (a fresh clone after ``dvc pull``) is trusted, as
DVC trusts it, and recorded as it is. Nothing of Snakemake's or DVC's own records is read or
written; ``tests/test_provenance.py`` fails if an engine upgrade changes the params trigger.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

RECORDS = Path(".halluscope")
#: the record's entry counting each file's replacements (beside one entry per file)
REPLACED = "replaced"


def record_path(profile: str, records: Path = RECORDS) -> Path:
    return records / f"outputs-{profile}.json"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _load(path: Path) -> dict[str, dict] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _files(roots: Iterable[str]) -> list[Path]:
    """The regular files under ``roots`` (files or folders, relative to the working
    directory), hidden files (markers of the engines) aside. Symbolic links are skipped: no job
    writes one, and a dangling or looping link (a user's, under ``results/``) must not stop
    every command."""
    files = []
    for root in map(Path, roots):
        if root.is_symlink():
            continue
        if root.is_file():
            files.append(root)
            continue
        for folder, _dirs, names in os.walk(root):
            paths = (Path(folder) / n for n in names if not n.startswith("."))
            files.extend(p for p in paths if not p.is_symlink() and p.is_file())
    return sorted(files)


def _unchanged(path: Path, entry: dict | None) -> bool:
    """Whether ``path`` holds the bytes its record names (hashed only when its size or mtime
    moved since)."""
    if not isinstance(entry, dict):
        return False
    stat = path.stat()
    if entry.get("mtime") == stat.st_mtime and entry.get("size") == stat.st_size:
        return True
    return entry.get("size") == stat.st_size and entry.get("sha256") == _sha256(path)


def replaced_outputs(profile: str, roots: Iterable[str], records: Path = RECORDS) -> list[str]:
    """Every file under ``roots`` that is not as the profile's last run left it (other bytes,
    or unknown to the record), sorted. Without a record (a fresh clone after ``dvc pull``, a
    folder no run of this project has recorded yet) none: the files there are trusted, and
    recorded now, so that a replacement from here on is found."""
    known = _load(record_path(profile, records))
    if known is None:
        record(profile, roots, records)
        return []
    return [p.as_posix() for p in _files(roots) if not _unchanged(p, known.get(p.as_posix()))]


def record(profile: str, roots: Iterable[str], records: Path = RECORDS) -> int:
    """Record size, mtime and SHA-256 of every file under ``roots`` (hashing only those whose
    size or mtime moved since the last record); returns how many were hashed. The counts of
    replacements stay: a replaced file this run did not rebuild (not among its targets, or a
    failed run) keeps its job's params changed until a run rebuilds it."""
    path = record_path(profile, records)
    known = _load(path) or {}
    entries: dict = {REPLACED: known.get(REPLACED, {})}
    hashed = 0
    for file in _files(roots):
        text, stat = file.as_posix(), file.stat()
        entry = known.get(text)
        if not (
            isinstance(entry, dict)
            and entry.get("mtime") == stat.st_mtime
            and entry.get("size") == stat.st_size
        ):
            entry = {"mtime": stat.st_mtime, "size": stat.st_size, "sha256": _sha256(file)}
            hashed += 1
        entries[text] = entry
    _write(path, entries)
    return hashed


def _write(path: Path, value: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(value, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def code_param(digest: str, stage: str, profile: str) -> Callable[[Any], str]:
    """A rule's ``code`` param: ``digest`` (of its stage's code), and ``+replaced-N`` once N
    replacements of its job's outputs were counted (:func:`note`). A function of the wildcards
    alone (Snakemake does not track a param derived from the input or output files); read from
    the record file, so every process of a run (an executor's job too) gets the same value."""

    def code(wildcards: Any) -> str:
        key = _job_key(stage, dict(wildcards.items()))
        count = _counts(profile).get(key, 0)
        return f"{digest}+replaced-{count}" if count else digest

    code.stage = stage  # type: ignore[attr-defined]
    return code


def _job_key(stage: str, wildcards: Mapping[str, Any]) -> str:
    return json.dumps([stage, sorted((str(k), str(v)) for k, v in wildcards.items())])


def replaced_jobs(rules: Iterable[Any], replaced: Iterable[str]) -> list[str]:
    """The jobs that wrote the ``replaced`` files, as ``(code stage, wildcards)`` keys: each
    file matched against the output patterns of the workflow's rules (``workflow.rules``;
    inside a ``directory()`` output, against the folder) whose ``code`` param is a
    :func:`code_param`."""
    from snakemake.io import is_flagged, regex_from_filepattern

    patterns = []
    for rule in rules:
        stage = getattr(getattr(rule.params, "code", None), "stage", None)
        for output in rule.output if stage else ():
            folder = is_flagged(output, "directory")
            patterns.append((stage, re.compile(regex_from_filepattern(str(output))), folder))
    keys = []
    for path in replaced:
        for stage, pattern, folder in patterns:
            match = pattern.fullmatch(path)
            if match is None and folder:
                candidates = (pattern.fullmatch(p.as_posix()) for p in Path(path).parents)
                match = next((m for m in candidates if m), None)
            if match is not None:
                keys.append(_job_key(stage, match.groupdict()))
    return keys


def note(profile: str, jobs: Iterable[str], records: Path = RECORDS) -> None:
    """Count one more replacement of the outputs of each of ``jobs`` (:func:`replaced_jobs`)."""
    path = record_path(profile, records)
    known = _load(path) or {}
    counts = known.get(REPLACED) if isinstance(known.get(REPLACED), dict) else {}
    for key in set(jobs):
        counts[key] = int(counts.get(key, 0)) + 1
    _write(path, {**known, REPLACED: counts})


_loaded: dict[str, tuple[int, dict[str, int]]] = {}


def _counts(profile: str, records: Path = RECORDS) -> dict[str, int]:
    """The replacement counts of the profile's record (read again when the file changed)."""
    path = record_path(profile, records)
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return {}
    if _loaded.get(str(path), (None,))[0] != stamp:
        counts = (_load(path) or {}).get(REPLACED)
        _loaded[str(path)] = (stamp, counts if isinstance(counts, dict) else {})
    return _loaded[str(path)][1]


def describe(replaced: list[str], limit: int = 8) -> str:
    """The lines the Snakefile prints before rebuilding."""
    lines = [
        f"halluscope: {len(replaced)} output file(s) were replaced after this project's runs "
        "built them (dvc checkout, git checkout or a copy?); Snakemake's records no longer "
        "describe them; their jobs rerun with the current params, with what depends on them:"
    ]
    lines += [f"  {path}" for path in replaced[:limit]]
    if len(replaced) > limit:
        lines.append(f"  ... and {len(replaced) - limit} more")
    return "\n".join(lines)
