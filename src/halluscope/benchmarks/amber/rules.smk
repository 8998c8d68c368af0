# AMBER generative task: prompts (query + annotations) -> answers per model -> CHAIR, Cover, Hal,
# Cog per model -> table. Included by the Snakefile through halluscope.benchmarks; stage code:
# src/halluscope/benchmarks/amber/stages.py. Enabled by a params section `amber:` (profile
# config/profiles/amber-gen.yaml); absent or `enabled: false` = no AMBER job.
from halluscope.resources import model_resources

include: "common.smk"


rule amber_prompts:
    """AMBER's generative query per item, with the image's truth / hallu object lists."""
    input:
        item_file="results/data/{dataset}/items.jsonl",
    output:
        "results/amber/{dataset}/prompts.jsonl",
    params:
        annotations=amber_file("annotations"),
        code=code_version("amber"),
    conda:
        "../../../../envs/halluscope.yaml"
    log:
        "logs/amber/{dataset}/prompts.log",
    shell:
        "halluscope stage amber-prompts --items {input.item_file} "
        "--annotations {params.annotations} --out {output} > {log} 2>&1"


rule amber_answers:
    """One model's description of every AMBER image, through the response cache."""
    input:
        item_file="results/data/{dataset}/items.jsonl",
        prompts="results/amber/{dataset}/prompts.jsonl",
    output:
        "results/amber/{dataset}/{model}/answers.jsonl",
    params:
        model=lambda wc: json_arg(config["models"][wc.model]),
        generation=generation_params("generate"),
        template_version=config["generate"]["template_version"],
        cache_mode=config["generate"]["cache_mode"],
        code=code_version("amber"),
    resources:
        **model_resources(config, "amber_answers"),
    conda:
        "../../../../envs/halluscope.yaml"
    log:
        "logs/amber/{dataset}/{model}/answers.log",
    shell:
        "halluscope stage amber-answers --items {input.item_file} --prompts {input.prompts} "
        "--model-id {wildcards.model} --model {params.model} --generation {params.generation} "
        "--template-version {params.template_version} --cache-mode {params.cache_mode} "
        "--cache results/cache/responses --out {output} > {log} 2>&1"


rule amber_score:
    """AMBER CHAIR, Cover, Hal and Cog of one model (upstream's inference.py, generative task)."""
    input:
        "results/amber/{dataset}/{model}/answers.jsonl",
    output:
        "results/amber/{dataset}/{model}/scores.json",
    params:
        annotations=amber_file("annotations"),
        relation=amber_file("relation"),
        safe_words=amber_file("safe_words"),
        similarity=AMBER.get("similarity", "none"),
        threshold=AMBER.get("threshold", 0.8),
        code=code_version("amber"),
    conda:
        "../../../../envs/halluscope.yaml"
    log:
        "logs/amber/{dataset}/{model}/score.log",
    shell:
        "halluscope stage amber-score --answers {input} --annotations {params.annotations} "
        "--relation {params.relation} --safe-words {params.safe_words} "
        "--similarity {params.similarity} --threshold {params.threshold} --out {output} "
        "> {log} 2>&1"


rule amber_table:
    """AMBER's generative metrics per model: LaTeX and its CSV twin."""
    input:
        lambda wc: amber_score_files(wc.dataset),
    output:
        table="results/report/{dataset}/amber_table.tex",
        twin=report(
            "results/report/{dataset}/amber_table.csv",
            caption="amber_table.rst",
            category="AMBER",
            subcategory="Tables",
            labels={"name": report_title("amber_table"), "profile": "{dataset}"},
        ),
    params:
        models=json_arg(MODELS),
        code=code_version("amber"),
    conda:
        "../../../../envs/halluscope.yaml"
    log:
        "logs/amber/{dataset}/table.log",
    shell:
        "halluscope stage amber-table --models {params.models} --dataset {wildcards.dataset} "
        "--out {output.table} {input} > {log} 2>&1"


rule amber_all:
    """Every AMBER score file of the active profile."""
    input:
        amber_score_files(),
