"""Tiny, randomly initialised transformers models built from configs (nothing downloaded).

A word-level tokenizer is trained on a small caption corpus; a tiny LLaVA (CLIP vision tower +
Llama) and a tiny Llama causal LM are saved with ``save_pretrained``, so a backend loads them from
disk like any checkpoint. Their answers are random words; every code path is the real one.
"""

from __future__ import annotations

from pathlib import Path

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


def build_tiny_models(root: Path) -> dict[str, Path]:
    """Save a tiny LLaVA (``llava``), a tiny causal LM (``lm``) and two demo PNGs under root."""
    import torch
    from PIL import Image
    from skimage import data

    tok = tokenizer()
    image_token_id = tok.convert_tokens_to_ids("<image>")

    torch.manual_seed(0)
    llava_dir = root / "tiny-llava"
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

    torch.manual_seed(1)
    lm_dir = root / "tiny-lm"
    transformers.LlamaForCausalLM(llama_config(tok)).save_pretrained(lm_dir)
    tok.save_pretrained(lm_dir)

    images = {}
    for name, loader in (("astronaut", data.astronaut), ("chelsea", data.chelsea)):
        images[name] = root / f"{name}.png"
        Image.fromarray(loader()).save(images[name])
    return {"llava": llava_dir, "lm": lm_dir, **images}
