# NOPE: NegP questions by list-then-rewrite (LLM, sharded) -> answers per model -> accuracy,
# METEOR, NegP accuracy; lexical diversity; the Table 3 layout, the breakdown table and the
# per-question-type figure. Included by the Snakefile through halluscope.benchmarks; stage code:
# src/halluscope/benchmarks/nope/stages.py (report.py beside it: the table and figure).
from halluscope.benchmarks.nope import settings as nope_settings
from halluscope.benchmarks.nope.stages import NopeGeneratorSettings
from halluscope.benchmarks.nope.stages import check_config as nope_check_config
from halluscope.resources import model_resources, model_threads
from halluscope.stages.answering import AnswerSettings

nope_check_config(config)


include: "common.smk"


rule nope_generate:
    """List-then-rewrite with the extractor LLM for one shard of the images, through the cache."""
    input:
        item_file="results/data/{profile}/items.jsonl",
        fallback=config["nope"]["fallback_objects"] or [],
    output:
        "results/nope/{profile}/generated/shard{shard}.json",
    wildcard_constraints:
        shard=r"\d+",
    params:
        settings=settings_arg(NopeGeneratorSettings),
        code=code_version("nope"),
    resources:
        **model_resources(config, "nope_generate"),
    threads: model_threads(config, "nope_generate")
    priority: LLM_PRIORITY
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/nope/{profile}/generate.shard{shard}.log",
    shell:
        "HALLUSCOPE_THREADS={threads:q} halluscope stage nope-generate --settings {params.settings:q} --items {input.item_file:q} "
        "--cache results/cache/responses --shard {wildcards.shard:q} "
        "--out {output:q} > {log:q} 2>&1"


rule nope_questions:
    """The benchmark questions: valid NegP questions of every shard + the other questions."""
    input:
        item_file="results/data/{profile}/items.jsonl",
        shards=lambda wc: nope_shard_files(wc.profile),
    output:
        questions="results/nope/{profile}/questions.jsonl",
        report="results/nope/{profile}/generation.json",
    params:
        settings=settings_arg(NopeGeneratorSettings),
        code=code_version("nope"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/nope/{profile}/questions.log",
    shell:
        "halluscope stage nope-questions --settings {params.settings:q} --items {input.item_file:q} "
        "--out-questions {output.questions:q} --out-report {output.report:q} {input.shards:q} "
        "> {log:q} 2>&1"


rule nope_answers:
    """One model's short answers to every NOPE question, with the image, through the cache."""
    input:
        item_file="results/data/{profile}/items.jsonl",
        questions="results/nope/{profile}/questions.jsonl",
    output:
        "results/nope/{profile}/{model}/answers.jsonl",
    params:
        settings=settings_arg(AnswerSettings, "model"),
        code=code_version("nope"),
    resources:
        **model_resources(config, "nope_answers"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/nope/{profile}/{model}/answers.log",
    shell:
        "halluscope stage nope-answers --settings {params.settings:q} --items {input.item_file:q} "
        "--questions {input.questions:q} --cache results/cache/responses --out {output:q} > {log:q} 2>&1"


rule nope_score:
    """Accuracy, METEOR 1.5 (Java) and NegP accuracy by question type and relevance. One job
    scores every model (paths paired by position), so METEOR's Java process starts once."""
    input:
        expand("results/nope/{{profile}}/{model}/answers.jsonl", model=MODELS),
    output:
        expand("results/nope/{{profile}}/{model}/scores.json", model=MODELS),
    params:
        settings=settings_arg(nope_settings.NopeScoreSettings),
        code=code_version("nope"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/nope/{profile}/score.log",
    shell:
        "halluscope stage nope-score --settings {params.settings:q} --answers {input:q} --out {output:q} "
        "> {log:q} 2>&1"


rule nope_lexdiv:
    """MATTR, MTLD and HD-D of the NegP and the other question sets."""
    input:
        "results/nope/{profile}/questions.jsonl",
    output:
        "results/nope/{profile}/lexdiv.json",
    params:
        code=code_version("nope"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/nope/{profile}/lexdiv.log",
    shell:
        "halluscope stage nope-lexdiv --questions {input:q} --out {output:q} > {log:q} 2>&1"


rule nope_table:
    """NOPE Table 3 layout (models x NegP / other questions) and the breakdown table."""
    input:
        scores=lambda wc: nope_score_files(wc.profile),
        lexdiv="results/nope/{profile}/lexdiv.json",
        generation="results/nope/{profile}/generation.json",
    output:
        table="results/report/{profile}/nope_table.tex",
        breakdown="results/report/{profile}/nope_breakdown.tex",
        twins=report_csvs(
            expand("results/report/{{profile}}/{name}.csv", name=["nope_table", "nope_breakdown"]),
            "NOPE",
            captions=".",
        ),
    params:
        settings=settings_arg(nope_settings.NopeTableSettings),
        code=code_version("tables"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/nope/{profile}/table.log",
    shell:
        "halluscope stage nope-table --settings {params.settings:q} "
        "--lexdiv {input.lexdiv:q} --generation {input.generation:q} --out-table {output.table:q} "
        "--out-breakdown {output.breakdown:q} {input.scores:q} > {log:q} 2>&1"


rule nope_figure:
    """Accuracy per question type per model (NegP and other questions), PDF + PNG."""
    input:
        nope_score_files(),
    output:
        pdf="results/figures/{profile}/nope_question_types.pdf",
        png=report_figure(
            "results/figures/{profile}/nope_question_types.png",
            "nope_question_types",
            "NOPE",
            captions=".",
        ),
    params:
        settings=settings_arg(nope_settings.NopeFigureSettings),
        code=code_version("figures"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/figures/{profile}/nope_question_types.log",
    shell:
        "halluscope stage nope-figure --settings {params.settings:q} "
        "--out-stem results/figures/{wildcards.profile:q}/nope_question_types {input:q} > {log:q} 2>&1"


rule nope_all:
    """DVC stage target: every NOPE score file and the lexical diversity."""
    input:
        nope_score_files(),
        expand("results/nope/{profile}/lexdiv.json", profile=RUN) if config["nope"]["enabled"] else [],
