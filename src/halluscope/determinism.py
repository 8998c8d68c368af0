"""Pinned CPU kernels: the same bytes from every x86-64 CPU with AVX2 (x86-64-v3).

Why: floating-point model work (llama.cpp, torch/MKL/oneDNN for MiniLM) picks its SIMD kernels
per CPU. AVX-512 and AVX2 kernels sum in other orders, the low bits of a logit or an embedding
move, greedy decoding flips on a near-tie, and every file downstream differs from the committed
``dvc.lock``. So every pipeline process runs one instruction-set level, whatever CPU it is on:

- llama.cpp: compiled for that level (``LLAMA_CMAKE_ARGS`` of the Makefile's install step),
  never ``-march=native``; :func:`check_llama_build` refuses a build with other features.
- torch: ``ATEN_CPU_CAPABILITY`` caps ATen's vectorised kernels; ``MKL_CBWR=COMPATIBLE,STRICT``
  is MKL's conditional numerical reproducibility on the code path MKL runs on Intel and AMD
  alike (results independent of the thread count). Its ``AVX2`` branch is not enough: on a CPU
  that is not an Intel one MKL leaves it for small GEMMs, GEMV, dot products and its vector math
  (``exp``, ``erf``, ``log``), which ATen calls, and MiniLM's embeddings on an emulated AMD
  EPYC-Rome differed (``timings/replicate_on_other_cpu.sh``, tests/test_kernel_pinning.py).
  ``MKL_ENABLE_INSTRUCTIONS`` / ``ONEDNN_MAX_CPU_ISA`` cap MKL and oneDNN dispatch.
- numpy (CAOS cosines, pooled means): ``OPENBLAS_CORETYPE=Haswell`` fixes the kernels of its
  DYNAMIC_ARCH OpenBLAS (SkylakeX on an AVX-512 CPU otherwise), ``NPY_DISABLE_CPU_FEATURES``
  turns off numpy's own AVX-512 loops, ``OPENBLAS_NUM_THREADS=1`` one thread per job.

Set ``HALLUSCOPE_NATIVE_KERNELS=1`` to let each library pick its fastest kernels (outputs may
then differ from machine to machine; the provenance of each model artifact says which).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

#: The instruction-set level every pipeline process runs (x86-64-v3).
ISA_LEVEL = "x86-64-v3"

#: Environment that pins torch's, MKL's and oneDNN's kernel choice (read when each initialises:
#: set before the first tensor operation, as :func:`pin_kernels` does on ``import halluscope``).
KERNEL_ENV: dict[str, str] = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "COMPATIBLE,STRICT",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "DNNL_MAX_CPU_ISA": "AVX2",
    "OPENBLAS_CORETYPE": "Haswell",
    "OPENBLAS_NUM_THREADS": "1",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
}

#: CPU flags (``/proc/cpuinfo``) the pinned llama.cpp build executes.
REQUIRED_CPU_FLAGS = ("avx", "avx2", "fma", "f16c", "bmi2", "sse4_2")

NATIVE_ENV = "HALLUSCOPE_NATIVE_KERNELS"
THREADS_ENV = "HALLUSCOPE_TORCH_THREADS"
CMAKE_ARGS_FILE = Path(__file__).resolve().parents[2] / "Makefile"  # LLAMA_CMAKE_ARGS

#: ggml's names in ``llama_print_system_info()`` for the CMake options of the pinned build.
_GGML_FEATURE = {
    "GGML_SSE42": "SSE4_2",  # not printed by every ggml version: checked only when printed
    "GGML_AVX": "AVX",
    "GGML_AVX2": "AVX2",
    "GGML_F16C": "F16C",
    "GGML_FMA": "FMA",
    "GGML_BMI2": "BMI2",
    "GGML_AVX_VNNI": "AVX_VNNI",
    "GGML_AVX512": "AVX512",
    "GGML_AVX512_VBMI": "AVX512_VBMI",
    "GGML_AVX512_VNNI": "AVX512_VNNI",
    "GGML_AVX512_BF16": "AVX512_BF16",
    "GGML_AMX_INT8": "AMX_INT8",
    "GGML_LLAMAFILE": "LLAMAFILE",
    "GGML_OPENMP": "OPENMP",
}


class UnpinnedBuildError(RuntimeError):
    """The installed llama.cpp was not built with the pinned instruction set."""


def native_kernels() -> bool:
    return os.environ.get(NATIVE_ENV, "") not in ("", "0")


def pin_kernels(environ: dict[str, str] | None = None) -> None:
    """Pin torch/MKL/oneDNN to :data:`KERNEL_ENV` (overriding the caller's values), unless
    ``HALLUSCOPE_NATIVE_KERNELS`` is set."""
    environ = os.environ if environ is None else environ
    if environ.get(NATIVE_ENV, "") not in ("", "0"):
        return
    environ.update(KERNEL_ENV)
    if missing_cpu_flags():  # Haswell kernels would stop with an illegal instruction
        environ.pop("OPENBLAS_CORETYPE")


def pinned_cmake_options(path: Path = CMAKE_ARGS_FILE) -> dict[str, bool]:
    """``{"GGML_AVX2": True, ...}`` from the install step's pinned CMake arguments."""
    options = {}
    for name, value in re.findall(r"-D(GGML_\w+)=(ON|OFF)", path.read_text(encoding="utf-8")):
        options[name] = value == "ON"
    return options


def parse_system_info(text: str) -> dict[str, bool]:
    """``"CPU : SSE3 = 1 | AVX = 1 | ..."`` -> ``{"SSE3": True, "AVX": True, ...}``."""
    return {name: value == "1" for name, value in re.findall(r"(\w+) = ([01])\b", text)}


def build_mismatches(features: dict[str, bool], options: dict[str, bool]) -> list[str]:
    """Each feature whose state in the build differs from the pinned option, as ``NAME = 1
    (pinned OFF)``; features the build does not print are not checked."""
    wrong = []
    for option, feature in _GGML_FEATURE.items():
        if option in options and feature in features and features[feature] != options[option]:
            state = "1" if features[feature] else "0"
            wrong.append(f"{feature} = {state} (pinned {'ON' if options[option] else 'OFF'})")
    return wrong


@cache
def llama_build() -> dict[str, object]:
    """The installed llama.cpp build: version, printed CPU features, and whether it is pinned."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    features = parse_system_info(info)
    wrong = build_mismatches(features, pinned_cmake_options())
    return {
        "llama_cpp_python": llama_cpp.__version__,
        "isa": ISA_LEVEL if not wrong else "unpinned",
        "features": sorted(name for name, on in features.items() if on),
        "mismatches": wrong,
    }


def llama_provenance() -> dict[str, object]:
    """For an LLM artifact: the llama.cpp build and instruction set (version, level, compiled
    features; never the host CPU, so the bytes match on every machine that reproduces)."""
    return {k: v for k, v in llama_build().items() if k != "mismatches"}


def llm_provenance(spec: Mapping[str, Any]) -> dict[str, object] | None:
    """:func:`llama_provenance` for a ``llamacpp`` model spec, ``None`` for other backends."""
    return llama_provenance() if spec.get("backend") == "llamacpp" else None


def missing_cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> list[str]:
    """The :data:`REQUIRED_CPU_FLAGS` this CPU lacks ([] where /proc/cpuinfo is unreadable)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    match = re.search(r"^flags\s*:(.*)$", text, re.MULTILINE)
    flags = set(match.group(1).split()) if match else set(REQUIRED_CPU_FLAGS)
    return [f for f in REQUIRED_CPU_FLAGS if f not in flags]


def check_llama_build() -> dict[str, object]:
    """The build record for provenance; raises :class:`UnpinnedBuildError` for a build that
    is not the pinned one (e.g. ``-march=native`` on an AVX-512 CPU) unless native kernels are
    allowed, and for a CPU that cannot run the pinned level."""
    lacking = missing_cpu_flags()
    if lacking:
        raise UnpinnedBuildError(
            f"this CPU lacks {', '.join(lacking)}: the pinned llama.cpp build ({ISA_LEVEL}) "
            "cannot run here; results from such a machine cannot match the committed dvc.lock"
        )
    build = llama_build()
    if build["mismatches"] and not native_kernels():
        raise UnpinnedBuildError(
            "llama-cpp-python "
            f"{build['llama_cpp_python']} is not the pinned {ISA_LEVEL} build "
            f"({'; '.join(build['mismatches'])}; a natively tuned build?): its replies can "
            "differ from the committed dvc.lock. Rebuild it with `make install-llama`, or set "
            f"{NATIVE_ENV}=1 to use it anyway"
        )
    return build


def configure_torch() -> None:
    """One intra-op thread per job by default (Snakemake runs jobs side by side); under the MKL
    pin the bytes do not depend on it (tests/test_kernel_pinning.py), only the speed."""
    import torch

    torch.set_num_threads(max(1, int(os.environ.get(THREADS_ENV, "1") or 1)))


def torch_kernels() -> dict[str, object]:
    """The torch kernel settings in force (for provenance): version, ATen capability, pins."""
    import torch

    return {
        "torch": torch.__version__.split("+")[0],
        "aten_capability": torch.backends.cpu.get_cpu_capability().lower(),
        "pinned": not native_kernels(),
        "env": {k: os.environ.get(k, "") for k in sorted(KERNEL_ENV)},
    }
