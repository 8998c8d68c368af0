rule figure:
    """One CAOS figure (PDF + PNG, fixed metadata so reruns give identical bytes) and the numbers
    it draws (CSV, from the same frame: the DVC plots of caos_ksweep and caos_instructions)."""
    input:
        summary="results/scores/{dataset}/summary.csv",
        objects="results/scores/{dataset}/objects.csv",
    output:
        pdf="results/figures/{dataset}/{figure}.pdf",
        png=report(
            "results/figures/{dataset}/{figure}.png",
            caption="../docs/report/caos_figures.rst",
            category="CAOS",
            subcategory="Figures",
            labels=lambda wildcards: {
                "name": report_title(wildcards.figure),
                "profile": wildcards.dataset,
            },
        ),
        data=report(
            "results/figures/{dataset}/{figure}.csv",
            caption="../docs/report/caos_figure_data.rst",
            category="CAOS",
            subcategory="Figure data",
            labels=lambda wildcards: {
                "name": report_title(wildcards.figure),
                "profile": wildcards.dataset,
            },
        ),
    wildcard_constraints:
        figure="|".join(CAOS_FIGURES),
    params:
        dpi=config["figures"]["dpi"],
        exclude_top=config["figures"]["subsets_exclude_top"],
        frequent=json_arg(config["caos"]["frequent"]),
        k=config["caos"]["k"],
        table1=json_arg(config["tables"]["table1_instructions"]),
        embedders=json_arg({e: config["embed"]["specs"][e]["display"] for e in EMBEDDERS}),
        code=code_version("figures"),
    conda:
        "../envs/halluscope.yaml"
    log:
        "logs/figures/{dataset}/{figure}.log",
    shell:
        "halluscope stage figure --figure {wildcards.figure} "
        "--summary {input.summary} --objects {input.objects} --dpi {params.dpi} "
        "--exclude-top {params.exclude_top} --frequent {params.frequent} --k {params.k} "
        "--table1 {params.table1} --embedders {params.embedders} "
        "--out-stem results/figures/{wildcards.dataset}/{wildcards.figure} > {log} 2>&1"


rule figures_all:
    """DVC stage target: every figure."""
    input:
        caos_figure_files(),
        benchmark_figure_files(),
