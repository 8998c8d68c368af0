# CAOS's helpers for its rules (rules.smk). Its tables and figures for the rules that collect
# every benchmark's are listed by halluscope.benchmarks.caos.report_files. POPE-F1 joins the CAOS
# summary: rule summarize reads POPE's score files through halluscope.benchmarks.pope.outputs (an
# import, so the order in which the Snakefile includes the benchmarks does not matter).
from halluscope.benchmarks.pope.outputs import score_files as _pope_score_files

# one list of the CAOS figures, shared with the figure stage
from halluscope.benchmarks.caos.report import FIGURES as _CAOS_FIGURES

CAOS_FIGURES = list(_CAOS_FIGURES)

# The caption chain (captions -> objects -> oracle -> embeddings -> scores -> figures) is the
# longest chain of light jobs: it runs after the LLM jobs (LLM_PRIORITY, rules/common.smk) and
# before the rest, so the other benchmarks' last jobs run beside its end.
CAPTION_PRIORITY = 5


def caption_priority(wildcards):
    """LLM_PRIORITY for the caption files the LLM extractor reads (rules generate, extract),
    else CAPTION_PRIORITY."""
    from halluscope.benchmarks.caos.captions.extract import instruction_llm

    return LLM_PRIORITY if instruction_llm(config, wildcards.instruction) else CAPTION_PRIORITY


def score_files(profile=RUN):
    return expand(
        "results/scores/{profile}/{embedder}/{model}/{instruction}.captions.csv",
        profile=profile, embedder=EMBEDDERS, model=MODELS, instruction=INSTRUCTIONS,
    )


def model_response_files(wildcards):
    """The caption files of one model (every instruction), in instruction order."""
    return expand(
        "results/responses/{profile}/{model}/{instruction}.jsonl",
        profile=wildcards.profile, model=wildcards.model, instruction=INSTRUCTIONS,
    )


def noun_tag_files(profile=RUN):
    """The noun check's tags, one file per model (rule noun_tags)."""
    return expand("results/nouns/{profile}/{model}.jsonl", profile=profile, model=MODELS)


def by_model_instruction(paths):
    """``{model: {instruction: path}}`` of ``results/<area>/<profile>/<model>/<instruction>.jsonl``
    paths, for a stage that reads every model's files of some instructions."""
    from pathlib import Path

    out = {}
    for path in paths:
        out.setdefault(Path(path).parent.name, {})[Path(path).stem] = str(path)
    return out


def pope_f1_files(profile=RUN):
    """POPE's score files, whose F1 joins the CAOS summary (none when POPE is disabled)."""
    return _pope_score_files(config, profile)
