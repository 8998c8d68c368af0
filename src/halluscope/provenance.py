"""Outputs replaced outside Snakemake: found before the DAG is built, and rebuilt.

Why: Snakemake keys its metadata (params, code, when a job finished) by path. ``dvc checkout``,
``git checkout`` of tracked results or a copy from elsewhere replace the bytes under a path and
leave that record as it was, so a score built with ``caos.k=5`` passes as the ``k=3`` one
Snakemake remembers building, and tables rebuilt from it print ``top-3`` over ``k=5`` numbers.

Snakemake records, per output, the file's mtime when its job finished (``endtime``). A file
whose mtime is no longer that one was rewritten by something else; a file inside a
``directory()`` output that is newer than the directory's record likewise. The Snakefile hands
those outputs to Snakemake as *incomplete* (its own marker for "not the finished product of its
job"), with one line per path: with ``--rerun-incomplete`` (set in the workflow profile
``profiles/default``, and in every DVC stage command) the same invocation rebuilds them and
everything downstream with the current params, so numbers and labels agree again; without it,
Snakemake stops before any job and names the files and the flag.
"""

from __future__ import annotations

import json
import os
from base64 import urlsafe_b64encode
from dataclasses import dataclass
from pathlib import Path

METADATA = Path(".snakemake") / "metadata"
INCOMPLETE = Path(".snakemake") / "incomplete"
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


def replaced_outputs(roots: list[str], metadata: Path = METADATA) -> list[Replaced]:
    """Every file under ``roots`` (files or folders, relative to the working directory) that
    Snakemake built and that was replaced since: sorted by path."""
    cache: dict[str, dict | None] = {}
    found: list[Replaced] = []
    if not metadata.is_dir():
        return found
    for root in roots:
        for path in _files(Path(root)):
            text = path.as_posix()
            record = _record(metadata, text, cache)
            if record is not None:
                if _moved(path, record, exact=True):
                    found.append(Replaced(text, text, str(record.get("rule"))))
                continue
            for parent in path.parents:  # a file inside a directory() output
                if parent == Path("."):
                    break
                record = _record(metadata, parent.as_posix(), cache)
                if record is not None:
                    if _moved(path, record, exact=False):
                        found.append(Replaced(text, parent.as_posix(), str(record.get("rule"))))
                    break
    return sorted(found, key=lambda r: r.path)


def _files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    files = []
    for folder, _dirs, names in os.walk(root):
        files.extend(Path(folder) / n for n in names if not n.startswith("."))
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
