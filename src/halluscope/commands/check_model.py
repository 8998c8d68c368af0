"""``halluscope check-model``: load a model spec and answer two requests, before a long run.

Why: a spec that cannot work (a missing package, no chat template, weights that do not fit)
otherwise fails in the first job of a run, after the other stages; this loads the processor and
the weights, answers one caption request and one yes/no request about one image, and prints the
answers, the tokens per second and the peak memory, in about a minute.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from halluscope.hand_check import add_command
from halluscope.io import InputError

CAPTION = "Provide a brief description of the given image."
YES_NO = "Is there a person in the image? Answer yes or no."

FORMATS = (
    "  --spec      a model spec as YAML or JSON (inline, or a file), as under models: in params",
    "  --model     a model id of params.yaml merged with the OVERLAY profiles (e.g. "
    "config/profiles/paper.yaml), instead of --spec",
    "  --image     the image asked about (default: the demo's astronaut photograph)",
    "  output      the spec's identity, the load time, each answer with its meta, tokens per "
    "second, peak memory (GPU when the model is on CUDA, else the process's resident set)",
)


def add_parser(sub) -> None:
    parser = add_command(
        sub,
        "check-model",
        run,
        help_text="load a model, answer a caption and a yes/no request: speed, memory",
        description=__doc__.split("\n\n")[0],
        formats=FORMATS,
        example=(
            "  halluscope check-model --spec '{backend: hf, model: llava-hf/llava-1.5-7b-hf, "
            "kind: image-text-to-text}'",
            "  halluscope check-model --model llava-1.5-7b config/profiles/paper.yaml",
        ),
        optional_inputs=("--image",),
    )
    parser.add_argument("overlays", metavar="OVERLAY", type=Path, nargs="*")
    parser.add_argument("--spec", help="a model spec (YAML/JSON mapping, inline or a file)")
    parser.add_argument("--model", help="a model id of params.yaml and the overlays")
    parser.add_argument("--params", type=Path, default=Path("params.yaml"))
    parser.add_argument("--image", type=Path, default=None)
    parser.add_argument("--max-new-tokens", type=int, default=32)


def model_spec(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The (model id, spec) asked for: ``--spec`` or ``--model`` of params + overlays."""
    import yaml

    if (args.spec is None) == (args.model is None):
        raise InputError("check-model: give exactly one of --spec and --model")
    if args.spec is not None:
        text = args.spec
        path = Path(text)
        if "\n" not in text and len(text) < 4096 and path.is_file():
            text = path.read_text(encoding="utf-8")
        spec = yaml.safe_load(text)
        if not isinstance(spec, dict):
            raise InputError(f"check-model: --spec is not a mapping: {args.spec!r}")
        return str(spec.get("name") or spec.get("model") or "model"), spec
    from halluscope.config import load_with_overlays

    config = load_with_overlays(args.params, args.overlays)
    models = config.get("models", {})
    if args.model not in models:
        raise InputError(
            f"check-model: no model {args.model!r} in {args.params} + overlays; models: "
            f"{', '.join(sorted(models))}"
        )
    return args.model, dict(models[args.model])


def _image(args: argparse.Namespace, folder: Path) -> Path:
    if args.image is not None:
        return args.image
    from halluscope.data.demo import encode_png, load_demo_image

    path = folder / "astronaut.png"
    path.write_bytes(encode_png(load_demo_image("astronaut")))
    return path


def _peak_memory(backend: Any) -> str:
    """GPU peak when the model is on CUDA, else the process's peak resident set."""
    device = getattr(backend, "_device", None)
    if device is not None and getattr(device, "type", "") == "cuda":
        import torch

        return f"{torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB (GPU, peak allocated)"
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return f"{peak / 2**20:.2f} GiB (process resident set, peak)"


def run(args: argparse.Namespace) -> None:
    import hashlib

    from halluscope.models import Request, make_backend, user_message
    from halluscope.models.base import check_spec

    model_id, spec = model_spec(args)
    check_spec(spec, model_id)  # a missing package is named before the weights load
    with tempfile.TemporaryDirectory() as folder:
        image = _image(args, Path(folder))
        digest = hashlib.sha256(image.read_bytes()).hexdigest()
        backend = make_backend(spec, model_name=model_id)
        started = time.perf_counter()
        if hasattr(backend, "_load"):
            backend._load()
        loaded = time.perf_counter() - started
        print(f"{model_id}: {json.dumps(backend.identity, sort_keys=True)}")
        print(f"loaded in {loaded:.1f} s", end="")
        if hasattr(backend, "_format"):
            print(f"; prompt format {backend._format}, padding {backend.padding_side}", end="")
        print()
        params = {"seed": 0, "max_new_tokens": args.max_new_tokens, "temperature": 0.0}
        tokens = 0
        seconds = 0.0
        for task, prompt in (("caption", CAPTION), ("yes/no", YES_NO)):
            request = Request(
                request_id=f"check-model/{task}",
                image_id=image.stem,
                image_path=str(image),
                image_sha256=digest,
                messages=(user_message(prompt),),
                params=params,
                task="caption" if task == "caption" else "yes-no",
            )
            started = time.perf_counter()
            (response,) = backend.generate([request])
            seconds += time.perf_counter() - started
            tokens += int(response.meta.get("new_tokens", 0))
            print(f"{task}: {response.text!r} {json.dumps(response.meta, sort_keys=True)}")
        speed = tokens / seconds if seconds > 0 else 0.0
        print(f"{tokens} new tokens in {seconds:.2f} s: {speed:.1f} tokens/s")
        print(f"peak memory: {_peak_memory(backend)}")
    sys.stdout.flush()
