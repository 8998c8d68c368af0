# AMBER generative task: prompts (query + annotations) -> answers per model -> CHAIR, Cover, Hal,
# Cog per model -> table. Included by the Snakefile through halluscope.benchmarks; stage code:
# src/halluscope/benchmarks/amber/stages.py. Enabled by a params section `amber:` (profile
# config/profiles/amber-gen.yaml); absent or `enabled: false` = no AMBER job.
from halluscope.benchmarks.amber import settings as amber_settings
from halluscope.resources import model_resources
from halluscope.stages.answering import AnswerSettings

include: "common.smk"


rule amber_prompts:
    """AMBER's generative query per item, with the image's truth / hallu object lists."""
    input:
        item_file="results/data/{profile}/items.jsonl",
    output:
        "results/amber/{profile}/prompts.jsonl",
    params:
        settings=settings_arg(amber_settings.AmberPromptSettings),
        code=code_version("amber"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/amber/{profile}/prompts.log",
    shell:
        "halluscope stage amber-prompts --settings {params.settings:q} --items {input.item_file:q} "
        "--out {output:q} > {log:q} 2>&1"


rule amber_answers:
    """One model's description of every AMBER image, through the response cache."""
    input:
        item_file="results/data/{profile}/items.jsonl",
        prompts="results/amber/{profile}/prompts.jsonl",
    output:
        "results/amber/{profile}/{model}/answers.jsonl",
    params:
        settings=settings_arg(AnswerSettings, "model"),
        code=code_version("amber"),
    resources:
        **model_resources(config, "amber_answers"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/amber/{profile}/{model}/answers.log",
    shell:
        "halluscope stage amber-answers --settings {params.settings:q} --items {input.item_file:q} "
        "--prompts {input.prompts:q} --cache results/cache/responses --out {output:q} > {log:q} 2>&1"


rule amber_score:
    """AMBER CHAIR, Cover, Hal and Cog of one model (upstream's inference.py, generative task)."""
    input:
        "results/amber/{profile}/{model}/answers.jsonl",
    output:
        "results/amber/{profile}/{model}/scores.json",
    params:
        settings=settings_arg(amber_settings.AmberScoreSettings),
        code=code_version("amber"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/amber/{profile}/{model}/score.log",
    shell:
        "halluscope stage amber-score --settings {params.settings:q} --answers {input:q} "
        "--out {output:q} > {log:q} 2>&1"


rule amber_table:
    """AMBER's generative metrics per model: LaTeX and its CSV twin."""
    input:
        lambda wc: amber_score_files(wc.profile),
    output:
        table="results/report/{profile}/amber_table.tex",
        twin=report(
            "results/report/{profile}/amber_table.csv",
            caption="amber_table.rst",
            category="AMBER",
            subcategory="Tables",
            labels={"name": report_title("amber_table"), "profile": "{profile}"},
        ),
    params:
        settings=settings_arg(amber_settings.AmberTableSettings),
        code=code_version("amber"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/amber/{profile}/table.log",
    shell:
        "halluscope stage amber-table --settings {params.settings:q} --out {output.table:q} {input:q} "
        "> {log:q} 2>&1"


rule amber_all:
    """Every AMBER score file of the active profile."""
    input:
        amber_score_files(),
