# HallusionBench: the questions of the subset (text-only by default) -> answers per model ->
# judged (rule, or the reference's LLM judge) and scored -> the aAcc / fAcc / qAcc table and the
# aAcc-by-subcategory figure. Included by the Snakefile through halluscope.benchmarks; stage
# code: src/halluscope/benchmarks/hallusionbench/stages.py (report.py beside it).
from halluscope.benchmarks.hallusionbench import settings as hallusionbench_settings
from halluscope.resources import model_resources
from halluscope.stages.answering import AnswerSettings

include: "common.smk"


rule hallusionbench_questions:
    """The questions of the subset and the items of their figures."""
    input:
        project_file((config.get("hallusionbench") or {}).get("questions")),
        project_file((config.get("hallusionbench") or {}).get("answered")),
    output:
        questions="results/hallusionbench/{profile}/questions.jsonl",
        item_file="results/hallusionbench/{profile}/items.jsonl",
    params:
        settings=settings_arg(hallusionbench_settings.HbQuestionSettings),
        code=code_version("hallusionbench"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/hallusionbench/{profile}/questions.log",
    shell:
        "halluscope stage hallusionbench-questions --settings {params.settings:q} "
        "--out {output.questions:q} --items-out {output.item_file:q} > {log:q} 2>&1"


rule hallusionbench_answers:
    """One model's answers to every question of the subset, with its figure, through the cache."""
    input:
        item_file="results/hallusionbench/{profile}/items.jsonl",
        questions="results/hallusionbench/{profile}/questions.jsonl",
    output:
        "results/hallusionbench/{profile}/{model}/answers.jsonl",
    params:
        settings=settings_arg(AnswerSettings, "model"),
        code=code_version("hallusionbench"),
    resources:
        **model_resources(config, "hallusionbench_answers"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/hallusionbench/{profile}/{model}/answers.log",
    shell:
        "halluscope stage hallusionbench-answers --settings {params.settings:q} "
        "--items {input.item_file:q} --questions {input.questions:q} "
        "--cache results/cache/responses --out {output:q} > {log:q} 2>&1"


rule hallusionbench_score:
    """aAcc, fAcc, qAcc and the reference's other numbers of one model's answers, judged."""
    input:
        answers="results/hallusionbench/{profile}/{model}/answers.jsonl",
        questions=project_file((config.get("hallusionbench") or {}).get("questions")),
    output:
        "results/hallusionbench/{profile}/{model}/scores.json",
    params:
        settings=settings_arg(hallusionbench_settings.HbScoreSettings),
        code=code_version("hallusionbench"),
    resources:
        **model_resources(config, "hallusionbench_score"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/hallusionbench/{profile}/{model}/score.log",
    shell:
        "halluscope stage hallusionbench-score --settings {params.settings:q} "
        "--answers {input.answers:q} --cache results/cache/responses --out {output:q} "
        "> {log:q} 2>&1"


rule hallusionbench_table:
    """aAcc, fAcc, qAcc, easy and hard qAcc per model, the subset scored stated."""
    input:
        lambda wc: hallusionbench_score_files(wc.profile),
    output:
        table="results/report/{profile}/hallusionbench_table.tex",
        twin=report(
            "results/report/{profile}/hallusionbench_table.csv",
            caption="hallusionbench_table.rst",
            category="HallusionBench",
            subcategory="Tables",
            labels={"name": report_title("hallusionbench_table"), "profile": "{profile}"},
        ),
    params:
        settings=settings_arg(hallusionbench_settings.HbTableSettings),
        code=code_version("tables"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/hallusionbench/{profile}/table.log",
    shell:
        "halluscope stage hallusionbench-table --settings {params.settings:q} "
        "--out {output.table:q} {input:q} > {log:q} 2>&1"


rule hallusionbench_published:
    """Ours beside the published numbers of the models hallusionbench.published names."""
    input:
        lambda wc: hallusionbench_score_files(wc.profile),
    output:
        table="results/report/{profile}/hallusionbench_published.tex",
        twin=report(
            "results/report/{profile}/hallusionbench_published.csv",
            caption="hallusionbench_published.rst",
            category="HallusionBench",
            subcategory="Tables",
            labels={"name": report_title("hallusionbench_published"), "profile": "{profile}"},
        ),
    params:
        settings=settings_arg(hallusionbench_settings.HbTableSettings),
        code=code_version("tables"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/hallusionbench/{profile}/published.log",
    shell:
        "halluscope stage hallusionbench-published --settings {params.settings:q} "
        "--out {output.table:q} {input:q} > {log:q} 2>&1"


rule hallusionbench_figure:
    """aAcc per subcategory, one bar per model, PDF + PNG."""
    input:
        hallusionbench_score_files(),
    output:
        pdf="results/figures/{profile}/hallusionbench_bars.pdf",
        png=report(
            "results/figures/{profile}/hallusionbench_bars.png",
            caption="hallusionbench_bars.rst",
            category="HallusionBench",
            subcategory="Figures",
            labels={"name": report_title("hallusionbench_bars"), "profile": "{profile}"},
        ),
    params:
        settings=settings_arg(hallusionbench_settings.HbFigureSettings),
        code=code_version("figures"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/figures/{profile}/hallusionbench_bars.log",
    shell:
        "halluscope stage hallusionbench-figure --settings {params.settings:q} "
        "--out-stem results/figures/{wildcards.profile:q}/hallusionbench_bars {input:q} "
        "> {log:q} 2>&1"


rule hallusionbench_all:
    """DVC stage target: every HallusionBench score file."""
    input:
        hallusionbench_score_files(),
