# CAOS's caption pipeline, step 1: one caption file per model x instruction (stage code:
# halluscope.stages.generate). Included by rules.smk.
from halluscope.resources import model_resources


rule generate:
    """Caption every image with one model and one instruction, through the response cache."""
    input:
        item_file="results/data/{dataset}/items.jsonl",
    output:
        "results/responses/{dataset}/{model}/{instruction}.jsonl",
    params:
        model=lambda wc: json_arg(config["models"][wc.model]),
        instruction=lambda wc: json_arg(config["instructions"][wc.instruction]),
        generation=generation_params("generate"),
        template_version=config["generate"]["template_version"],
        cache_mode=config["generate"]["cache_mode"],
        code=code_version("generate"),
    resources:
        **model_resources(config, "generate"),
    priority: caption_priority
    conda:
        "../../../../envs/halluscope.yaml"
    log:
        "logs/generate/{dataset}/{model}/{instruction}.log",
    shell:
        "halluscope stage generate --items {input.item_file} --model-id {wildcards.model} "
        "--model {params.model} --instruction-id {wildcards.instruction} "
        "--instruction {params.instruction} --generation {params.generation} "
        "--template-version {params.template_version} --cache-mode {params.cache_mode} "
        "--cache results/cache/responses --out {output} > {log} 2>&1"


rule generate_all:
    """DVC stage target: every response file."""
    input:
        response_files(),
