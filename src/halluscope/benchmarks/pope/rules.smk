# POPE: questions per negative-sampling setting -> answers per model -> scores. Included by the
# Snakefile through halluscope.benchmarks; stage code: src/halluscope/benchmarks/pope/stages.py
# (commands.py beside it). POPE-F1 joins the CAOS tables (rule summarize reads the scores).
from halluscope.resources import model_resources


include: "common.smk"


rule pope_questions:
    """POPE questions (one negative-sampling setting) built from the per-image GT."""
    input:
        item_file="results/data/{dataset}/items.jsonl",
    output:
        "results/pope/{dataset}/questions/{setting}.jsonl",
    params:
        n=config["pope"]["n"],
        seed=config["pope"]["seed"],
        typo="--typo" if config["pope"]["typo"] else "",
        code=code_version("pope"),
    conda:
        "../../../../envs/halluscope.yaml"
    log:
        "logs/pope/{dataset}/questions_{setting}.log",
    shell:
        "halluscope stage pope-questions --items {input.item_file} --setting {wildcards.setting} "
        "--n {params.n} --seed {params.seed} {params.typo} --out {output} > {log} 2>&1"


rule pope_answers:
    """One model's answers to one setting's POPE questions, through the response cache."""
    input:
        item_file="results/data/{dataset}/items.jsonl",
        questions="results/pope/{dataset}/questions/{setting}.jsonl",
    output:
        "results/pope/{dataset}/{model}/{setting}.answers.jsonl",
    params:
        model=lambda wc: json_arg(config["models"][wc.model]),
        generation=generation_params("generate"),
        template_version=config["generate"]["template_version"],
        cache_mode=config["generate"]["cache_mode"],
        code=code_version("pope"),
    resources:
        **model_resources(config, "pope_answers"),
    conda:
        "../../../../envs/halluscope.yaml"
    log:
        "logs/pope/{dataset}/{model}/{setting}.answers.log",
    shell:
        "halluscope stage pope-answers --items {input.item_file} --questions {input.questions} "
        "--model-id {wildcards.model} --model {params.model} --generation {params.generation} "
        "--template-version {params.template_version} --cache-mode {params.cache_mode} "
        "--cache results/cache/responses --out {output} > {log} 2>&1"


rule pope_score:
    """POPE accuracy / precision / recall / F1 / yes-ratio for one model and setting."""
    input:
        questions="results/pope/{dataset}/questions/{setting}.jsonl",
        answers="results/pope/{dataset}/{model}/{setting}.answers.jsonl",
    output:
        "results/pope/{dataset}/{model}/{setting}.scores.json",
    params:
        parser=config["pope"]["parser"],
        code=code_version("pope"),
    conda:
        "../../../../envs/halluscope.yaml"
    log:
        "logs/pope/{dataset}/{model}/{setting}.scores.log",
    shell:
        "halluscope stage pope-score --questions {input.questions} --answers {input.answers} "
        "--parser {params.parser} --out {output} > {log} 2>&1"


rule pope_all:
    """DVC stage target: every POPE score."""
    input:
        pope_score_files(),
