"""Tiny, randomly initialised transformers models built from configs (nothing downloaded).

A word-level tokenizer is trained on a small caption corpus; a tiny LLaVA (CLIP vision tower +
Llama) and a tiny Llama causal LM are saved with ``save_pretrained``, so a backend loads them from
disk like any checkpoint. Their answers are random words; every code path is the real one.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import transformers

CORPUS = """
a man in a white spacesuit holds a flag next to a helmet in front of a red wall
an astronaut is smiling at the camera while wearing a suit with patches
a small orange cat with green eyes lies on a wooden table near a window
two dogs run across a green field chasing a ball under a blue sky
a person sits on a bench in the park reading a book beside a bicycle
a plate of food with broccoli carrots and a fork sits on the dining table
a red car and a bus wait at the traffic light on a busy city street
a young woman holds an umbrella while walking her dog in the rain
a cup of coffee and a laptop are on the desk next to a potted plant
the train stops at the station where people carry bags and suitcases
a bird stands on the rocks by the water while boats float in the harbor
provide a brief description of the given image
generate a short caption of the image
create a short textual summary for the image
describe the image using minimal words but maximum impact
is there a cat in the image answer yes or no
question answer user assistant system
"""
SPECIALS = ["<pad>", "<unk>", "<s>", "</s>", "<image>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{{ m['role'].upper() }}: "
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>{{ '\\n' }}{% elif c['type'] == 'text' %}{{ c['text'] }}"
    "{% endif %}{% endfor %}{% endif %}{{ '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)


def tokenizer() -> transformers.PreTrainedTokenizerFast:
    """A word-level tokenizer trained on CORPUS (a few hundred words), with the LLaVA specials."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(
        CORPUS.split("\n"), trainers.WordLevelTrainer(special_tokens=SPECIALS, min_frequency=1)
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        extra_special_tokens={"image_token": "<image>"},
        chat_template=CHAT_TEMPLATE,
    )


def llama_config(tok: transformers.PreTrainedTokenizerFast) -> transformers.LlamaConfig:
    return transformers.LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )


def image_processor() -> object:
    """CLIP preprocessing at 30 px; the PIL variant avoids needing torchvision."""
    cls = getattr(transformers, "CLIPImageProcessorPil", None) or transformers.CLIPImageProcessor
    return cls(size={"shortest_edge": 30}, crop_size={"height": 30, "width": 30})


def build_llava(llava_dir: Path) -> None:
    """The tiny LLaVA-1.5: CLIP tower (30 px, 6 px patches: 25 image tokens) + Llama."""
    import torch

    tok = tokenizer()
    image_token_id = tok.convert_tokens_to_ids("<image>")

    torch.manual_seed(0)
    config = transformers.LlavaConfig(
        vision_config=transformers.CLIPVisionConfig(
            hidden_size=32,
            intermediate_size=37,
            num_hidden_layers=2,
            num_attention_heads=4,
            image_size=30,
            patch_size=6,
            projection_dim=32,
        ),
        text_config=llama_config(tok),
        image_token_id=image_token_id,
        vision_feature_select_strategy="default",
        vision_feature_layer=-2,
    )
    transformers.LlavaForConditionalGeneration(config).save_pretrained(llava_dir)
    processor = transformers.LlavaProcessor(
        image_processor=image_processor(),
        tokenizer=tok,
        patch_size=6,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,  # the CLS token, dropped again by the "default" strategy
        chat_template=CHAT_TEMPLATE,
    )
    processor.save_pretrained(llava_dir)


def build_tiny_models(root: Path) -> dict[str, Path]:
    """Save a tiny LLaVA (``llava``), a tiny causal LM (``lm``) and two demo PNGs under root."""
    import torch
    from PIL import Image
    from skimage import data

    build_llava(root / "tiny-llava")
    tok = tokenizer()
    torch.manual_seed(1)
    lm_dir = root / "tiny-lm"
    transformers.LlamaForCausalLM(llama_config(tok)).save_pretrained(lm_dir)
    tok.save_pretrained(lm_dir)

    images = {}
    for name, loader in (("astronaut", data.astronaut), ("chelsea", data.chelsea)):
        images[name] = root / f"{name}.png"
        Image.fromarray(loader()).save(images[name])
    return {"llava": root / "tiny-llava", "lm": lm_dir, **images}


# ----------------------------------------------------------------------------------------------
# The model-family matrix: one tiny checkpoint per common transformers VLM family, each with the
# family's real model and processor classes, its image processor (the PIL backend: torchvision
# cannot be installed beside the pinned CPU torch here) and a chat template of the family's format.

#: Spec keys and docs text are read from here by tests/test_model_families.py and docs/models.md.
VIDEO_STAND_IN = (
    "its video processor: torchvision cannot be installed beside the CPU torch here, so a "
    "stand-in that refuses videos replaces it (the image path is real)"
)
NUM2WORDS_STAND_IN = "num2words (video prompts only) is stood in for"


@dataclass(frozen=True)
class Family:
    """A VLM family of the matrix: how to build its tiny checkpoint and what the test covers."""

    name: str
    example: str  # a real checkpoint of the family, for the docs table
    build: Callable[[Path], None]
    spec: Mapping[str, Any] = field(default_factory=dict)  # keys the family needs in a spec
    encoder_decoder: bool = False
    plain: bool = False  # takes a bare prompt (no chat template): auto picks plain
    needs: tuple[str, ...] = ()  # packages beyond the base install its processor imports
    not_tested: str = ""  # which step this machine does not run, and why

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")


def family_tokenizer(
    specials: Sequence[str] = (),
    extra: Mapping[str, str] | None = None,
    chat_template: str | None = None,
) -> transformers.PreTrainedTokenizerFast:
    """The CORPUS word-level tokenizer with a family's special tokens (each one token)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    base = SPECIALS[:4]
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    words = base + [s for s in specials if s not in base]
    tok.train_from_iterator(
        CORPUS.split("\n"), trainers.WordLevelTrainer(special_tokens=words, min_frequency=1)
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        extra_special_tokens=dict(extra or {}),
        chat_template=chat_template,
    )


def chat_template(turn: str, image: str, generation: str, bos: str = "{{ bos_token }}") -> str:
    """A Jinja chat template: ``turn`` renders one message (``m``, its ``body``), ``image`` the
    image slot of a content list, ``generation`` the assistant prefix."""
    return (
        bos + "{% for m in messages %}{% set body %}{% if m['content'] is string %}"
        "{{ m['content'] }}{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}"
        + image
        + "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
        "{% endset %}"
        + turn
        + "{% endfor %}{% if add_generation_prompt %}"
        + generation
        + "{% endif %}"
    )


def chatml(image: str) -> str:
    """Qwen's ChatML (also LLaVA-OneVision and InternVL)."""
    return chat_template(
        "<|im_start|>{{ m['role'] }}\n{{ body }}<|im_end|>\n", image, "<|im_start|>assistant\n", ""
    )


MISTRAL_CHAT = chat_template(
    "{% if m['role'] == 'user' %}[INST] {{ body }} [/INST]{% else %}{{ body }}</s>{% endif %}",
    "<image>\n",
    "",
)
IDEFICS_CHAT = chat_template(
    "{{ m['role'] | capitalize }}:{{ body }}<end_of_utterance>\n", "<image>", "Assistant:"
)
GEMMA_CHAT = chat_template(
    "<start_of_turn>{{ 'model' if m['role'] == 'assistant' else m['role'] }}\n{{ body }}"
    "<end_of_turn>\n",
    "<start_of_image>",
    "<start_of_turn>model\n",
)
MLLAMA_CHAT = chat_template(
    "<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n{{ body }}<|eot_id|>",
    "<|image|>",
    "<|start_header_id|>assistant<|end_header_id|>\n\n",
)


def _no_video(real_class: str) -> Any:
    """A stand-in video processor named like the family's (so the saved config names the real
    class and loads it where torchvision is installed); refuses any video."""
    from transformers.video_processing_utils import VideoProcessorMixin

    def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{real_class} is stood in for here (no torchvision): no video input")

    attrs = {"__call__": refuse, "num_frames": 64, "fps": 1}
    return type(real_class, (VideoProcessorMixin,), attrs)()


@contextlib.contextmanager
def stand_ins() -> Iterator[None]:
    """Let the video families' processors build and load without torchvision (and SmolVLM's
    without num2words): their video parts are replaced, nothing on the image path is."""
    import importlib

    from transformers import processing_utils
    from transformers.models.smolvlm import processing_smolvlm
    from transformers.video_processing_utils import VideoProcessorMixin

    def no_words(number: int) -> str:
        raise RuntimeError("num2words is stood in for here: video prompts only")

    def load_video_processor(*args: Any, **kwargs: Any) -> Any:
        return _no_video("VideoProcessor")

    # the module itself (its lazy parent refuses the attribute without torchvision)
    video_processing_auto = importlib.import_module(
        "transformers.models.auto.video_processing_auto"
    )
    with contextlib.ExitStack() as stack:
        registry = processing_utils.transformers_module  # where processors look classes up
        if not hasattr(registry, "VideoProcessorMixin"):
            stack.enter_context(
                mock.patch.object(registry, "VideoProcessorMixin", VideoProcessorMixin, create=True)
            )
        if processing_smolvlm.num2words is None:
            stack.enter_context(mock.patch.object(processing_smolvlm, "num2words", no_words))
        stack.enter_context(
            mock.patch.object(
                video_processing_auto.AutoVideoProcessor, "from_pretrained", load_video_processor
            )
        )
        yield


def _clip(**overrides: Any) -> transformers.CLIPVisionConfig:
    sizes = dict(hidden_size=32, intermediate_size=37, num_hidden_layers=1, num_attention_heads=4)
    return transformers.CLIPVisionConfig(
        **{**sizes, "image_size": 32, "patch_size": 8, "projection_dim": 32, **overrides}
    )


def _siglip(**overrides: Any) -> transformers.SiglipVisionConfig:
    sizes = dict(hidden_size=32, intermediate_size=37, num_hidden_layers=1, num_attention_heads=4)
    return transformers.SiglipVisionConfig(
        **{**sizes, "image_size": 32, "patch_size": 8, **overrides}
    )


def _decoder(tok: transformers.PreTrainedTokenizerFast, **overrides: Any) -> dict[str, Any]:
    """Tiny decoder sizes shared by the Qwen-style text configs."""
    return dict(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        **overrides,
    )


def _t5(tok: transformers.PreTrainedTokenizerFast) -> transformers.T5Config:
    return transformers.T5Config(
        vocab_size=len(tok),
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_heads=4,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id,  # as Flan-T5
    )


def _opt(tok: transformers.PreTrainedTokenizerFast) -> transformers.OPTConfig:
    return transformers.OPTConfig(
        vocab_size=len(tok),
        hidden_size=32,
        ffn_dim=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        word_embed_proj_dim=32,
        max_position_embeddings=512,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )


def _save(directory: Path, model: Any, processor: Any) -> None:
    model.save_pretrained(directory)
    with stand_ins():
        processor.save_pretrained(directory)


def build_llava_next(directory: Path) -> None:
    tok = family_tokenizer(["<image>", "[INST]", "[/INST]"], extra={"image_token": "<image>"})
    pinpoints = [[32, 32], [32, 64], [64, 32]]
    config = transformers.LlavaNextConfig(
        vision_config=_clip(),
        text_config=llama_config(tok),
        image_token_index=tok.convert_tokens_to_ids("<image>"),
        image_grid_pinpoints=pinpoints,
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    images = transformers.LlavaNextImageProcessorPil(
        size={"shortest_edge": 32},
        crop_size={"height": 32, "width": 32},
        image_grid_pinpoints=pinpoints,
    )
    processor = transformers.LlavaNextProcessor(
        image_processor=images,
        tokenizer=tok,
        patch_size=8,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=MISTRAL_CHAT,
    )
    _save(directory, transformers.LlavaNextForConditionalGeneration(config), processor)


def build_llava_onevision(directory: Path) -> None:
    tok = family_tokenizer(
        ["<image>", "<video>", "<|im_start|>", "<|im_end|>"],
        extra={"image_token": "<image>", "video_token": "<video>"},
    )
    pinpoints = [[32, 32], [32, 64], [64, 32]]
    config = transformers.LlavaOnevisionConfig(
        vision_config=_siglip(),
        text_config=transformers.Qwen2Config(**_decoder(tok)),
        image_token_index=tok.convert_tokens_to_ids("<image>"),
        video_token_index=tok.convert_tokens_to_ids("<video>"),
        image_grid_pinpoints=pinpoints,
        vision_feature_select_strategy="full",
        vision_feature_layer=-1,
    )
    images = transformers.LlavaOnevisionImageProcessorPil(
        size={"height": 32, "width": 32}, image_grid_pinpoints=pinpoints
    )
    with stand_ins():
        processor = transformers.LlavaOnevisionProcessor(
            image_processor=images,
            tokenizer=tok,
            video_processor=_no_video("LlavaOnevisionVideoProcessor"),
            num_image_tokens=16,
            vision_feature_select_strategy="full",
            chat_template=chatml("<image>\n"),
        )
    _save(directory, transformers.LlavaOnevisionForConditionalGeneration(config), processor)


QWEN_SPECIALS = ["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>"]
QWEN_SPECIALS += ["<|image_pad|>", "<|video_pad|>"]


def build_qwen_vl(directory: Path, version: str) -> None:
    """Qwen2-VL, Qwen2.5-VL or Qwen3-VL (``version`` ``2``, ``2.5``, ``3``): M-RoPE, 8 px
    patches merged 2x2, so a 32 px image is 4 image tokens."""
    tok = family_tokenizer(QWEN_SPECIALS)
    names = {
        "image_token_id": "<|image_pad|>",
        "video_token_id": "<|video_pad|>",
        "vision_start_token_id": "<|vision_start|>",
        "vision_end_token_id": "<|vision_end|>",
    }
    ids = {key: tok.convert_tokens_to_ids(token) for key, token in names.items()}
    patches = dict(patch_size=8, spatial_merge_size=2, temporal_patch_size=2, num_heads=4)
    mrope = {"type": "mrope", "mrope_section": [2, 1, 1]}
    if version == "2":
        vision = dict(depth=1, embed_dim=32, hidden_size=32, **patches)
        config = transformers.Qwen2VLConfig(
            text_config=_decoder(tok, rope_scaling=mrope), vision_config=vision, **ids
        )
        model = transformers.Qwen2VLForConditionalGeneration(config)
        processor_class, video = transformers.Qwen2VLProcessor, "Qwen2VLVideoProcessor"
    elif version == "2.5":
        vision = dict(depth=2, hidden_size=32, intermediate_size=64, out_hidden_size=32, **patches)
        vision.update(window_size=16, fullatt_block_indexes=[1])
        config = transformers.Qwen2_5_VLConfig(
            text_config=_decoder(tok, rope_scaling=mrope), vision_config=vision, **ids
        )
        model = transformers.Qwen2_5_VLForConditionalGeneration(config)
        processor_class, video = transformers.Qwen2_5_VLProcessor, "Qwen2VLVideoProcessor"
    else:
        vision = dict(depth=2, hidden_size=32, intermediate_size=64, out_hidden_size=32, **patches)
        vision.update(num_position_embeddings=16, deepstack_visual_indexes=[0])
        rope = {"rope_type": "default", "mrope_section": [2, 1, 1], "mrope_interleaved": True}
        config = transformers.Qwen3VLConfig(
            text_config=_decoder(tok, head_dim=8, rope_scaling=rope), vision_config=vision, **ids
        )
        model = transformers.Qwen3VLForConditionalGeneration(config)
        processor_class, video = transformers.Qwen3VLProcessor, "Qwen3VLVideoProcessor"
    images = transformers.Qwen2VLImageProcessorPil(
        patch_size=8,
        merge_size=2,
        temporal_patch_size=2,
        size={"shortest_edge": 32 * 32, "longest_edge": 32 * 32},
    )
    with stand_ins():
        processor = processor_class(
            image_processor=images,
            tokenizer=tok,
            video_processor=_no_video(video),
            chat_template=chatml("<|vision_start|><|image_pad|><|vision_end|>"),
        )
    _save(directory, model, processor)


ROW_COL = [f"<row_{i + 1}_col_{j + 1}>" for i in range(6) for j in range(6)]
IDEFICS_SPECIALS = ["<image>", "<fake_token_around_image>", "<global-img>", "<end_of_utterance>"]


def build_idefics3(directory: Path, smol: bool = False) -> None:
    """Idefics3, or SmolVLM (``smol``): SigLIP-style tower, pixel shuffle 2: 4 image tokens."""
    tok = family_tokenizer(IDEFICS_SPECIALS + ROW_COL + (["<video>"] if smol else []))
    vision = dict(hidden_size=32, intermediate_size=37, num_hidden_layers=1, num_attention_heads=4)
    vision.update(image_size=32, patch_size=8)
    common = dict(vision_config=vision, text_config=llama_config(tok), scale_factor=2)
    common["image_token_id"] = tok.convert_tokens_to_ids("<image>")
    sizes = dict(
        do_image_splitting=False, size={"longest_edge": 32}, max_image_size={"longest_edge": 32}
    )
    if smol:
        model = transformers.SmolVLMForConditionalGeneration(transformers.SmolVLMConfig(**common))
        with stand_ins():
            processor = transformers.SmolVLMProcessor(
                image_processor=transformers.SmolVLMImageProcessorPil(**sizes),
                tokenizer=tok,
                video_processor=_no_video("SmolVLMVideoProcessor"),
                image_seq_len=4,
                chat_template=IDEFICS_CHAT,
            )
    else:
        model = transformers.Idefics3ForConditionalGeneration(transformers.Idefics3Config(**common))
        processor = transformers.Idefics3Processor(
            image_processor=transformers.Idefics3ImageProcessorPil(**sizes),
            tokenizer=tok,
            image_seq_len=4,
            chat_template=IDEFICS_CHAT,
        )
    _save(directory, model, processor)


def _gemma_text(cls: type, tok: transformers.PreTrainedTokenizerFast) -> Any:
    return cls(
        **_decoder(tok, head_dim=8),
        query_pre_attn_scalar=8,
        sliding_window=16,
    )


def build_gemma3(directory: Path) -> None:
    specials = ["<start_of_image>", "<end_of_image>", "<image_soft_token>"]
    tok = family_tokenizer(
        specials + ["<start_of_turn>", "<end_of_turn>"],
        extra={"boi_token": specials[0], "eoi_token": specials[1], "image_token": specials[2]},
    )
    config = transformers.Gemma3Config(
        text_config=_gemma_text(transformers.Gemma3TextConfig, tok),
        vision_config=_siglip(),
        mm_tokens_per_image=4,  # 16 patches pooled 2x2
        boi_token_index=tok.convert_tokens_to_ids(specials[0]),
        eoi_token_index=tok.convert_tokens_to_ids(specials[1]),
        image_token_index=tok.convert_tokens_to_ids(specials[2]),
    )
    processor = transformers.Gemma3Processor(
        image_processor=transformers.Gemma3ImageProcessorPil(size={"height": 32, "width": 32}),
        tokenizer=tok,
        image_seq_length=4,
        chat_template=GEMMA_CHAT,
    )
    _save(directory, transformers.Gemma3ForConditionalGeneration(config), processor)


def build_paligemma2(directory: Path) -> None:
    """PaliGemma 2 (Gemma 2 decoder): no chat template; the processor writes its own prefix."""
    tok = family_tokenizer(["<image>"], extra={"image_token": "<image>"})
    images = transformers.SiglipImageProcessorPil(
        size={"height": 32, "width": 32}, image_seq_length=16
    )
    processor = transformers.PaliGemmaProcessor(image_processor=images, tokenizer=tok)
    config = transformers.PaliGemmaConfig(
        text_config=_gemma_text(transformers.Gemma2Config, tok),  # after the <loc>/<seg> tokens
        vision_config=_siglip(projection_dim=32),
        image_token_index=tok.convert_tokens_to_ids("<image>"),
        projection_dim=32,
    )
    _save(directory, transformers.PaliGemmaForConditionalGeneration(config), processor)


def _blip_vision() -> dict[str, Any]:
    sizes = dict(hidden_size=32, intermediate_size=37, num_hidden_layers=1, num_attention_heads=4)
    return {**sizes, "image_size": 32, "patch_size": 8}


def _qformer(**overrides: Any) -> dict[str, Any]:
    sizes = dict(hidden_size=32, intermediate_size=37, num_hidden_layers=1, num_attention_heads=4)
    return {**sizes, "encoder_hidden_size": 32, **overrides}


def build_blip2(directory: Path, t5: bool) -> None:
    """BLIP-2 with OPT, or with Flan-T5 (``t5``, an encoder-decoder); 4 query tokens."""
    tok = family_tokenizer()
    images = transformers.BlipImageProcessorPil(size={"height": 32, "width": 32})
    processor = transformers.Blip2Processor(
        image_processor=images, tokenizer=tok, num_query_tokens=4
    )
    config = transformers.Blip2Config(
        vision_config=_blip_vision(),
        qformer_config=_qformer(),
        text_config=_t5(tok) if t5 else _opt(tok),  # after the processor added <image>
        num_query_tokens=4,
        image_token_index=tok.convert_tokens_to_ids("<image>"),
    )
    _save(directory, transformers.Blip2ForConditionalGeneration(config), processor)


def build_instructblip(directory: Path, t5: bool) -> None:
    """InstructBLIP with Vicuna (Llama), or with Flan-T5 (``t5``); a BERT Q-Former tokenizer."""
    tok, qformer_tok = family_tokenizer(), family_tokenizer()
    images = transformers.BlipImageProcessorPil(size={"height": 32, "width": 32})
    processor = transformers.InstructBlipProcessor(
        image_processor=images, tokenizer=tok, qformer_tokenizer=qformer_tok, num_query_tokens=4
    )
    qformer = _qformer(vocab_size=len(qformer_tok), pad_token_id=qformer_tok.pad_token_id)
    config = transformers.InstructBlipConfig(
        vision_config=_blip_vision(),
        qformer_config=qformer,
        text_config=_t5(tok) if t5 else llama_config(tok),
        num_query_tokens=4,
        image_token_index=tok.convert_tokens_to_ids("<image>"),
    )
    _save(directory, transformers.InstructBlipForConditionalGeneration(config), processor)


def build_mllama(directory: Path) -> None:
    """Llama 3.2 Vision: one tile, cross-attention in the second decoder layer."""
    tok = family_tokenizer(
        ["<|image|>", "<|python_tag|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
    )
    vision = transformers.MllamaVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_global_layers=1,
        attention_heads=4,
        image_size=32,
        patch_size=8,
        max_num_tiles=1,
        intermediate_layers_indices=[0],
        vision_output_dim=64,
        supported_aspect_ratios=[[1, 1]],
    )
    text = transformers.MllamaTextConfig(**_decoder(tok), cross_attention_layers=[1])
    config = transformers.MllamaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=tok.convert_tokens_to_ids("<|image|>"),
    )
    images = transformers.MllamaImageProcessorPil(
        size={"height": 32, "width": 32}, max_image_tiles=1
    )
    processor = transformers.MllamaProcessor(
        image_processor=images, tokenizer=tok, chat_template=MLLAMA_CHAT
    )
    _save(directory, transformers.MllamaForConditionalGeneration(config), processor)


def build_internvl(directory: Path) -> None:
    """InternVL (the transformers port, e.g. InternVL3-hf): pixel shuffle 0.5, 4 image tokens."""
    names = {
        "start_image_token": "<img>",
        "end_image_token": "</img>",
        "context_image_token": "<IMG_CONTEXT>",
        "video_token": "<video>",
    }
    tok = family_tokenizer([*names.values(), "<|im_start|>", "<|im_end|>"], extra=names)
    vision = transformers.InternVLVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        image_size=[32, 32],
        patch_size=[8, 8],
    )
    config = transformers.InternVLConfig(
        vision_config=vision,
        text_config=transformers.Qwen2Config(**_decoder(tok)),
        image_token_id=tok.convert_tokens_to_ids("<IMG_CONTEXT>"),
        image_seq_length=4,
        downsample_ratio=0.5,
    )
    images = transformers.GotOcr2ImageProcessorPil(
        size={"height": 32, "width": 32}, crop_to_patches=False
    )
    with stand_ins():
        processor = transformers.InternVLProcessor(
            image_processor=images,
            tokenizer=tok,
            video_processor=_no_video("InternVLVideoProcessor"),
            image_seq_length=4,
            chat_template=chatml("<IMG_CONTEXT>\n"),
        )
    _save(directory, transformers.InternVLForConditionalGeneration(config), processor)


def build_florence2(directory: Path) -> None:
    """Florence-2: a two-stage DaViT tower (32 px -> 4x4 + 1 = 17 image tokens) and BART."""
    tok = family_tokenizer(["<image>"], extra={"image_token": "<image>"})
    bart = transformers.BartConfig(
        vocab_size=len(tok),
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=512,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.eos_token_id,  # BART starts from eos
        forced_eos_token_id=tok.eos_token_id,  # as Florence-2's config
    )
    vision = transformers.Florence2VisionConfig(
        depths=(1, 1),
        patch_size=(7, 3),
        patch_stride=(4, 2),
        patch_padding=(3, 1),
        patch_prenorm=(False, True),
        embed_dim=(16, 32),
        num_heads=(2, 4),
        num_groups=(2, 4),
        window_size=2,
        projection_dim=32,
        drop_path_rate=0.0,
    )
    config = transformers.Florence2Config(
        text_config=bart, vision_config=vision, image_token_id=tok.convert_tokens_to_ids("<image>")
    )
    images = transformers.CLIPImageProcessorPil(
        size={"height": 32, "width": 32}, do_center_crop=False, image_seq_length=17
    )
    processor = transformers.Florence2Processor(image_processor=images, tokenizer=tok)
    _save(directory, transformers.Florence2ForConditionalGeneration(config), processor)


FAMILIES: tuple[Family, ...] = (
    Family("LLaVA-1.5", "llava-hf/llava-1.5-7b-hf", build_llava),
    Family("LLaVA-NeXT", "llava-hf/llava-v1.6-mistral-7b-hf", build_llava_next),
    Family(
        "LLaVA-OneVision",
        "llava-hf/llava-onevision-qwen2-7b-ov-hf",
        build_llava_onevision,
        needs=("torchvision",),
        not_tested=VIDEO_STAND_IN,
    ),
    Family(
        "Qwen2-VL",
        "Qwen/Qwen2-VL-7B-Instruct",
        lambda d: build_qwen_vl(d, "2"),
        needs=("torchvision",),
        not_tested=VIDEO_STAND_IN,
    ),
    Family(
        "Qwen2.5-VL",
        "Qwen/Qwen2.5-VL-7B-Instruct",
        lambda d: build_qwen_vl(d, "2.5"),
        needs=("torchvision",),
        not_tested=VIDEO_STAND_IN,
    ),
    Family(
        "Qwen3-VL",
        "Qwen/Qwen3-VL-8B-Instruct",
        lambda d: build_qwen_vl(d, "3"),
        needs=("torchvision",),
        not_tested=VIDEO_STAND_IN,
    ),
    Family("Idefics3", "HuggingFaceM4/Idefics3-8B-Llama3", build_idefics3),
    Family(
        "SmolVLM",
        "HuggingFaceTB/SmolVLM-Instruct",
        lambda d: build_idefics3(d, smol=True),
        needs=("torchvision", "num2words"),
        not_tested=f"{VIDEO_STAND_IN}; {NUM2WORDS_STAND_IN}",
    ),
    Family("Gemma 3", "google/gemma-3-4b-it", build_gemma3),
    Family("PaliGemma 2", "google/paligemma2-3b-mix-224", build_paligemma2, plain=True),
    Family(
        "InstructBLIP (Vicuna)",
        "Salesforce/instructblip-vicuna-7b",
        lambda d: build_instructblip(d, t5=False),
        plain=True,
    ),
    Family(
        "InstructBLIP (Flan-T5)",
        "Salesforce/instructblip-flan-t5-xl",
        lambda d: build_instructblip(d, t5=True),
        encoder_decoder=True,
        plain=True,
    ),
    Family(
        "BLIP-2 (OPT)", "Salesforce/blip2-opt-2.7b", lambda d: build_blip2(d, t5=False), plain=True
    ),
    Family(
        "BLIP-2 (Flan-T5)",
        "Salesforce/blip2-flan-t5-xl",
        lambda d: build_blip2(d, t5=True),
        encoder_decoder=True,
        plain=True,
    ),
    Family("Mllama", "meta-llama/Llama-3.2-11B-Vision-Instruct", build_mllama),
    Family(
        "InternVL",
        "OpenGVLab/InternVL3-8B-hf",
        build_internvl,
        needs=("torchvision",),
        not_tested=VIDEO_STAND_IN,
    ),
    Family(
        "Florence-2",
        "florence-community/Florence-2-base",
        build_florence2,
        encoder_decoder=True,
        plain=True,
    ),
)
"""Every family the matrix tests (tests/test_model_families.py) and docs/models.md lists."""


def build_family(family: Family, directory: Path) -> Path:
    """Save ``family``'s tiny checkpoint (seeded: the same weights every time) to directory."""
    import torch

    torch.manual_seed(0)
    family.build(directory)
    return directory


DOCS_START = "<!-- family table: written by `python tests/tiny_models.py` -->"
DOCS_END = "<!-- end of family table -->"


def family_table() -> str:
    """The docs/models.md table of :data:`FAMILIES` (a test keeps the docs equal to it)."""
    from halluscope.models.hf import INSTALL_VLM

    rows = [
        "| family | e.g. | spec keys it needs | prompt, padding | extra packages | "
        "not tested here (why) |",
        "|---|---|---|---|---|---|",
    ]
    for family in FAMILIES:
        keys = ", ".join(f"`{k}`" for k in ("model", "kind", *family.spec))
        prompt = "bare prompt (auto)" if family.plain else "chat template (auto)"
        pads = "right (encoder-decoder)" if family.encoder_decoder else "left"
        extra = ", ".join(family.needs) + f" (`{INSTALL_VLM}`)" if family.needs else "none"
        rows.append(
            f"| {family.name} | `{family.example}` | {keys} | {prompt}, {pads} | {extra} | "
            f"{family.not_tested or '-'} |"
        )
    return "\n".join([DOCS_START, *rows, DOCS_END])


def write_docs(path: Path) -> None:
    """Replace the family table in docs/models.md by :func:`family_table`."""
    text = path.read_text(encoding="utf-8")
    head, rest = text.split(DOCS_START, 1)
    tail = rest.split(DOCS_END, 1)[1]
    path.write_text(head + family_table() + tail, encoding="utf-8")


if __name__ == "__main__":
    write_docs(Path(__file__).resolve().parents[1] / "docs" / "models.md")
