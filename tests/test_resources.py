"""What model-calling jobs ask of a scheduler (halluscope.resources): from the model specs, in one
place, declared by every rule that calls a model and by no other rule."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pipeline_helpers import ROOT, copy_project, snakemake

from halluscope.models.base import make_backend
from halluscope.resources import (
    BACKEND_NEEDS,
    ENCODER_NEEDS,
    NO_MODEL,
    RULE_MODELS,
    Needs,
    combined,
    model_threads,
    spec_needs,
)

RULE_FILES = [
    *sorted((ROOT / "rules").glob("*.smk")),
    *sorted((ROOT / "src/halluscope/benchmarks").glob("*/*.smk")),
]


def holds_a_model(settings: type) -> bool:
    """Whether a rule's settings class holds a model: an LLM (``LLMSettings``) or a spec."""
    import typing

    hints = typing.get_type_hints(settings)
    return any("LLMSettings" in str(hint) or name == "spec" for name, hint in hints.items())


def test_spec_needs_backend_defaults_and_overrides() -> None:
    assert spec_needs({"backend": "sim"}) == NO_MODEL  # not listed: answers from memory
    assert spec_needs({"backend": "hf", "gpu": 1}) == Needs(
        1, BACKEND_NEEDS["hf"].mem_mb, BACKEND_NEEDS["hf"].runtime
    )
    assert spec_needs({"backend": "openai", "runtime": 600, "mem_mb": 500}) == Needs(0, 500, 600)
    assert spec_needs({"kind": "sentence-transformers"}) == ENCODER_NEEDS  # an embedder spec
    with pytest.raises(ValueError, match="models.x: gpu must be a non-negative integer"):
        spec_needs({"backend": "hf", "gpu": "one"}, "models.x")


def test_combined_needs_of_several_models() -> None:
    a, b = Needs(0, 2000, 30), Needs(1, 32000, 240)
    assert combined([a, b]) == Needs(1, 32000, 270)
    assert combined([Needs(0, 1, 1, threads=2), a]).threads == 2
    assert combined([]) == NO_MODEL


def test_a_llamacpp_job_is_given_the_threads_it_decodes_with() -> None:
    """A job asks for the cores its spec fixes (llama.cpp's n_threads), else one."""
    assert spec_needs({"backend": "llamacpp"}).threads == 1
    assert spec_needs({"backend": "llamacpp", "n_threads": 2}).threads == 2
    assert spec_needs({"backend": "hf"}).threads == spec_needs({"backend": "sim"}).threads == 1
    config = {"models": {"m": {"backend": "llamacpp", "n_threads": 3}}}
    threads = model_threads(config, "generate")
    assert threads(type("Wildcards", (), {"model": "m"})()) == 3
    with pytest.raises(KeyError, match="not in RULE_MODELS"):
        model_threads(config, "tables")


def test_backends_never_see_the_scheduling_keys() -> None:
    """hf rejects unknown keys; `gpu`, `mem_mb`, `runtime` are the executor's."""
    spec = {"backend": "hf", "kind": "causal-lm", "model": "some/model", "gpu": 1, "runtime": 9}
    make_backend(spec, model_name="m")  # builds (lazily: no weights are loaded)
    with pytest.raises(ValueError, match="unknown key"):
        make_backend({**spec, "gpus": 1}, model_name="m")


# Rules whose settings hold a model they do not load.
NOT_CALLING = {
    "nope_questions": "merges the generated shards; the generator settings are only recorded",
}
# rule generate and every benchmark's `<name>_answers` rule (halluscope.resources)
ANSWERING = {"generate", *(rule for rule in RULE_MODELS if rule.endswith("_answers"))}


def rule_blocks() -> dict[str, str]:
    blocks = {}
    for path in RULE_FILES:
        text = path.read_text()
        for match in re.finditer(r"^rule (\w+):\n(.*?)(?=^rule |\Z)", text, re.M | re.S):
            blocks[match.group(1)] = match.group(2)
    return blocks


def test_every_model_calling_rule_declares_model_resources_and_no_other() -> None:
    from rule_settings import resolve, rules

    blocks = rule_blocks()
    calling = {
        rule.name
        for rule in rules(ROOT)
        if rule.settings and holds_a_model(resolve(rule.settings, ROOT))
    } - set(NOT_CALLING)
    declaring = {name for name, body in blocks.items() if "model_resources(config, " in body}
    assert calling == set(RULE_MODELS) == declaring
    for name in declaring:
        assert f'model_resources(config, "{name}")' in blocks[name]
    # the rules of the LLM stages hand their threads to the job's llama.cpp
    threaded = {name for name, body in blocks.items() if "HALLUSCOPE_THREADS={threads:q}" in body}
    assert threaded == {"extract", "trihe_triplets", "trihe_judge", "nope_generate"}
    for name in threaded:
        assert f'threads: model_threads(config, "{name}")' in blocks[name]
    # no rule asks for a GPU (or any SLURM setting) on its own
    assert not [n for n, b in blocks.items() if re.search(r"^\s+(gpu|slurm_\w+)=", b, re.M)]


@pytest.fixture(scope="module")
def paper_jobs(tmp_path_factory) -> list[tuple[str, str, str]]:
    """(rule, wildcards, resources) of every job of the `paper` profile's dry run."""
    root: Path = copy_project(tmp_path_factory.mktemp("resources") / "halluscope")
    proc = snakemake(
        root,
        "-n",
        "--cores",
        "8",
        "--configfile=config/profiles/paper.yaml",
        "--rerun-triggers",
        "input",
        "--",
        "results/tables/",
    )
    jobs = []
    for block in re.split(r"^\[.*?\]\n", proc.stdout + proc.stderr, flags=re.M):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        if rule:
            wildcards = re.search(r"^\s+wildcards: (.*)$", block, re.M)
            resources = re.search(r"^\s+resources: (.*)$", block, re.M)
            jobs.append(
                (
                    rule.group(1),
                    wildcards.group(1) if wildcards else "",
                    resources.group(1) if resources else "",
                )
            )
    return jobs


def test_paper_profile_gpu_jobs_are_the_model_jobs_of_gpu_models(paper_jobs) -> None:
    gpu_models = {"llava-1.5-13b", "instructblip-13b"}  # `gpu: 1` in config/profiles/paper.yaml
    seen = set()
    for rule, wildcards, resources in paper_jobs:
        gpu = re.search(r"\bgpu=(\d+)", resources)
        if rule not in RULE_MODELS:
            assert gpu is None, (rule, resources)  # CPU-only rules never ask
            continue
        model = re.search(r"model=([\w.-]+)", wildcards)
        if rule in ANSWERING:
            expected = model.group(1) in gpu_models
        elif rule in ("extract", "oracle"):  # llama-2-7b-chat (hf), members with hf models
            expected = True
        else:
            expected = False  # the embedders; NOPE generation keeps the demo's SmolLM2
        assert gpu and int(gpu.group(1)) == int(expected), (rule, wildcards, resources)
        assert re.search(r"\bmem_mb=\d+", resources) and re.search(r"\bruntime=\d+", resources)
        seen.add((rule, expected))
    assert {
        ("generate", True),
        ("generate", False),
        ("extract", True),
        ("oracle", True),
        ("pope_answers", True),
        ("embed", False),
    } <= seen
