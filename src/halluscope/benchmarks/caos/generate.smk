# CAOS's caption pipeline, step 1: one caption file per model x instruction (stage code:
# halluscope.benchmarks.caos.captions.generate). Included by rules.smk.
from halluscope.resources import model_resources
from halluscope.benchmarks.caos.captions.generate import GenerateSettings


rule generate:
    """Caption every image with one model and one instruction, through the response cache."""
    input:
        item_file="results/data/{profile}/items.jsonl",
        recordings=user_recordings,
    output:
        "results/responses/{profile}/{model}/{instruction}.jsonl",
    params:
        settings=settings_arg(GenerateSettings, "model", "instruction"),
        code=code_version("generate"),
    resources:
        **model_resources(config, "generate"),
    priority: caption_priority
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/generate/{profile}/{model}/{instruction}.log",
    shell:
        "halluscope stage generate --settings {params.settings:q} --items {input.item_file:q} "
        "--cache results/cache/responses --out {output:q} > {log:q} 2>&1"


rule generate_all:
    """DVC stage target: every response file."""
    input:
        response_files(),
