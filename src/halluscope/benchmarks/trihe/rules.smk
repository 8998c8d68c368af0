# Tri-HE: questions -> answers per model -> triplets (LLM) -> judgements -> Hallu_Q / Hallu_I,
# the Table 2 layout and the object vs relation bars. Included by the Snakefile through
# halluscope.benchmarks; stage code: src/halluscope/benchmarks/trihe/stages.py (report.py
# beside it).
from halluscope.benchmarks.trihe import settings as trihe_report
from halluscope.benchmarks.trihe import stages as trihe_stages
from halluscope.benchmarks.trihe.stages import check_config as trihe_check_config
from halluscope.resources import model_resources, model_threads

trihe_check_config(config)


include: "common.smk"


rule trihe_questions:
    """The Tri-HE questions with their reference triplets, checked against the items."""
    input:
        item_file="results/data/{profile}/items.jsonl",
        questions=project_file(config["trihe"]["questions"]),
    output:
        "results/trihe/{profile}/questions.jsonl",
    params:
        settings=settings_arg(trihe_stages.TriheQuestionSettings),
        code=code_version("trihe"),
    priority: LLM_PRIORITY
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/trihe/{profile}/questions.log",
    shell:
        "halluscope stage trihe-questions --settings {params.settings:q} "
        "--items {input.item_file:q} --out {output:q} > {log:q} 2>&1"


rule trihe_answers:
    """One model's answers to the Tri-HE questions (optionally describe-then-answer), cached."""
    input:
        item_file="results/data/{profile}/items.jsonl",
        questions="results/trihe/{profile}/questions.jsonl",
    output:
        "results/trihe/{profile}/{model}/answers.jsonl",
    params:
        settings=settings_arg(trihe_stages.TriheAnswerSettings, "model"),
        code=code_version("trihe"),
    resources:
        **model_resources(config, "trihe_answers"),
    priority: LLM_PRIORITY
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/trihe/{profile}/{model}/answers.log",
    shell:
        "halluscope stage trihe-answers --settings {params.settings:q} --items {input.item_file:q} "
        "--questions {input.questions:q} --cache results/cache/responses --out {output:q} > {log:q} 2>&1"


rule trihe_triplets:
    """(subject, relation, object) triplets of each answer: an LLM with validated JSON replies."""
    input:
        answers="results/trihe/{profile}/{model}/answers.jsonl",
    output:
        "results/trihe/{profile}/{model}/triplets.jsonl",
    params:
        settings=settings_arg(trihe_stages.TripletSettings),
        code=code_version("trihe"),
    resources:
        **model_resources(config, "trihe_triplets"),
    threads: model_threads(config, "trihe_triplets")
    priority: LLM_PRIORITY
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/trihe/{profile}/{model}/triplets.log",
    shell:
        "HALLUSCOPE_THREADS={threads:q} halluscope stage trihe-triplets --settings {params.settings:q} --answers {input.answers:q} "
        "--cache results/cache/responses --out {output:q} > {log:q} 2>&1"


rule trihe_judge:
    """Judge every triplet against the image's scene graph; Hallu_Q / Hallu_I per judge. One job
    judges every model (paths paired by position), so the sentence encoder loads once."""
    input:
        item_file="results/data/{profile}/items.jsonl",
        answers=expand("results/trihe/{{profile}}/{model}/answers.jsonl", model=MODELS),
        triplets=expand("results/trihe/{{profile}}/{model}/triplets.jsonl", model=MODELS),
    output:
        judgments=expand("results/trihe/{{profile}}/{model}/judgments.jsonl", model=MODELS),
        scores=expand("results/trihe/{{profile}}/{model}/scores.json", model=MODELS),
    params:
        settings=settings_arg(trihe_stages.JudgeSettings),
        code=code_version("trihe"),
    resources:
        **model_resources(config, "trihe_judge"),
    threads: model_threads(config, "trihe_judge")
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/trihe/{profile}/judge.log",
    shell:
        "HALLUSCOPE_THREADS={threads:q} halluscope stage trihe-judge --settings {params.settings:q} --items {input.item_file:q} "
        "--answers {input.answers:q} --triplets {input.triplets:q} --cache results/cache/responses "
        "--out-judgments {output.judgments:q} --out-scores {output.scores:q} > {log:q} 2>&1"


rule trihe_table:
    """Tri-HE Table 2 layout: models x Hallu_I / Hallu_Q (overall, object, relation)."""
    input:
        lambda wc: trihe_score_files(wc.profile),
    output:
        table="results/report/{profile}/trihe_table.tex",
        twin=report_csvs("results/report/{profile}/trihe_table.csv", "Tri-HE", captions="."),
    params:
        settings=settings_arg(trihe_report.TriheTableSettings),
        code=code_version("tables"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/trihe/{profile}/table.log",
    shell:
        "halluscope stage trihe-table --settings {params.settings:q} --out {output.table:q} {input:q} "
        "> {log:q} 2>&1"


rule trihe_figure:
    """Object vs relation Hallu_I / Hallu_Q per model (the main judge), PDF + PNG."""
    input:
        trihe_score_files(),
    output:
        pdf="results/figures/{profile}/trihe_bars.pdf",
        png=report_figure(
            "results/figures/{profile}/trihe_bars.png", "trihe_bars", "Tri-HE", captions="."
        ),
    params:
        settings=settings_arg(trihe_report.TriheFigureSettings),
        code=code_version("figures"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/figures/{profile}/trihe_bars.log",
    shell:
        "halluscope stage trihe-figure --settings {params.settings:q} --out-stem results/figures/{wildcards.profile:q}/trihe_bars {input:q} > {log:q} 2>&1"


rule trihe_all:
    """DVC stage target: every Tri-HE score file."""
    input:
        trihe_score_files(),
