rule caos_tables:
    """CAOS Tables 1-2 and the ratio table as booktabs LaTeX."""
    input:
        summary="results/scores/{dataset}/summary.csv",
    output:
        table1="results/report/{dataset}/caos_table1.tex",
        table2="results/report/{dataset}/caos_table2.tex",
        ratios="results/report/{dataset}/caos_ratios.tex",
        setting="results/report/{dataset}/caos_setting.tex",
        twins=report_csvs(
            expand(
                "results/report/{{dataset}}/{name}.csv",
                name=["caos_table1", "caos_table2", "caos_ratios"],
            ),
            "CAOS",
        ),
        reproduction=report_csvs(
            expand(
                "results/report/{{dataset}}/{name}",
                name=(
                    ["caos_comparison.tex", "caos_agreement.tex", "caos_agreement.csv", "caos_differences.tex"]
                    if config["tables"]["published"]
                    else []
                ),
            ),
            "CAOS",
        ),
    params:
        published="--published" if config["tables"]["published"] else "",
        precision_recall=config["tables"].get("precision_recall", "per_caption"),
        setting=json_arg(setting_summary()),
        decimals=config["tables"]["decimals"],
        k=config["caos"]["k"],
        models=json_arg(MODELS),
        instructions=json_arg(INSTRUCTIONS),
        embedders=json_arg({e: config["embed"]["specs"][e]["display"] for e in EMBEDDERS}),
        code=code_version("tables"),
    conda:
        "../envs/halluscope.yaml"
    log:
        "logs/tables/{dataset}.log",
    shell:
        "halluscope stage tables --summary {input.summary} "
        "--decimals {params.decimals} --k {params.k} --models {params.models} "
        "--instructions {params.instructions} --embedders {params.embedders} "
        "{params.published} --setting {params.setting} "
        "--precision-recall {params.precision_recall} --run {wildcards.dataset} "
        "--out-dir results/report/{wildcards.dataset} > {log} 2>&1"


rule caos_sensitivity:
    """How much K, the ratio aggregation and the precision/recall/# Objects readings move Table 1."""
    input:
        summary="results/scores/{dataset}/summary.csv",
        objects="results/scores/{dataset}/objects.csv",
        vectors=expand("results/embeddings/{{dataset}}/{embedder}.npz", embedder=EMBEDDERS),
    output:
        table="results/report/{dataset}/caos_sensitivity.tex",
        twin=report_csvs("results/report/{dataset}/caos_sensitivity.csv", "CAOS"),
    params:
        vectors=lambda wc, input: json_arg(dict(zip(EMBEDDERS, input.vectors))),
        frequent=json_arg(config["caos"]["frequent"]),
        alternatives=json_arg(config["caos"].get("sensitivity", SENSITIVITY_DEFAULT)),
        k=config["caos"]["k"],
        table1=json_arg(config["tables"]["table1_instructions"]),
        models=json_arg(MODELS),
        embedders=json_arg(EMBEDDERS),
        decimals=config["tables"]["decimals"],
        code=code_version("tables"),
    conda:
        "../envs/halluscope.yaml"
    log:
        "logs/tables/{dataset}.sensitivity.log",
    shell:
        "halluscope stage sensitivity --summary {input.summary} --objects {input.objects} "
        "--vectors {params.vectors} --frequent {params.frequent} "
        "--alternatives {params.alternatives} --k {params.k} --table1 {params.table1} "
        "--models {params.models} --embedders {params.embedders} "
        "--decimals {params.decimals} --run {wildcards.dataset} "
        "--out-dir results/report/{wildcards.dataset} > {log} 2>&1"


rule llm_comparison:
    """Table 1 with and without the LLM extractor on the same captions (tables.compare_with:
    the rule+lexicon profile of the same images, which must have run first)."""
    input:
        with_llm="results/scores/{dataset}/summary.csv",
        without_llm=f"results/scores/{config['tables'].get('compare_with')}/summary.csv",
        objects=lambda wc: object_files(wc.dataset),
    output:
        table="results/report/{dataset}/llm_comparison.tex",
        twin=report_csvs("results/report/{dataset}/llm_comparison.csv", "CAOS"),
    params:
        models=json_arg(MODELS),
        embedder=EMBEDDERS[0],
        decimals=config["tables"]["decimals"],
        baseline=config["tables"].get("compare_with"),
        n_images=config["data"].get("limit") or "all",
        code=code_version("tables"),
    conda:
        "../envs/halluscope.yaml"
    log:
        "logs/tables/{dataset}.llm_comparison.log",
    shell:
        "halluscope stage llm-comparison --with-llm {input.with_llm} "
        "--without-llm {input.without_llm} --models {params.models} --embedder {params.embedder} "
        "--decimals {params.decimals} --run {wildcards.dataset} --baseline {params.baseline} "
        "--n-images {params.n_images} --out {output.table} {input.objects} > {log} 2>&1"


# Exactly one rule owns results/tables (Snakemake resolves `results/tables/` to it); it assembles
# the per-benchmark tables written elsewhere.
rule tables:
    """Assemble every generated LaTeX table into results/tables/."""
    input:
        caos_table_files(),
        benchmark_table_files(),
    output:
        directory("results/tables"),
    params:
        run=RUN,
        code=code_version("tables"),
    conda:
        "../envs/halluscope.yaml"
    log:
        "logs/tables/assemble.log",
    shell:
        "halluscope stage assemble --out-dir {output} --run {params.run} "
        "--report-root results/report {input} > {log} 2>&1"


rule metrics:
    """One JSON of every table's numbers (from the CSV twins), DVC's `metrics:` for exp show."""
    input:
        [f for f in caos_table_files() + benchmark_table_files() if f.endswith(".csv")],
    output:
        f"results/metrics/{RUN}.json",
    params:
        code=code_version("tables"),
    conda:
        "../envs/halluscope.yaml"
    log:
        f"logs/tables/{RUN}.metrics.log",
    shell:
        "halluscope stage metrics --out {output} {input} > {log} 2>&1"
