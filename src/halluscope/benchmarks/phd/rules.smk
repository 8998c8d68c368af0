# PhD: prompts per mode x task -> answers per model -> PhD Index by mode x task, the mode x task
# table and heatmap. Included by the Snakefile through halluscope.benchmarks; stage code:
# src/halluscope/benchmarks/phd/stages.py (report.py beside it).
from halluscope.benchmarks.phd import settings as phd_settings
from halluscope.resources import model_resources
from halluscope.stages.answering import AnswerSettings

include: "common.smk"


rule phd_prompts:
    """Every PhD prompt (mode x record x yes/no label), checked against the items."""
    input:
        item_file="results/data/{profile}/items.jsonl",
        questions=project_file(config["phd"]["questions"]),
    output:
        "results/phd/{profile}/prompts.jsonl",
    params:
        settings=settings_arg(phd_settings.PhdPromptSettings),
        code=code_version("phd"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/phd/{profile}/prompts.log",
    shell:
        "halluscope stage phd-prompts --settings {params.settings:q} --items {input.item_file:q} "
        "--out {output:q} > {log:q} 2>&1"


rule phd_answers:
    """One model's yes/no answers to every PhD prompt, with the image, through the cache."""
    input:
        item_file="results/data/{profile}/items.jsonl",
        prompts="results/phd/{profile}/prompts.jsonl",
    output:
        "results/phd/{profile}/{model}/answers.jsonl",
    params:
        settings=settings_arg(AnswerSettings, "model"),
        code=code_version("phd"),
    resources:
        **model_resources(config, "phd_answers"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/phd/{profile}/{model}/answers.log",
    shell:
        "halluscope stage phd-answers --settings {params.settings:q} --items {input.item_file:q} "
        "--prompts {input.prompts:q} --cache results/cache/responses --out {output:q} > {log:q} 2>&1"


rule phd_score:
    """PhD Index overall, per mode, per task and per mode x task for one model."""
    input:
        "results/phd/{profile}/{model}/answers.jsonl",
    output:
        "results/phd/{profile}/{model}/scores.json",
    params:
        settings=settings_arg(phd_settings.PhdScoreSettings),
        code=code_version("phd"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/phd/{profile}/{model}/score.log",
    shell:
        "halluscope stage phd-score --settings {params.settings:q} --answers {input:q} "
        "--out {output:q} > {log:q} 2>&1"


rule phd_table:
    """PhD Index by model x mode (rows) and task (columns)."""
    input:
        lambda wc: phd_score_files(wc.profile),
    output:
        table="results/report/{profile}/phd_table.tex",
        twin=report(
            "results/report/{profile}/phd_table.csv",
            caption="phd_table.rst",
            category="PhD",
            subcategory="Tables",
            labels={"name": report_title("phd_table"), "profile": "{profile}"},
        ),
    params:
        settings=settings_arg(phd_settings.PhdTableSettings),
        code=code_version("tables"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/phd/{profile}/table.log",
    shell:
        "halluscope stage phd-table --settings {params.settings:q} --out {output.table:q} {input:q} "
        "> {log:q} 2>&1"


rule phd_figure:
    """PhD Index mode x task heatmap, one panel per model, PDF + PNG."""
    input:
        phd_score_files(),
    output:
        pdf="results/figures/{profile}/phd_heatmap.pdf",
        png=report(
            "results/figures/{profile}/phd_heatmap.png",
            caption="phd_heatmap.rst",
            category="PhD",
            subcategory="Figures",
            labels={"name": report_title("phd_heatmap"), "profile": "{profile}"},
        ),
    params:
        settings=settings_arg(phd_settings.PhdFigureSettings),
        code=code_version("figures"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/figures/{profile}/phd_heatmap.log",
    shell:
        "halluscope stage phd-figure --settings {params.settings:q} --out-stem results/figures/{wildcards.profile:q}/phd_heatmap {input:q} > {log:q} 2>&1"


rule phd_all:
    """DVC stage target: every PhD score file."""
    input:
        phd_score_files(),
