rule caos_tables:
    """CAOS Tables 1-2 and the ratio table as booktabs LaTeX."""
    input:
        summary="results/scores/{dataset}/summary.csv",
    output:
        table1="results/report/{dataset}/caos_table1.tex",
        table2="results/report/{dataset}/caos_table2.tex",
        ratios="results/report/{dataset}/caos_ratios.tex",
        setting="results/report/{dataset}/caos_setting.tex",
    params:
        published="--published" if config["tables"]["published"] else "",
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
        "halluscope stage-tables --summary {input.summary} "
        "--decimals {params.decimals} --k {params.k} --models {params.models} "
        "--instructions {params.instructions} --embedders {params.embedders} "
        "{params.published} --setting {params.setting} "
        "--out-dir results/report/{wildcards.dataset} > {log} 2>&1"


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
        code=code_version("tables"),
    conda:
        "../envs/halluscope.yaml"
    log:
        "logs/tables/assemble.log",
    shell:
        "halluscope stage-assemble --out-dir {output} {input} > {log} 2>&1"
