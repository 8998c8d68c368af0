"""The machine-wide cache of the pinned llama-cpp-python wheel (used by the Makefile).

Compiling llama.cpp takes minutes on 2 cores, so the wheel built with the pinned CMake
arguments is kept outside the virtualenv, one folder per version and argument set. A folder is
taken only when its manifest records exactly these arguments and the wheel's sha256: a wheel
built with other flags (another instruction set writes other bytes) is never installed.

    python scripts/llama_wheel.py check  DIR 'CMAKE ARGS'  # exit 0: DIR holds a good wheel
    python scripts/llama_wheel.py record DIR 'CMAKE ARGS'  # DIR.tmp (from pip wheel) -> DIR
    python scripts/llama_wheel.py path   DIR 'CMAKE ARGS'  # the checked wheel's path
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

MANIFEST = "manifest.json"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def normalised(cmake_args: str) -> str:
    """The arguments as one space-separated line (the Makefile's continuation lines vary)."""
    return " ".join(cmake_args.split())


def checked_wheel(folder: Path, cmake_args: str) -> tuple[Path | None, str]:
    """The folder's wheel if its manifest matches these arguments and its bytes, else a reason."""
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        return None, f"no cached wheel in {folder}"
    try:
        manifest = json.loads(manifest_path.read_text())
        wheel = folder / manifest["wheel"]
        recorded_args, recorded_sha = manifest["cmake_args"], manifest["sha256"]
    except (ValueError, KeyError, TypeError) as error:
        return None, f"{manifest_path}: unreadable manifest ({error})"
    if recorded_args != normalised(cmake_args):
        return None, f"{manifest_path}: built with other CMake arguments"
    if not wheel.is_file() or sha256(wheel) != recorded_sha:
        return None, f"{wheel}: missing or not the recorded bytes"
    return wheel, "ok"


def record(folder: Path, cmake_args: str) -> None:
    """Write the manifest of the wheel pip built in FOLDER.tmp and move it to FOLDER."""
    staging = folder.with_name(folder.name + ".tmp")
    wheels = sorted(staging.glob("llama_cpp_python-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"{staging}: expected one llama_cpp_python wheel, found {len(wheels)}")
    manifest = {
        "wheel": wheels[0].name,
        "sha256": sha256(wheels[0]),
        "cmake_args": normalised(cmake_args),
    }
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    if folder.exists():
        shutil.rmtree(folder)
    staging.rename(folder)


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in {"check", "record", "path"}:
        print(__doc__, file=sys.stderr)
        return 2
    command, folder, cmake_args = argv[0], Path(argv[1]), argv[2]
    if command == "record":
        record(folder, cmake_args)
        return 0
    wheel, reason = checked_wheel(folder, cmake_args)
    if wheel is None:
        print(f"llama.cpp wheel cache: {reason}; compiling", file=sys.stderr)
        return 1
    if command == "path":
        print(wheel)
    else:
        print(f"llama.cpp wheel cache: reusing {wheel.name} (flags and sha256 checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
