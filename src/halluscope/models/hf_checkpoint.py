"""What the ``hf`` backend reads from a checkpoint without loading its weights.

The revision the identity records (a hub snapshot's commit, or a digest of a local directory),
the family (``config.json``'s ``model_type``), whether it is an encoder-decoder, whether it takes
a bare prompt, and the packages beyond the base install that its processor needs.

Packages: the base install has no torchvision, which the video processors of Qwen2/2.5/3-VL,
LLaVA-OneVision, InternVL and SmolVLM need to load (SmolVLM also num2words): ``make install-vlm``
adds them (``FAMILY_PACKAGES``). A family whose package is missing fails params validation (when
its ``config.json`` is local or cached) and its load with one line naming the family, the package
and that command. ``halluscope check-model`` answers two requests with a spec before a run.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from halluscope.models.base import register_spec_check

#: Families (``config.model_type``) whose processor places the image itself and whose checkpoints
#: take a bare prompt, with no chat template: ``auto`` picks ``plain`` for them.
PLAIN_PROMPT_FAMILIES = frozenset({"blip-2", "instructblip", "paligemma", "florence2"})
#: Packages beyond the base install that a family's processor imports on load (its video
#: processor: torchvision; SmolVLM's: num2words), by ``config.model_type``.
FAMILY_PACKAGES: Mapping[str, tuple[str, ...]] = {
    "llava_onevision": ("torchvision",),
    "llava_next_video": ("torchvision",),
    "qwen2_vl": ("torchvision",),
    "qwen2_5_vl": ("torchvision",),
    "qwen3_vl": ("torchvision",),
    "qwen3_vl_moe": ("torchvision",),
    "internvl": ("torchvision",),
    "smolvlm": ("torchvision", "num2words"),
}
INSTALL_VLM = "make install-vlm"
#: What ``make install-vlm`` installs (pyproject.toml's ``vlm`` extra).
VLM_EXTRA = ("torchvision", "num2words", "accelerate")

_SNAPSHOT = re.compile(r"(?:^|/)snapshots/([0-9a-f]{40})(?:/|$)")
# Files whose size (not content) enters the local-directory revision: hashing gigabytes of weights
# on every run would cost more than the generation of a small demo.
_WEIGHT_SUFFIXES = (
    ".safetensors",
    ".bin",
    ".pt",
    ".pth",
    ".ckpt",
    ".gguf",
    ".h5",
    ".msgpack",
    ".onnx",
    ".npz",
)


def local_dir_revision(path: str | Path) -> str:
    """A revision for a local model directory: snapshot hash if it is one, else a content digest."""
    root = Path(path).resolve()
    found = _SNAPSHOT.search(root.as_posix() + "/")
    if found:
        return found.group(1)
    digest = hashlib.sha256()
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    for file in files:
        rel = file.relative_to(root).as_posix()
        if file.name.endswith(_WEIGHT_SUFFIXES):
            part = f"size:{file.stat().st_size}"
        else:
            part = "sha256:" + hashlib.sha256(file.read_bytes()).hexdigest()
        digest.update(f"{rel}\0{part}\n".encode())
    return "local-" + digest.hexdigest()[:16]


def hub_revision(repo_id: str, revision: str | None) -> str:
    """The commit hash ``revision`` (or the default branch) of a hub repo points to.

    Fetches only ``config.json`` (served from the local cache when ``HF_HUB_OFFLINE=1``).
    """
    from huggingface_hub import hf_hub_download

    try:
        path = hf_hub_download(repo_id, "config.json", revision=revision)
    except Exception as err:  # offline without a cached copy, unknown repo, gated repo, ...
        raise RuntimeError(
            f"hf backend: cannot resolve model {repo_id!r} (revision {revision!r}) on the Hugging "
            f"Face hub or in its local cache: {type(err).__name__}: {err}. Give a local directory "
            "as 'model', or download the model first (without HF_HUB_OFFLINE=1)."
        ) from err
    found = _SNAPSHOT.search(Path(path).as_posix())
    if found:
        return found.group(1)
    if revision:
        return revision
    raise RuntimeError(f"hf backend: no commit hash for {repo_id!r} in the hub cache path {path}")


def is_encoder_decoder(config: Any) -> bool:
    """Whether a model config (or its text config: InstructBLIP/BLIP-2 with T5) is seq2seq."""
    if getattr(config, "is_encoder_decoder", False):
        return True
    text = getattr(config, "text_config", None)
    return bool(getattr(text, "is_encoder_decoder", False))


def model_type(source: str, load_kwargs: Mapping[str, Any]) -> str:
    import transformers

    try:
        return transformers.AutoConfig.from_pretrained(source, **load_kwargs).model_type
    except Exception:  # the config is read again, and its error shown, by the model load
        return "unknown family"


def _missing_package(err: ImportError) -> str:
    """The package an ImportError of transformers names (``requires the X library``,
    ``Package `x` is required``), else the error's module name or its first line."""
    text = str(err)
    found = re.search(r"requires the (\w+) library", text) or re.search(
        r"[Pp]ackage `([\w.-]+)` is required", text
    )
    if found:
        return found.group(1).lower()
    return err.name or text.strip().splitlines()[0]


def missing_package_message(model: str, family: str, err: ImportError | str) -> str:
    """One line: the family, the missing package, the command that installs it."""
    package = err if isinstance(err, str) else _missing_package(err)
    if package in VLM_EXTRA:
        command = f"`{INSTALL_VLM}` (pip install -e '.[vlm]')"
    else:  # not one the project pins: the user's own choice of version
        command = f"`pip install {package}`"
    return (
        f"hf backend: model {model!r} ({family}) needs the package {package}, which is not "
        f"installed: run {command} on this machine"
    )


def _local_config(model: str, revision: str | None) -> dict[str, Any] | None:
    """``config.json`` of a local directory or of a hub snapshot already cached, without any
    download (None when neither is there)."""
    path = Path(model).expanduser() / "config.json"
    if not path.is_file():
        if model.startswith(("/", "./", "../", "~")) or model.count("/") != 1:
            return None
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(model, "config.json", revision=revision)
        if not isinstance(cached, str):
            return None
        path = Path(cached)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@register_spec_check("hf")
def check_spec(spec: Mapping[str, Any], model_id: str) -> None:
    """Before any job: a model whose family needs a package this machine lacks (read from a
    local or cached ``config.json``; nothing is downloaded) fails params validation in one line."""
    model = spec.get("model")
    if not isinstance(model, str) or spec.get("kind") != "image-text-to-text":
        return
    config = _local_config(model, spec.get("revision"))
    family = (config or {}).get("model_type")
    for package in FAMILY_PACKAGES.get(family, ()):
        if importlib.util.find_spec(package) is None:
            raise ValueError(
                f"models.{model_id}: {missing_package_message(model, family, package)}"
            )
