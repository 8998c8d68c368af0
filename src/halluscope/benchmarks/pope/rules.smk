# POPE: questions per negative-sampling setting -> answers per model -> scores. Included by the
# Snakefile through halluscope.benchmarks; stage code: src/halluscope/benchmarks/pope/stages.py.
# POPE-F1 joins the CAOS tables (rule summarize reads the scores).
from halluscope.benchmarks.pope import stages as pope_stages
from halluscope.resources import model_resources
from halluscope.stages.answering import AnswerSettings


include: "common.smk"


rule pope_questions:
    """POPE questions (one negative-sampling setting) built from the per-image GT."""
    input:
        item_file="results/data/{profile}/items.jsonl",
    output:
        "results/pope/{profile}/questions/{setting}.jsonl",
    params:
        settings=settings_arg(pope_stages.PopeQuestionSettings, "setting"),
        code=code_version("pope"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/pope/{profile}/questions_{setting}.log",
    shell:
        "halluscope stage pope-questions --settings {params.settings:q} --items {input.item_file:q} "
        "--out {output:q} > {log:q} 2>&1"


rule pope_answers:
    """One model's answers to one setting's POPE questions, through the response cache."""
    input:
        item_file="results/data/{profile}/items.jsonl",
        questions="results/pope/{profile}/questions/{setting}.jsonl",
    output:
        "results/pope/{profile}/{model}/{setting}.answers.jsonl",
    params:
        settings=settings_arg(AnswerSettings, "model"),
        code=code_version("pope"),
    resources:
        **model_resources(config, "pope_answers"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/pope/{profile}/{model}/{setting}.answers.log",
    shell:
        "halluscope stage pope-answers --settings {params.settings:q} --items {input.item_file:q} "
        "--questions {input.questions:q} --cache results/cache/responses --out {output:q} > {log:q} 2>&1"


rule pope_score:
    """POPE accuracy / precision / recall / F1 / yes-ratio for one model and setting."""
    input:
        questions="results/pope/{profile}/questions/{setting}.jsonl",
        answers="results/pope/{profile}/{model}/{setting}.answers.jsonl",
    output:
        "results/pope/{profile}/{model}/{setting}.scores.json",
    params:
        settings=settings_arg(pope_stages.PopeScoreSettings),
        code=code_version("pope"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/pope/{profile}/{model}/{setting}.scores.log",
    shell:
        "halluscope stage pope-score --settings {params.settings:q} --questions {input.questions:q} "
        "--answers {input.answers:q} --out {output:q} > {log:q} 2>&1"


rule pope_all:
    """DVC stage target: every POPE score."""
    input:
        pope_score_files(),
