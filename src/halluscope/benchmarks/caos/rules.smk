# CAOS (the CAOS paper's Algorithm 1, with CHAIR-style counts). Its caption pipeline: captions
# per model x instruction (generate.smk) -> ordered object lists (extract.smk) -> presence of the
# out-of-domain objects (oracle.smk) -> vectors of every name and of K (embed.smk); then here:
# score each model x instruction x embedder -> pool into summary.csv (POPE-F1 joins it) ->
# Figures 3-6, Tables 1-2, the ratio and sensitivity tables, the setting note and the
# with/without-LLM comparison; the paired differences between models and between instructions
# from the score files. Included by the Snakefile through halluscope.benchmarks; stage
# functions (@stage): the caption pipeline's in this package's captions/, the rest beside this
# file (score.py, summarize.py, report.py, sensitivity_p.py).


from halluscope.benchmarks.caos import report as caos_report
from halluscope.benchmarks.caos.score import CaosScoreSettings
from halluscope.benchmarks.caos.settings import RateSettings
from halluscope.benchmarks.caos.summarize import SummarizeSettings


include: "common.smk"
include: "generate.smk"
include: "extract.smk"
include: "oracle.smk"
include: "embed.smk"


# One job per model x embedder scores every instruction: scoring a caption file takes a few
# hundredths of a second, a process start and loading the vectors ~0.3 s. The vectors are read
# with ancient(): a vector depends only on its name and the embedder spec (a params of this
# rule), so new captions of another model re-embed but do not rescore this model.
rule score:
    """CAOS (Algorithm 1) and CHAIR-style counts for one model x embedder, per instruction."""
    input:
        objects=expand(
            "results/objects/{{profile}}/{{model}}/{instruction}.jsonl", instruction=INSTRUCTIONS
        ),
        oracle=expand(
            "results/oracle/{{profile}}/{{model}}/{instruction}.jsonl", instruction=INSTRUCTIONS
        ),
        item_file="results/data/{profile}/items.jsonl",
        vectors=ancient("results/embeddings/{profile}/{embedder}.npz"),
    output:
        captions=expand(
            "results/scores/{{profile}}/{{embedder}}/{{model}}/{instruction}.captions.csv",
            instruction=INSTRUCTIONS,
        ),
        objects=expand(
            "results/scores/{{profile}}/{{embedder}}/{{model}}/{instruction}.objects.csv",
            instruction=INSTRUCTIONS,
        ),
    params:
        settings=settings_arg(CaosScoreSettings, "embedder"),
        code=code_version("score"),
    priority: CAPTION_PRIORITY
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/score/{profile}/{embedder}/{model}.log",
    shell:
        "halluscope stage score --settings {params.settings:q} --objects {input.objects:q} "
        "--oracle {input.oracle:q} --items {input.item_file:q} --vectors {input.vectors:q} "
        "--model-id {wildcards.model:q} --out-captions {output.captions:q} --out-objects {output.objects:q} > {log:q} 2>&1"


rule summarize:
    """Pool per-job scores into the summary used by every table and figure."""
    input:
        captions=score_files(),
        pope=pope_f1_files(),
    output:
        summary="results/scores/{profile}/summary.csv",
        objects="results/scores/{profile}/objects.csv",
    params:
        settings=settings_arg(SummarizeSettings),
        code=code_version("score"),
    priority: CAPTION_PRIORITY
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/summarize/{profile}.log",
    shell:
        "halluscope stage summarize --settings {params.settings:q} "
        "--out-summary {output.summary:q} --out-objects {output.objects:q} "
        "--pope {input.pope:q} -- {input.captions:q} > {log:q} 2>&1"


rule score_all:
    """DVC stage target: every score file and the summary."""
    input:
        f"results/scores/{RUN}/summary.csv",


rule caos_all:
    """DVC stage `caos`: the caption pipeline (captions, object lists, oracle, vectors) and the
    scores."""
    input:
        rules.generate_all.input,
        rules.extract_all.input,
        rules.oracle_all.input,
        rules.embed_all.input,
        rules.score_all.input,


rule figure:
    """Every CAOS figure (PDF + PNG, fixed metadata so reruns give identical bytes) and the numbers
    each draws (CSV, from the same frame: the DVC plots of caos_ksweep and caos_instructions), in
    one job: a figure takes ~1 s to draw but ~2.5 s to import matplotlib and seaborn."""
    input:
        summary="results/scores/{profile}/summary.csv",
        objects="results/scores/{profile}/objects.csv",
    output:
        pdf=expand("results/figures/{{profile}}/{figure}.pdf", figure=CAOS_FIGURES),
        png=[
            report(
                f"results/figures/{{profile}}/{figure}.png",
                caption=f"./{figure}.rst",
                category="CAOS",
                subcategory="Figures",
                labels={"name": report_title(figure), "profile": "{profile}"},
            )
            for figure in CAOS_FIGURES
        ],
        data=[
            report(
                f"results/figures/{{profile}}/{figure}.csv",
                caption=f"./{figure}_data.rst",
                category="CAOS",
                subcategory="Figure data",
                labels={"name": report_title(figure), "profile": "{profile}"},
            )
            for figure in CAOS_FIGURES
        ],
    params:
        settings=settings_arg(caos_report.CaosFigureSettings),
        stems=lambda wc, output: [path.removesuffix(".pdf") for path in output.pdf],
        figures=lambda wc, output: [os.path.basename(p).removesuffix(".pdf") for p in output.pdf],
        code=code_version("figures"),
    priority: CAPTION_PRIORITY
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/figures/{profile}/caos.log",
    shell:
        "halluscope stage figure --settings {params.settings:q} --figure {params.figures:q} "
        "--summary {input.summary:q} --objects {input.objects:q} --out-stem {params.stems:q} "
        "> {log:q} 2>&1"


rule caos_tables:
    """CAOS Tables 1-2 and the ratio table as booktabs LaTeX."""
    input:
        summary="results/scores/{profile}/summary.csv",
    output:
        table1="results/report/{profile}/caos_table1.tex",
        table2="results/report/{profile}/caos_table2.tex",
        ratios="results/report/{profile}/caos_ratios.tex",
        setting="results/report/{profile}/caos_setting.tex",
        twins=report_csvs(
            expand(
                "results/report/{{profile}}/{name}.csv",
                name=["caos_table1", "caos_table2", "caos_ratios"],
            ),
            "CAOS",
            captions=".",
        ),
        reproduction=report_csvs(
            expand(
                "results/report/{{profile}}/{name}",
                name=(
                    ["caos_comparison.tex", "caos_comparison.csv", "caos_agreement.tex",
                     "caos_agreement.csv", "caos_differences.tex"]
                    if config["tables"]["published"]
                    else []
                ),
            ),
            "CAOS",
            captions=".",
        ),
    params:
        settings=settings_arg(caos_report.CaosTableSettings),
        code=code_version("tables"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/tables/{profile}.log",
    shell:
        "halluscope stage tables --settings {params.settings:q} --summary {input.summary:q} "
        "--out-dir results/report/{wildcards.profile:q} > {log:q} 2>&1"


# Reads the per-caption score files, not the summary: the image of each caption is what is
# resampled. Its settings read params.yaml's `intervals`, so a new level reruns it (and the
# summary), never a caption, extraction, oracle, vector or score job.
rule caos_paired:
    """Paired differences of the headline numbers between every two models (pooled Table 1
    instructions) and every two instructions of one model, with paired intervals and
    Holm-adjusted permutation p-values."""
    input:
        captions=score_files(),
    output:
        table="results/report/{profile}/caos_paired.tex",
        twin=report_csvs("results/report/{profile}/caos_paired.csv", "CAOS", captions="."),
    params:
        settings=settings_arg(caos_report.PairedSettings),
        code=code_version("tables"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/tables/{profile}.paired.log",
    shell:
        "halluscope stage caos-paired --settings {params.settings:q} --out {output.table:q} "
        "-- {input.captions:q} > {log:q} 2>&1"


rule caos_sensitivity:
    """How much K, the ratio aggregation and the precision/recall/# Objects readings move Table 1."""
    input:
        summary="results/scores/{profile}/summary.csv",
        objects="results/scores/{profile}/objects.csv",
        vectors=expand("results/embeddings/{{profile}}/{embedder}.npz", embedder=EMBEDDERS),
    output:
        table="results/report/{profile}/caos_sensitivity.tex",
        twin=report_csvs("results/report/{profile}/caos_sensitivity.csv", "CAOS", captions="."),
    params:
        settings=settings_arg(caos_report.SensitivitySettings),
        vectors=lambda wc, input: json_arg(dict(zip(EMBEDDERS, input.vectors))),
        code=code_version("tables"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/tables/{profile}.sensitivity.log",
    shell:
        "halluscope stage sensitivity --settings {params.settings:q} --summary {input.summary:q} "
        "--objects {input.objects:q} --vectors {params.vectors:q} "
        "--out-dir results/report/{wildcards.profile:q} > {log:q} 2>&1"


# Reads the object lists and oracle decisions again (not the score files): at rate p every
# unverified object is drawn hallucinated or present, and a present one changes T and X of the
# caption's other objects, so the captions are scored again. Code digest of the caos package
# (its stage modules, this view's among them), not of the tables stage: it is not a DVC stage
# (the demo prints no published values).
rule caos_sensitivity_p:
    """Table 1 with the unverified out-of-domain objects hallucinated at a per-model rate p solved
    from the paper's printed CHAIR_S: a labelled sensitivity view beside the bounds."""
    input:
        summary="results/scores/{profile}/summary.csv",
        objects=lambda wc: expand(
            "results/objects/{profile}/{model}/{instruction}.jsonl",
            profile=wc.profile, model=MODELS, instruction=config["tables"]["table1_instructions"],
        ),
        oracle=lambda wc: expand(
            "results/oracle/{profile}/{model}/{instruction}.jsonl",
            profile=wc.profile, model=MODELS, instruction=config["tables"]["table1_instructions"],
        ),
        item_file="results/data/{profile}/items.jsonl",
        vectors=expand("results/embeddings/{{profile}}/{embedder}.npz", embedder=EMBEDDERS),
    output:
        table="results/report/{profile}/caos_sensitivity_p.tex",
        twin=report_csvs("results/report/{profile}/caos_sensitivity_p.csv", "CAOS", captions="."),
    params:
        objects=lambda wc, input: json_arg(by_model_instruction(input.objects)),
        oracle=lambda wc, input: json_arg(by_model_instruction(input.oracle)),
        vectors=lambda wc, input: json_arg(dict(zip(EMBEDDERS, input.vectors))),
        settings=settings_arg(RateSettings),
        code=code_version("caos"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/tables/{profile}.sensitivity_p.log",
    shell:
        "halluscope stage sensitivity-p --settings {params.settings:q} --summary {input.summary:q} "
        "--objects {params.objects:q} --oracle {params.oracle:q} --items {input.item_file:q} "
        "--vectors {params.vectors:q} --out-dir results/report/{wildcards.profile:q} > {log:q} 2>&1"


rule llm_comparison:
    """Table 1 with and without the LLM extractor on the same captions (tables.compare_with:
    the rule+lexicon profile of the same images, which must have run first)."""
    input:
        with_llm="results/scores/{profile}/summary.csv",
        without_llm=f"results/scores/{config['tables'].get('compare_with')}/summary.csv",
        objects=lambda wc: object_files(wc.profile),
    output:
        table="results/report/{profile}/llm_comparison.tex",
        twin=report_csvs("results/report/{profile}/llm_comparison.csv", "CAOS", captions="."),
    params:
        settings=settings_arg(caos_report.ComparisonSettings),
        code=code_version("tables"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/tables/{profile}.llm_comparison.log",
    shell:
        "halluscope stage llm-comparison --settings {params.settings:q} "
        "--with-llm {input.with_llm:q} --without-llm {input.without_llm:q} --out {output.table:q} "
        "{input.objects:q} > {log:q} 2>&1"
