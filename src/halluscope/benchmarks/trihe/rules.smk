# Tri-HE: questions -> answers per model -> triplets (LLM) -> judgements -> Hallu_Q / Hallu_I,
# the Table 2 layout and the object vs relation bars. Included by the Snakefile through
# halluscope.benchmarks; stage code: src/halluscope/benchmarks/trihe/stages.py (commands.py,
# report.py beside it).
from halluscope.benchmarks.trihe.stages import check_config as trihe_check_config
from halluscope.benchmarks.trihe.stages import extractor_settings as trihe_extractor_settings
from halluscope.benchmarks.trihe.stages import judge_settings as trihe_judge_settings
from halluscope.resources import model_resources

trihe_check_config(config)


include: "common.smk"


rule trihe_questions:
    """The Tri-HE questions with their reference triplets, checked against the items."""
    input:
        item_file="results/data/{dataset}/items.jsonl",
        questions=project_file(config["trihe"]["questions"]),
    output:
        "results/trihe/{dataset}/questions.jsonl",
    params:
        questions=question_source("trihe"),
        code=code_version("trihe"),
    priority: LLM_PRIORITY
    conda:
        "../../../../envs/halluscope.yaml"
    log:
        "logs/trihe/{dataset}/questions.log",
    shell:
        "halluscope stage trihe-questions --items {input.item_file} "
        "--questions {params.questions} --out {output} > {log} 2>&1"


rule trihe_answers:
    """One model's answers to the Tri-HE questions (optionally describe-then-answer), cached."""
    input:
        item_file="results/data/{dataset}/items.jsonl",
        questions="results/trihe/{dataset}/questions.jsonl",
    output:
        "results/trihe/{dataset}/{model}/answers.jsonl",
    params:
        model=lambda wc: json_arg(config["models"][wc.model]),
        generation=generation_params("generate"),
        template_version=config["generate"]["template_version"],
        cache_mode=config["generate"]["cache_mode"],
        mitigation=config["trihe"]["mitigation"],
        code=code_version("trihe"),
    resources:
        **model_resources(config, "trihe_answers"),
    priority: LLM_PRIORITY
    conda:
        "../../../../envs/halluscope.yaml"
    log:
        "logs/trihe/{dataset}/{model}/answers.log",
    shell:
        "halluscope stage trihe-answers --items {input.item_file} --questions {input.questions} "
        "--model-id {wildcards.model} --model {params.model} --generation {params.generation} "
        "--template-version {params.template_version} --cache-mode {params.cache_mode} "
        "--mitigation {params.mitigation} --cache results/cache/responses --out {output} "
        "> {log} 2>&1"


rule trihe_triplets:
    """(subject, relation, object) triplets of each answer: an LLM with validated JSON replies."""
    input:
        answers="results/trihe/{dataset}/{model}/answers.jsonl",
    output:
        "results/trihe/{dataset}/{model}/triplets.jsonl",
    params:
        extractor=lambda wc: json_arg(trihe_extractor_settings(config)),
        code=code_version("trihe"),
    resources:
        **model_resources(config, "trihe_triplets"),
    priority: LLM_PRIORITY
    conda:
        "../../../../envs/halluscope.yaml"
    log:
        "logs/trihe/{dataset}/{model}/triplets.log",
    shell:
        "halluscope stage trihe-triplets --answers {input.answers} --extractor {params.extractor} "
        "--cache results/cache/responses --out {output} > {log} 2>&1"


rule trihe_judge:
    """Judge every triplet against the image's scene graph; Hallu_Q / Hallu_I per judge. One job
    judges every model (paths paired by position), so the sentence encoder loads once."""
    input:
        item_file="results/data/{dataset}/items.jsonl",
        answers=expand("results/trihe/{{dataset}}/{model}/answers.jsonl", model=MODELS),
        triplets=expand("results/trihe/{{dataset}}/{model}/triplets.jsonl", model=MODELS),
    output:
        judgments=expand("results/trihe/{{dataset}}/{model}/judgments.jsonl", model=MODELS),
        scores=expand("results/trihe/{{dataset}}/{model}/scores.json", model=MODELS),
    params:
        judge=lambda wc: json_arg(trihe_judge_settings(config)),
        code=code_version("trihe"),
    resources:
        **model_resources(config, "trihe_judge"),
    conda:
        "../../../../envs/halluscope.yaml"
    log:
        "logs/trihe/{dataset}/judge.log",
    shell:
        "halluscope stage trihe-judge --items {input.item_file} --answers {input.answers} "
        "--triplets {input.triplets} --judge {params.judge} --cache results/cache/responses "
        "--out-judgments {output.judgments} --out-scores {output.scores} > {log} 2>&1"


rule trihe_table:
    """Tri-HE Table 2 layout: models x Hallu_I / Hallu_Q (overall, object, relation)."""
    input:
        lambda wc: trihe_score_files(wc.dataset),
    output:
        table="results/report/{dataset}/trihe_table.tex",
        twin=report_csvs("results/report/{dataset}/trihe_table.csv", "Tri-HE", captions="."),
    params:
        models=json_arg(MODELS),
        judges=json_arg(config["trihe"]["judges"]),
        decimals=config["tables"]["decimals"],
        mitigation=config["trihe"]["mitigation"],
        code=code_version("tables"),
    conda:
        "../../../../envs/halluscope.yaml"
    log:
        "logs/trihe/{dataset}/table.log",
    shell:
        "halluscope stage trihe-table --models {params.models} --judges {params.judges} "
        "--decimals {params.decimals} --mitigation {params.mitigation} "
        "--dataset {wildcards.dataset} --out {output.table} {input} "
        "> {log} 2>&1"


rule trihe_figure:
    """Object vs relation Hallu_I / Hallu_Q per model (the main judge), PDF + PNG."""
    input:
        trihe_score_files(),
    output:
        pdf="results/figures/{dataset}/trihe_bars.pdf",
        png=report_figure(
            "results/figures/{dataset}/trihe_bars.png", "trihe_bars", "Tri-HE", captions="."
        ),
    params:
        models=json_arg(MODELS),
        judge=config["trihe"]["judges"][0],
        dpi=config["figures"]["dpi"],
        code=code_version("figures"),
    conda:
        "../../../../envs/halluscope.yaml"
    log:
        "logs/figures/{dataset}/trihe_bars.log",
    shell:
        "halluscope stage trihe-figure --models {params.models} --judge {params.judge} "
        "--dpi {params.dpi} --out-stem results/figures/{wildcards.dataset}/trihe_bars {input} > {log} 2>&1"


rule trihe_all:
    """DVC stage target: every Tri-HE score file."""
    input:
        trihe_score_files(),
