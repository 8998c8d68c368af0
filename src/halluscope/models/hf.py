"""The ``hf`` backend: Hugging Face transformers models, in-process, on CPU or GPU.

Why in-process transformers: the open LVLMs the papers evaluate (LLaVA-1.5, InstructBLIP, Qwen2-VL,
Idefics...) ship as transformers checkpoints; loading them directly gives exact control over the
prompt (the checkpoint's own chat template), the decoding and the revision, which the response
cache needs to key answers reliably.

Spec (a ``params.yaml`` model entry)::

    {backend: hf, model: llava-hf/llava-1.5-7b-hf, kind: image-text-to-text,
     revision: <commit or branch>, dtype: auto, device: auto, batch_size: 8}

- ``model``: a hub id or a local directory saved with ``save_pretrained``.
- ``kind``: ``image-text-to-text`` (``AutoProcessor`` + ``AutoModelForImageTextToText``) or
  ``causal-lm`` (text only: ``AutoTokenizer`` + ``AutoModelForCausalLM``, for the LLM stages).
- ``dtype``: ``auto`` (bfloat16 on a GPU that supports it, else float16; float32 on CPU),
  ``float32``, ``bfloat16``, ``float16``. ``device``: ``auto`` (CUDA when available, else CPU),
  ``cpu``, ``cuda`` or ``cuda:N``. ``batch_size``: the largest batch sent to ``generate``; a
  batch that raises ``torch.cuda.OutOfMemoryError`` is halved and retried (the answers do not
  change, see below), and the size that fit is kept for the run and logged once.
- ``prompt_format``: ``auto`` (default: ``chat`` when the checkpoint has a chat template or
  ``chat_template`` is given here, ``plain`` for the families known to take a bare prompt:
  BLIP-2, InstructBLIP, PaliGemma, Florence-2; otherwise an error naming the key to set),
  ``chat`` (the chat template) or ``plain`` (the message texts joined by newlines; the processor
  adds its own image tokens).
- ``name``: the model name written in responses (default: the ``params.yaml`` model id, passed as
  the ``model_name`` context, else ``model``).

Prompts: in ``chat`` format each message becomes ``{"role", "content": [{"type": "text", ...}]}``
for image-text-to-text models (plain strings for causal LMs); a request's image is put first in the
first user message (``{"type": "image"}``), as the LVLM chat templates expect.

Generation (``Request.params``): ``max_new_tokens`` (default 128), ``temperature`` (0 = greedy,
default), ``top_p`` (default 1.0) and ``top_k`` (default 0 = off) when sampling, optional
``repetition_penalty``, and ``seed`` (default 0). Requests are grouped by these parameters (and by
whether they carry an image) and split into batches of at most ``batch_size``. A batch is padded
on the side that keeps every real token where it is when the request is alone: on the LEFT for
decoder-only models (they continue from the last position; position ids follow the attention
mask), on the RIGHT for encoder-decoders (InstructBLIP/BLIP-2 with Flan-T5, Florence-2: the
processor puts the image tokens first, and left pads between image and text would move the text,
which T5's relative and BART's absolute positions both see); InstructBLIP's Q-Former text is
right-padded too. ``torch.manual_seed(seed)`` is called before every batch.

The guarantee, tested for every family in ``tests/test_model_families.py`` (tiny random
checkpoints, float32 on CPU): at batch size 1 and 4, with prompts of different lengths, greedy
answers are the same tokens and the first-token logits differ by at most ``BATCH_LOGIT_ATOL``
(1e-4; what is seen is about 1e-6). Not promised: bf16/fp16 on a GPU, where kernels may reduce in
another order for another batch shape, so a greedy near-tie can flip (compare a few answers at
batch 1 with ``halluscope check-model`` if that matters); and *sampled* answers, which also depend
on the other requests of their batch (they share the random stream). The cache key does not record
batch composition.

Decoding settings not given in ``params`` come from the checkpoint's ``generation_config``
(pinned by the revision). Only the new tokens are decoded (special tokens skipped, surrounding
whitespace stripped). ``meta``: ``new_tokens`` counts the
generated tokens up to and including the first eos (never the prompt, nor an encoder-decoder's
decoder start token), ``finish_reason`` is ``stop`` when the model ended the answer and ``length``
when ``max_new_tokens`` cut it.

Identity (the cache key's model part): ``{"backend": "hf", "name": model, "revision": ...}`` where
the revision is the commit hash of the hub snapshot (resolved from ``revision``, a branch or tag,
or the default branch; also found in a local path inside a hub cache ``snapshots/<hash>/``), else,
for any other local directory, ``local-`` + sha256 over the file names with the contents of the
small files (configs, tokenizer, templates) and the sizes of the weight files. ``prompt_format``
and a ``chat_template`` override are added when set because they change the answers. The identity
needs neither torch nor the weights, so a fully cached run never loads the model.

Images are read once, checked against ``Request.image_sha256`` (so the cached answer belongs to the
pixels that were used), and opened with PIL under its default decompression-bomb limit
(``Image.MAX_IMAGE_PIXELS``); missing, corrupt, mismatching or oversized images raise an error that
names the path. An image-text-to-text request that names an ``image_id`` but has no image file is
refused rather than answered from the text alone, unless ``meta["text_only"]`` says it has none by
design (HallusionBench's questions without a figure); a causal-lm refuses requests with an image.
Packages some families need beyond the base install (``make install-vlm``): ``hf_checkpoint``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import logging
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from halluscope.models.base import Request, Response, register_backend
from halluscope.models.hf_checkpoint import (  # re-exported: the backend's public names
    FAMILY_PACKAGES,
    INSTALL_VLM,
    PLAIN_PROMPT_FAMILIES,
    VLM_EXTRA,
    check_spec,
    hub_revision,
    is_encoder_decoder,
    local_dir_revision,
    missing_package_message,
    model_type,
)
from halluscope.models.hf_generation import (
    DEFAULT_MAX_NEW_TOKENS,
    answer_meta,
    generation_settings,
    token_ids,
)

logger = logging.getLogger(__name__)
__all__ = ["BATCH_LOGIT_ATOL", "DEFAULT_MAX_NEW_TOKENS", "FAMILY_PACKAGES", "INSTALL_VLM"]
__all__ += ["PLAIN_PROMPT_FAMILIES", "VLM_EXTRA", "HFBackend", "answer_meta", "check_spec"]
__all__ += ["from_spec", "generation_settings", "hub_revision", "is_encoder_decoder"]
__all__ += ["load_image", "local_dir_revision", "missing_package_message", "model_type"]

KINDS = ("image-text-to-text", "causal-lm")
DTYPES = ("auto", "float32", "bfloat16", "float16")
PROMPT_FORMATS = ("auto", "chat", "plain")
SPEC_KEYS = frozenset(
    {
        "backend",
        "model",
        "revision",
        "kind",
        "dtype",
        "device",
        "batch_size",
        "prompt_format",
        "chat_template",
        "name",
    }
)
#: The first-token logit difference between batch size 1 and 4 that the family tests allow
#: (float32, CPU; see the module docstring).
BATCH_LOGIT_ATOL = 1e-4

_DEVICE = re.compile(r"^(auto|cpu|cuda|cuda:\d+)$")


# ----------------------------------------------------------------------------------------------
# Images


def load_image(path: str | Path | None, sha256: str | None = None, request_id: str = "?") -> Any:
    """Open an image as RGB; refuse missing, corrupt, mismatching or decompression-bomb files."""
    from PIL import Image, UnidentifiedImageError

    if path is None:
        raise ValueError(f"request {request_id!r} has an image hash but no image path")
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"image {str(path)!r} of request {request_id!r} does not exist"
        ) from None
    except OSError as err:
        raise OSError(f"image {str(path)!r} of request {request_id!r}: cannot read: {err}") from err
    if sha256 and hashlib.sha256(data).hexdigest() != sha256.lower():
        raise ValueError(
            f"image {str(path)!r} of request {request_id!r} does not match its sha256 {sha256}; "
            "the file changed after the items were written: rebuild the data stage"
        )
    try:
        with warnings.catch_warnings():
            # PIL only warns between 1x and 2x MAX_IMAGE_PIXELS: refuse those images too
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                image.load()
                return image.convert("RGB")
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as err:
        raise ValueError(
            f"image {str(path)!r} of request {request_id!r} refused as a possible decompression "
            f"bomb ({err}); PIL's limit is Image.MAX_IMAGE_PIXELS = {Image.MAX_IMAGE_PIXELS}"
        ) from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as err:
        raise ValueError(
            f"image {str(path)!r} of request {request_id!r} is not a readable image: {err}"
        ) from None


# ----------------------------------------------------------------------------------------------
# The backend


class HFBackend:
    """A transformers model answering :class:`Request` batches (see the module docstring)."""

    def __init__(
        self,
        model: str,
        kind: str,
        revision: str | None = None,
        dtype: str = "auto",
        device: str = "auto",
        batch_size: int = 8,
        prompt_format: str = "auto",
        chat_template: str | None = None,
        name: str | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(
                f"hf backend: unknown kind {kind!r} for model {model!r}; valid kinds: "
                f"{', '.join(KINDS)}"
            )
        if dtype not in DTYPES:
            raise ValueError(f"hf backend: unknown dtype {dtype!r}; valid: {', '.join(DTYPES)}")
        if not isinstance(device, str) or not _DEVICE.match(device):
            raise ValueError(
                f"hf backend: unknown device {device!r}; valid: auto, cpu, cuda, cuda:N"
            )
        if prompt_format not in PROMPT_FORMATS:
            raise ValueError(
                f"hf backend: unknown prompt_format {prompt_format!r}; valid: "
                f"{', '.join(PROMPT_FORMATS)}"
            )
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(
                f"hf backend: batch_size must be a positive integer, got {batch_size!r}"
            )
        self.model_id = model
        self.kind = kind
        self.requested_revision = revision
        self.dtype_name = dtype
        self.device_name = device
        self.batch_size = batch_size
        self.prompt_format = prompt_format
        self.chat_template = chat_template
        self.name = name or model
        self._identity: dict[str, Any] | None = None
        self._model: Any = None
        self._processor: Any = None  # AutoProcessor (image-text-to-text) or tokenizer (causal-lm)
        self._device: Any = None
        self._encoder_decoder = False
        self._fits: int | None = None  # the batch size that fits, once one ran out of memory
        self._halved = False
        self._format = prompt_format if prompt_format != "auto" else "chat"

    # -- identity -------------------------------------------------------------------------------

    @property
    def is_local(self) -> bool:
        """Whether ``model`` names a local directory (otherwise a hub id)."""
        return Path(self.model_id).expanduser().is_dir()

    @property
    def identity(self) -> dict:
        """Model id + exact revision (computed once, without torch or the weights)."""
        if self._identity is None:
            if self.is_local:
                revision = local_dir_revision(Path(self.model_id).expanduser())
            elif self.model_id.startswith(("/", "./", "../", "~")):
                raise FileNotFoundError(
                    f"hf backend: model directory {self.model_id!r} does not exist"
                )
            else:
                revision = hub_revision(self.model_id, self.requested_revision)
            identity: dict[str, Any] = {
                "backend": "hf",
                "name": self.model_id,
                "revision": revision,
            }
            if self.prompt_format not in ("auto", "chat"):
                # auto is decided by the checkpoint files, which the revision already pins
                identity["prompt_format"] = self.prompt_format
            if self.chat_template is not None:
                identity["chat_template_sha256"] = hashlib.sha256(
                    self.chat_template.encode("utf-8")
                ).hexdigest()
            self._identity = identity
        return dict(self._identity)

    # -- loading --------------------------------------------------------------------------------

    def _resolve_device_dtype(self) -> tuple[Any, Any]:
        import torch

        cuda = torch.cuda.is_available()
        if self.device_name == "auto":
            device = torch.device("cuda" if cuda else "cpu")
        else:
            device = torch.device(self.device_name)
            if device.type == "cuda" and not cuda:
                raise RuntimeError(
                    f"hf backend: device {self.device_name!r} asked for model {self.model_id!r} "
                    "but CUDA is not available; use device 'auto' or 'cpu'"
                )
        if self.dtype_name != "auto":
            dtype = getattr(torch, self.dtype_name)
        elif device.type == "cuda":
            dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        else:
            dtype = torch.float32
        return device, dtype

    def _load(self) -> None:
        """Load processor/tokenizer and weights on first use (cache hits never get here)."""
        if self._model is not None:
            return
        import transformers

        revision = self.identity["revision"]
        load_kwargs: dict[str, Any] = {} if self.is_local else {"revision": revision}
        source = str(Path(self.model_id).expanduser()) if self.is_local else self.model_id
        device, dtype = self._resolve_device_dtype()
        if self.kind == "image-text-to-text":
            try:
                processor = transformers.AutoProcessor.from_pretrained(source, **load_kwargs)
            except ImportError as err:
                family = model_type(source, load_kwargs)
                raise RuntimeError(missing_package_message(self.model_id, family, err)) from None
            tokenizer = processor.tokenizer
            model_class = transformers.AutoModelForImageTextToText
        else:
            processor = tokenizer = transformers.AutoTokenizer.from_pretrained(
                source, **load_kwargs
            )
            model_class = transformers.AutoModelForCausalLM
        config = transformers.AutoConfig.from_pretrained(source, **load_kwargs)
        self._encoder_decoder = is_encoder_decoder(config)
        side = self.padding_side
        tokenizer.padding_side = side
        if hasattr(processor, "padding_side"):
            processor.padding_side = side
        qformer_tokenizer = getattr(processor, "qformer_tokenizer", None)
        if qformer_tokenizer is not None:
            # InstructBLIP's Q-Former is a BERT (absolute positions): right padding keeps them.
            qformer_tokenizer.padding_side = "right"
        if tokenizer.pad_token_id is None:
            if tokenizer.eos_token is None:
                raise ValueError(
                    f"hf backend: the tokenizer of {self.model_id!r} has neither a pad nor an eos "
                    "token, so batches cannot be padded"
                )
            tokenizer.pad_token = tokenizer.eos_token
        self._format = self._resolve_prompt_format(processor, config)
        if device.type == "cuda" and importlib.util.find_spec("accelerate") is not None:
            # Straight onto the GPU; without accelerate transformers refuses a device_map, so the
            # weights go through CPU memory first.
            load_kwargs["device_map"] = str(device)
        try:
            model = model_class.from_pretrained(source, dtype=dtype, **load_kwargs)
        except ImportError as err:  # a modeling file that imports an optional package
            raise RuntimeError(
                missing_package_message(self.model_id, config.model_type, err)
            ) from None
        model.to(device)
        model.eval()
        self._model, self._processor, self._device = model, processor, device

    def _resolve_prompt_format(self, processor: Any, config: Any) -> str:
        """``chat`` when a chat template is there (the checkpoint's or the spec's), ``plain`` for
        the families known to take a bare prompt; otherwise one line naming the key to set."""
        has_template = self.chat_template is not None or bool(
            getattr(processor, "chat_template", None)
        )
        if self.prompt_format == "plain" or (self.prompt_format == "chat" and has_template):
            return self.prompt_format
        family = getattr(config, "model_type", None) or "unknown family"
        if self.prompt_format == "auto":
            if has_template:
                return "chat"
            if family in PLAIN_PROMPT_FAMILIES and self.kind == "image-text-to-text":
                return "plain"
        raise ValueError(
            f"hf backend: {self.model_id!r} ({family}) has no chat template; set 'chat_template' "
            "in the model spec, or 'prompt_format: plain' if the checkpoint takes a bare prompt "
            f"(as {', '.join(sorted(PLAIN_PROMPT_FAMILIES))} do, chosen by default)"
        )

    @property
    def padding_side(self) -> str:
        """``left`` for decoder-only models, ``right`` for encoder-decoders (known after load).

        Why: a decoder-only model continues from the last position, so its pads go first (its
        position ids come from the attention mask); an encoder reads the whole prompt at once, so
        right pads leave every real token where it is alone. Left pads would shift the text away
        from the image tokens the processor puts first (T5's relative and BART's absolute
        positions), which changed answers with the batch size.
        """
        return "right" if self._encoder_decoder else "left"

    @property
    def tokenizer(self) -> Any:
        """The loaded tokenizer (loads the model if needed)."""
        self._load()
        return getattr(self._processor, "tokenizer", self._processor)

    @property
    def processor(self) -> Any:
        """The loaded processor (image-text-to-text) or tokenizer (causal-lm)."""
        self._load()
        return self._processor

    # -- prompts --------------------------------------------------------------------------------

    def _conversation(self, request: Request, image: Any) -> list[dict[str, Any]]:
        """Chat messages for the template; the image goes first in the first user message."""
        if self.kind == "causal-lm":
            return [dict(m) for m in request.messages]
        messages: list[dict[str, Any]] = []
        placed = image is None
        for message in request.messages:
            content: list[dict[str, Any]] = [{"type": "text", "text": message["content"]}]
            if not placed and message["role"] == "user":
                content.insert(0, {"type": "image", "image": image})
                placed = True
            messages.append({"role": message["role"], "content": content})
        if not placed:
            raise ValueError(f"request {request.request_id!r} has an image but no user message")
        return messages

    def _encode(self, requests: Sequence[Request], images: Sequence[Any]) -> Any:
        """Tokenize one batch (padded on :attr:`padding_side`) as PyTorch tensors."""
        processor = self._processor
        has_images = images[0] is not None
        if self._format == "plain":
            texts = ["\n".join(m["content"] for m in r.messages) for r in requests]
            if self.kind == "image-text-to-text":
                return processor(
                    images=list(images) if has_images else None,
                    text=texts,
                    padding=True,
                    return_tensors="pt",
                )
            return processor(texts, padding=True, return_tensors="pt")
        conversations = [self._conversation(r, im) for r, im in zip(requests, images, strict=True)]
        template = {"chat_template": self.chat_template} if self.chat_template else {}
        if self.kind == "image-text-to-text":
            return processor.apply_chat_template(
                conversations,
                add_generation_prompt=True,
                tokenize=True,
                return_dict=True,
                return_tensors="pt",
                processor_kwargs={"padding": True, "padding_side": self.padding_side},
                **template,
            )
        return processor.apply_chat_template(
            conversations,
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            padding=True,
            return_tensors="pt",
            **template,
        )

    # -- generation -----------------------------------------------------------------------------

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        """Answer ``requests`` in order (grouped and batched inside, see the module docstring)."""
        if not requests:
            return []
        settings = [generation_settings(r.params) for r in requests]
        images: list[Any] = []
        for request in requests:
            if self.kind == "causal-lm" and (request.image_path or request.image_sha256):
                raise ValueError(
                    f"hf backend: request {request.request_id!r} has an image but model "
                    f"{self.model_id!r} is a text-only causal-lm; use kind image-text-to-text"
                )
            missing = request.image_id and not request.image_path
            if self.kind == "image-text-to-text" and missing and not request.meta.get("text_only"):
                # Answering without the pixels would silently measure a text-only model.
                raise ValueError(
                    f"hf backend: request {request.request_id!r} names image "
                    f"{request.image_id!r} but has no image file (image_path is empty)"
                )
            if request.image_path or request.image_sha256:
                images.append(
                    load_image(request.image_path, request.image_sha256, request.request_id)
                )
            else:
                images.append(None)
        self._load()
        import torch

        groups: dict[str, list[int]] = {}
        for index, (setting, image) in enumerate(zip(settings, images, strict=True)):
            key = repr((sorted(setting.items()), image is not None))
            groups.setdefault(key, []).append(index)
        results: list[Response | None] = [None] * len(requests)
        for indices in groups.values():
            start = 0
            while start < len(indices):
                size = self.batch_size if self._fits is None else min(self._fits, self.batch_size)
                chunk = indices[start : start + size]
                try:
                    answers = self._generate_batch(
                        [requests[i] for i in chunk], [images[i] for i in chunk], settings[chunk[0]]
                    )
                except torch.cuda.OutOfMemoryError:
                    if len(chunk) == 1:
                        raise
                    # The answers do not depend on the batch size (module docstring), so a
                    # smaller batch costs time only; the size that fits is kept for the run.
                    self._fits = len(chunk) // 2
                    self._halved = True
                    if torch.cuda.is_available():
                        torch.cuda.empty_cache()
                    continue
                if self._halved:
                    self._halved = False
                    logger.warning(
                        "hf backend: CUDA out of memory for %s at batch size %d; batch size %d "
                        "fits (set batch_size: %d in its spec to start there)",
                        self.model_id,
                        len(chunk) * 2,
                        len(chunk),
                        len(chunk),
                    )
                for i, answer in zip(chunk, answers, strict=True):
                    results[i] = answer
                start += len(chunk)
        return [r for r in results if r is not None]

    def _generate_batch(
        self, requests: Sequence[Request], images: Sequence[Any], settings: Mapping[str, Any]
    ) -> list[Response]:
        import torch
        from transformers import GenerationConfig

        model, tokenizer = self._model, self.tokenizer
        inputs = self._encode(requests, images).to(self._device)
        pixels = inputs.get("pixel_values")
        if pixels is not None and pixels.is_floating_point():
            inputs["pixel_values"] = pixels.to(model.dtype)  # processors return float32
        options = {k: v for k, v in settings.items() if k != "seed"}
        config = GenerationConfig(**options, pad_token_id=tokenizer.pad_token_id)
        defaults = model.generation_config
        eos_ids = token_ids(config.eos_token_id, defaults.eos_token_id, tokenizer.eos_token_id)
        # BART-style configs (Florence-2) force eos as the last token the limit allows.
        forced_ids = token_ids(config.forced_eos_token_id, defaults.forced_eos_token_id)
        torch.manual_seed(int(settings["seed"]))
        with torch.inference_mode():
            output = model.generate(**inputs, generation_config=config)
        new_tokens = self._answer_tokens(output, inputs["input_ids"])
        texts = tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
        responses = []
        identity = self.identity
        for request, row, text in zip(requests, new_tokens.tolist(), texts, strict=True):
            meta = answer_meta(row, eos_ids, int(settings["max_new_tokens"]), forced_ids)
            responses.append(
                Response(
                    request_id=request.request_id,
                    text=text.strip(),
                    model=self.name,
                    identity=dict(identity),
                    meta=meta,
                )
            )
        return responses

    def _answer_tokens(self, output: Any, prompt_ids: Any) -> Any:
        """The generated tokens of ``output`` without the prompt or the decoder start token.

        Decoder-only models return prompt + answer (a few multimodal ones only the answer); an
        encoder-decoder returns its decoder start token (T5: pad, BART/Florence-2: eos) + answer,
        and that start token was never generated.
        """
        import torch

        if self._encoder_decoder:
            return output[:, 1:]
        width = prompt_ids.shape[1]
        if output.shape[1] >= width and torch.equal(output[:, :width], prompt_ids):
            return output[:, width:]
        return output


@register_backend("hf")
def from_spec(spec: Mapping[str, Any], model_name: str | None = None, **_: Any) -> HFBackend:
    """Build an :class:`HFBackend` from a model spec (see the module docstring for the keys)."""
    unknown = sorted(set(spec) - SPEC_KEYS)
    if unknown:
        raise ValueError(
            f"hf backend: unknown key(s) {', '.join(map(repr, unknown))} in model spec "
            f"{dict(spec)!r}; valid keys: {', '.join(sorted(SPEC_KEYS))}"
        )
    model = spec.get("model")
    if not isinstance(model, str) or not model:
        raise ValueError(
            f"hf backend: the model spec needs 'model' (hub id or path): {dict(spec)!r}"
        )
    if "kind" not in spec:
        raise ValueError(
            f"hf backend: the model spec of {model!r} needs 'kind'; valid kinds: {', '.join(KINDS)}"
        )
    revision = spec.get("revision")
    return HFBackend(
        model=model,
        kind=spec["kind"],
        revision=str(revision) if revision is not None else None,
        dtype=spec.get("dtype", "auto"),
        device=spec.get("device", "auto"),
        batch_size=spec.get("batch_size", 8),
        prompt_format=spec.get("prompt_format", "auto"),
        chat_template=spec.get("chat_template"),
        name=spec.get("name") or model_name,
    )
