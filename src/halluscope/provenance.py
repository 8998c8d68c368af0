"""Outputs replaced outside Snakemake: found before the DAG is built, and rebuilt.

Why: Snakemake keys its metadata (params, code, when a job finished) by path. ``dvc checkout``,
``git checkout`` of tracked results or a copy from elsewhere replace the bytes under a path and
leave that record as it was, so a score built with ``caos.k=5`` passes as the ``k=3`` one
Snakemake remembers building, and tables rebuilt from it print ``top-3`` over ``k=5`` numbers.

Snakemake records, per output, the file's mtime when its job finished (``endtime``). A file
whose mtime is no longer that one was rewritten by something else; a file inside a
``directory()`` output that is newer than the directory's record likewise. Some rewrites keep
the bytes (``dvc commit`` touches the single-file outputs it caches): at the end of every run
the Snakefile records the SHA-256 of each output Snakemake built (:func:`record_built`, in
``.snakemake/halluscope-built.json``), and a moved file whose bytes are still those is not
taken for replaced. The Snakefile hands
those outputs to Snakemake as *incomplete* (its own marker for "not the finished product of its
job"), with one line per path: with ``--rerun-incomplete`` (set in the workflow profile
``profiles/default``, and in every DVC stage command) the same invocation rebuilds them and
everything downstream with the current params, so numbers and labels agree again; without it,
Snakemake stops before any job and names the files and the flag.
"""

from __future__ import annotations

import hashlib
import json
import os
from base64 import urlsafe_b64encode
from dataclasses import dataclass
from pathlib import Path

METADATA = Path(".snakemake") / "metadata"
INCOMPLETE = Path(".snakemake") / "incomplete"
BUILT = Path(".snakemake") / "halluscope-built.json"
#: mtimes are compared as floats read back from Snakemake's JSON (exact); this only absorbs the
#: rounding of file systems with coarser timestamps.
TOLERANCE_S = 1e-3


@dataclass(frozen=True)
class Replaced:
    """An output whose bytes are not the ones Snakemake's job wrote."""

    path: str  # the file found changed
    output: str  # the Snakemake output it belongs to (itself, or its directory() output)
    rule: str


def _record_path(metadata: Path, output: str) -> Path:
    """Snakemake's FilePersistence record path: the urlsafe base64 of the output path, cut into
    directory levels of at most NAME_MAX - 1 characters (all but the last prefixed with @)."""
    b64 = urlsafe_b64encode(output.encode()).decode()
    size = 254
    parts = [b64[i : i + size] for i in range(0, len(b64), size)]
    return metadata.joinpath(*["@" + p for p in parts[:-1]], parts[-1])


def mark_incomplete(outputs: set[str], incomplete: Path = INCOMPLETE) -> None:
    """Snakemake's incomplete marker (FilePersistence) for each output, so that its job reruns."""
    for output in sorted(outputs):
        marker = _record_path(incomplete, output)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps({"external_jobid": None}), encoding="utf-8")


def _record(metadata: Path, output: str, cache: dict[str, dict | None]) -> dict | None:
    if output not in cache:
        try:
            cache[output] = json.loads(_record_path(metadata, output).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            cache[output] = None
    return cache[output]


def _classify(roots: list[str], metadata: Path) -> list[tuple[Path, str, str, bool]]:
    """``(file, its Snakemake output, rule, moved since its job finished)`` for every file under
    ``roots`` that Snakemake built (files without a record of their own or of a folder above)."""
    cache: dict[str, dict | None] = {}
    found: list[tuple[Path, str, str, bool]] = []
    if not metadata.is_dir():
        return found
    for root in roots:
        for path in _files(Path(root)):
            text = path.as_posix()
            record = _record(metadata, text, cache)
            if record is not None:
                found.append((path, text, str(record.get("rule")), _moved(path, record, True)))
                continue
            for parent in path.parents:  # a file inside a directory() output
                if parent == Path("."):
                    break
                record = _record(metadata, parent.as_posix(), cache)
                if record is not None:
                    moved = _moved(path, record, exact=False)
                    found.append((path, parent.as_posix(), str(record.get("rule")), moved))
                    break
    return found


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _load_built(built: Path) -> dict[str, dict]:
    try:
        value = json.loads(built.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def replaced_outputs(
    roots: list[str], metadata: Path = METADATA, built: Path = BUILT
) -> list[Replaced]:
    """Every file under ``roots`` (files or folders, relative to the working directory) that
    Snakemake built and that was replaced since (moved, and not the bytes recorded when it was
    built): sorted by path."""
    known = _load_built(built)
    found = []
    for path, output, rule, moved in _classify(roots, metadata):
        text = path.as_posix()
        if moved and known.get(text, {}).get("sha256") != _sha256(path):
            found.append(Replaced(text, output, rule))
    return sorted(found, key=lambda r: r.path)


def record_built(roots: list[str], metadata: Path = METADATA, built: Path = BUILT) -> int:
    """Record the SHA-256 of every file under ``roots`` that is as its Snakemake job left it
    (hashing only files whose mtime or size changed since the last record); returns how many
    were hashed. Called by the Snakefile's ``onsuccess`` and ``onerror``."""
    known = _load_built(built)
    hashed = 0
    for path, _output, _rule, moved in _classify(roots, metadata):
        if moved:
            continue
        text = path.as_posix()
        stat = path.stat()
        entry = known.get(text, {})
        if entry.get("mtime") == stat.st_mtime and entry.get("size") == stat.st_size:
            continue
        known[text] = {"mtime": stat.st_mtime, "size": stat.st_size, "sha256": _sha256(path)}
        hashed += 1
    built.parent.mkdir(parents=True, exist_ok=True)
    tmp = built.with_name(built.name + ".tmp")
    tmp.write_text(json.dumps(known, sort_keys=True), encoding="utf-8")
    os.replace(tmp, built)
    return hashed


def _files(root: Path) -> list[Path]:
    """The regular files under ``root``. Symbolic links are skipped: no job writes one, and a
    dangling or looping link (a user's, under ``results/``) must not stop every command."""
    if root.is_symlink():
        return []
    if root.is_file():
        return [root]
    files = []
    for folder, _dirs, names in os.walk(root):
        paths = (Path(folder) / n for n in names if not n.startswith("."))
        files.extend(p for p in paths if not p.is_symlink() and p.is_file())
    return sorted(files)


def _moved(path: Path, record: dict, exact: bool) -> bool:
    """Whether ``path`` was written after (or, for its own record, other than when) the job
    that made it finished. A record without a finish time (incomplete) is Snakemake's matter."""
    endtime = record.get("endtime")
    if not isinstance(endtime, int | float) or record.get("incomplete"):
        return False
    mtime = path.stat().st_mtime
    if exact:
        return abs(mtime - endtime) > TOLERANCE_S
    return mtime > endtime + TOLERANCE_S


def describe(replaced: list[Replaced], limit: int = 8) -> str:
    """The lines the Snakefile prints before rebuilding."""
    lines = [
        f"halluscope: {len(replaced)} output file(s) were replaced after Snakemake built them "
        "(dvc checkout, git checkout or a copy?); their Snakemake records no longer describe "
        "them; they are marked incomplete and rebuilt with the current params, with what "
        "depends on them:"
    ]
    lines += [f"  {r.path}  (rule {r.rule})" for r in replaced[:limit]]
    if len(replaced) > limit:
        lines.append(f"  ... and {len(replaced) - limit} more")
    return "\n".join(lines)
