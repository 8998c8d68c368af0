"""Generate stage: one model x one instruction over every item, through the response cache."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.settings import StageSettings
from halluscope.stage_command import stage
from halluscope.stages.data import load_items
from halluscope.stages.llm import LLMSettings, generation_block


@dataclass(frozen=True)
class GenerateSettings(StageSettings):
    """What one generate job reads from params: the model (``models.<model>``) asked with the
    ``generate`` block, and the instruction's id and text (``instructions.<instruction>``)."""

    llm: LLMSettings
    instruction_id: str
    instruction: str

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any], model: str, instruction: str
    ) -> GenerateSettings:
        block = generation_block(config["generate"])
        llm = LLMSettings.from_block(config, block, "generate", model=model)
        return cls(llm, instruction, config["instructions"][instruction])

    @classmethod
    def jobs(cls, config: Mapping[str, Any]) -> list[dict[str, str]]:
        generate = config["generate"]
        return [
            {"model": m, "instruction": i}
            for m in generate["models"]
            for i in generate["instructions"]
        ]


def replay_spec_for(spec: dict, instruction_id: str, instruction: str) -> dict:
    """Pick a per-instruction recording for ``replay`` specs with ``paths: {instruction_id: file}``.

    A registered raw input (``halluscope.data.sources``) is resolved through the verified
    mirror/cache/download chain; any other value is a file of the user's (their own
    captions), which the rule declares as an input so that an edit reruns the job. A recording
    that holds one prompt only (the POPE caption files: one file per model and instruction, each
    in the model's own template) gets ``prompt_map`` from our instruction text to that prompt, so
    answers are matched by image id.
    """
    if spec.get("backend") != "replay" or "paths" not in spec:
        return spec
    from halluscope.data.fetch import resolve_input
    from halluscope.models.replay import _prompt_text, read_recording

    paths = spec["paths"]
    if instruction_id not in paths:
        raise ValueError(
            f"replay model has no recording for instruction {instruction_id!r}; "
            f"it has: {', '.join(sorted(paths))}"
        )
    path = resolve_input(paths[instruction_id])
    out = {k: v for k, v in spec.items() if k != "paths"}
    out["path"] = str(path)
    prompts = {_prompt_text(rec.get("prompt")) for _, rec in read_recording(path)}
    prompts.discard(None)
    if len(prompts) == 1 and "prompt_map" not in out:
        out["prompt_map"] = {instruction: prompts.pop()}
    return out


@stage("generate")
def run(settings: GenerateSettings, items: Path, cache: Path, out: Path) -> dict:
    """Captions of one model for one instruction.

    Writes ``results/responses/.../{instruction}.jsonl`` through the response cache ``cache``;
    returns the cache statistics (the rule's log)."""
    from halluscope.models.base import make_backend
    from halluscope.models.cache import ResponseCache
    from halluscope.models.generate import generate_captions

    records = list(load_items(items).values())
    llm, instruction_id, instruction = settings.llm, settings.instruction_id, settings.instruction
    model_spec = replay_spec_for(dict(llm.spec), instruction_id, instruction)
    backend = make_backend(model_spec, model_name=llm.model_id, answer_keys=True)
    return generate_captions(
        backend=backend,
        cache=ResponseCache(cache, mode=llm.cache_mode),
        items=records,
        instruction_id=instruction_id,
        instruction=instruction,
        model_name=llm.model_id,
        gen_params=dict(llm.params),
        out_path=out,
        template_version=llm.template_version,
        batch_size=llm.batch_size,
    )
