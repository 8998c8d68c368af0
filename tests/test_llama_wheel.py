"""The machine-wide llama.cpp wheel cache (scripts/llama_wheel.py): a kept wheel is reused only
when it was built with exactly the Makefile's CMake arguments and still has its recorded bytes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "llama_wheel.py"
ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF"


def wheel_cache(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True)


def built(folder: Path, args: str = ARGS) -> Path:
    """What `pip wheel -w <folder>.tmp` leaves, then recorded as the Makefile does."""
    staging = folder.with_name(folder.name + ".tmp")
    staging.mkdir(parents=True)
    (staging / "llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl").write_bytes(b"wheel bytes")
    assert wheel_cache("record", str(folder), args).returncode == 0
    return folder


def test_a_recorded_wheel_is_reused_with_the_same_flags(tmp_path: Path) -> None:
    folder = built(tmp_path / "0.3.36-123")
    assert not folder.with_name(folder.name + ".tmp").exists()
    # the Makefile's continuation lines give other spacing: the same arguments
    proc = wheel_cache("path", str(folder), ARGS.replace(" ", "  \n "))
    assert proc.returncode == 0 and proc.stdout.strip().endswith(".whl")
    assert "reusing" in wheel_cache("check", str(folder), ARGS).stdout


def test_a_wheel_built_with_other_flags_is_never_taken(tmp_path: Path) -> None:
    folder = built(tmp_path / "0.3.36-123", args=ARGS.replace("AVX512=OFF", "AVX512=ON"))
    proc = wheel_cache("check", str(folder), ARGS)
    assert proc.returncode == 1 and "built with other CMake arguments" in proc.stderr


def test_a_changed_or_missing_wheel_is_rebuilt(tmp_path: Path) -> None:
    folder = built(tmp_path / "0.3.36-123")
    wheel = next(folder.glob("*.whl"))
    wheel.write_bytes(b"other bytes")
    proc = wheel_cache("check", str(folder), ARGS)
    assert proc.returncode == 1 and "not the recorded bytes" in proc.stderr
    wheel.unlink()
    assert wheel_cache("check", str(folder), ARGS).returncode == 1
    assert "no cached wheel" in wheel_cache("check", str(tmp_path / "none"), ARGS).stderr


def test_the_makefile_keys_the_cache_by_version_and_flags() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(
        r"^LLAMA_KEY := \$\(LLAMA_CPP_VERSION\)-\$\(shell echo '\$\(LLAMA_CMAKE_ARGS\)'",
        makefile,
        re.M,
    )
    assert "scripts/llama_wheel.py check" in makefile and "--no-binary llama-cpp-python" in makefile
