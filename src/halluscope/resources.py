"""What a model-calling job asks of a scheduler: GPUs, memory and wall time, from model specs.

Every rule that calls a model declares ``resources: **model_resources(config, "<rule>")``; which
model specs each of those rules loads comes from its benchmark's folder (``needs.py``, collected
in :data:`RULE_MODELS`), and what a spec needs is said here (:func:`spec_needs`). Executors
read the resources by their standard names: ``gpu`` (count), ``mem_mb`` and ``runtime``
(minutes); ``profiles/slurm`` turns them into ``--gpus``, ``--mem``, ``-t`` and a partition. A
local run ignores them unless given ``--resources gpu=N`` (then at most N GPU jobs run at once).

A model spec (``models:`` in ``params.yaml``) may carry the scheduling keys ``gpu``, ``mem_mb``
and ``runtime`` beside its backend keys; the backends never see them (``make_backend`` drops
them), so they change no reply and no cache key. Without them a spec needs its backend's
defaults (:data:`BACKEND_NEEDS`): only an ``hf`` spec with ``gpu: 1`` asks for a GPU.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from halluscope.stages.llm import LLMSettings

from halluscope.models.base import SCHEDULING_KEYS


@dataclass(frozen=True)
class Needs:
    """GPUs, memory (MB), wall time (minutes) and cores (Snakemake ``threads:``) one job needs."""

    gpu: int
    mem_mb: int
    runtime: int
    threads: int = 1


# Per backend, for a model as the pipeline runs it at paper scale (2,000 images per job): a
# transformers LVLM of 7-13B parameters holds its weights in host memory while loading; an
# OpenAI-compatible client only waits on its server; llama.cpp runs a GGUF on the CPU, on one
# core unless `snakemake --set-threads RULE=N` gives it more (the replies do not depend on it;
# one thread each let two LLM jobs share the two cores of the demo's machine, which was faster
# than one job on two: docs/performance.md).
BACKEND_NEEDS: dict[str, Needs] = {
    "replay": Needs(gpu=0, mem_mb=2000, runtime=30),
    "llamacpp": Needs(gpu=0, mem_mb=8000, runtime=240),
    "hf": Needs(gpu=0, mem_mb=32000, runtime=240),
    "openai": Needs(gpu=0, mem_mb=2000, runtime=240),
}
# Models that are not `models:` entries: embedders and the Tri-HE judges' encoders.
ENCODER_NEEDS = Needs(gpu=0, mem_mb=4000, runtime=60)
# A model-calling rule whose settings load no model (rule-based extraction, no oracle).
NO_MODEL = Needs(gpu=0, mem_mb=2000, runtime=30)


def spec_needs(spec: Mapping[str, Any], where: str = "model spec") -> Needs:
    """What one model spec needs: its backend's defaults, overridden by the spec's own
    ``gpu`` / ``mem_mb`` / ``runtime`` (non-negative integers; ``where`` names it in errors)."""
    backend = spec.get("backend")
    # a backend not listed (the simulated LVLMs, test instruments) answers from memory
    base = BACKEND_NEEDS.get(str(backend), NO_MODEL if backend else ENCODER_NEEDS)
    values = {"gpu": base.gpu, "mem_mb": base.mem_mb, "runtime": base.runtime}
    # a spec that fixes its threads (llamacpp's n_threads) is given that many cores
    values["threads"] = int(spec.get("n_threads", base.threads))
    for key in SCHEDULING_KEYS & set(spec):
        value = spec[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{where}: {key} must be a non-negative integer, got {value!r}")
        values[key] = value
    return Needs(**values)


def combined(needs: Iterable[Needs]) -> Needs:
    """One job that loads several models one after the other (an oracle ensemble, judges):
    the most GPUs, memory and cores of any, the sum of the wall times; :data:`NO_MODEL` for
    none."""
    needs = list(needs)
    if not needs:
        return NO_MODEL
    return Needs(
        gpu=max(n.gpu for n in needs),
        mem_mb=max(n.mem_mb for n in needs),
        runtime=sum(n.runtime for n in needs),
        threads=max(n.threads for n in needs),
    )


# --- which models each model-calling rule loads -------------------------------------------------


def answering_model(config: Mapping[str, Any], wildcards: Any) -> list[Needs]:
    """The one LVLM of a job that has model ``{model}`` answer (generate, ``<name>_answers``)."""
    model = wildcards.model
    return [spec_needs(config["models"][model], f"models.{model}")]


def llm_needs(settings: LLMSettings | None, where: str) -> list[Needs]:
    """The model of a stage's LLM settings, if any (``where``: its params key, for errors)."""
    if settings is None:
        return []
    return [spec_needs(settings.spec, f"models.{settings.model_id} ({where})")]


def _benchmark_answering_rules() -> list[str]:
    """Every benchmark's rule ``<name>_answers`` (one LVLM answering its prompts, as rule
    ``generate`` does): found in its rules file, so a new benchmark needs no line here."""
    from halluscope.benchmarks import BENCHMARKS

    rules = ((b.rules.read_text(encoding="utf-8"), f"{b.name}_answers") for b in BENCHMARKS)
    return [rule for text, rule in rules if f"rule {rule}:" in text]


def _rule_models() -> dict[str, Callable[[Mapping[str, Any], Any], list[Needs]]]:
    """Every model-calling rule: the ``<name>_answers`` rules, and the rules each benchmark's
    ``needs`` part lists in ``RULE_NEEDS`` (rule -> the models one job loads)."""
    from halluscope.benchmarks import import_plugins

    found = {rule: answering_model for rule in _benchmark_answering_rules()}
    for module in import_plugins("needs"):
        found.update(module.RULE_NEEDS)
    return found


RULE_MODELS: dict[str, Callable[[Mapping[str, Any], Any], list[Needs]]] = _rule_models()


def job_needs(config: Mapping[str, Any], rule: str, wildcards: Any) -> Needs:
    """What one job of model-calling ``rule`` needs under ``config``."""
    return combined(RULE_MODELS[rule](config, wildcards))


def _check_model_rule(caller: str, rule: str) -> None:
    if rule not in RULE_MODELS:
        raise KeyError(f"{caller}: {rule!r} is not in RULE_MODELS ({', '.join(RULE_MODELS)})")


def model_resources(config: Mapping[str, Any], rule: str) -> dict[str, Callable[[Any], int]]:
    """The ``resources:`` of model-calling ``rule``: ``gpu``, ``mem_mb``, ``runtime`` as
    functions of the job's wildcards (``resources: **model_resources(config, "generate")``)."""
    _check_model_rule("model_resources", rule)

    def resource(name: str) -> Callable[[Any], int]:
        return lambda wildcards: getattr(job_needs(config, rule, wildcards), name)

    return {name: resource(name) for name in ("gpu", "mem_mb", "runtime")}


def model_threads(config: Mapping[str, Any], rule: str) -> Callable[[Any], int]:
    """The ``threads:`` of model-calling ``rule`` (a function of the job's wildcards): the cores
    its models use; the rule passes them on as ``HALLUSCOPE_THREADS={threads}``, which the
    llama.cpp backend reads (:func:`halluscope.models.llamacpp.threads_from_env`)."""
    _check_model_rule("model_threads", rule)
    return lambda wildcards: job_needs(config, rule, wildcards).threads
