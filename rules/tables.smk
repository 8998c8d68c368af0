# Exactly one rule owns results/tables (Snakemake resolves `results/tables/` to it); it assembles
# the per-benchmark tables written elsewhere: the active profile's, and every other profile's
# that has run. It reads no params, and its inputs are the same whichever profile runs it (once
# both ran), so one profile's run never leaves another's `snakemake -n` with work.


rule tables:
    """Assemble every generated LaTeX table into results/tables/<profile>/."""
    input:
        benchmark_table_files(),
        other_profile_tables(),
    output:
        directory("results/tables"),
    params:
        code=code_version("tables"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/tables/assemble.log",
    shell:
        "halluscope stage assemble --out-dir {output:q} {input:q} > {log:q} 2>&1"


rule metrics:
    """One JSON of every table's numbers (from the CSV twins), and the headline numbers per model
    (one small JSON per model: DVC's `metrics:`, in git, for `dvc metrics show` / `exp show`)."""
    input:
        [f for f in benchmark_table_files() if f.endswith(".csv")],
    output:
        full=f"results/metrics/{RUN}.json",
        headline=directory(f"metrics/{RUN}"),
    params:
        code=code_version("tables"),
    conda:
        HALLUSCOPE_ENV
    log:
        f"logs/tables/{RUN}.metrics.log",
    shell:
        "halluscope stage metrics --out {output.full:q} --headline-dir {output.headline:q} {input:q}"
        " > {log:q} 2>&1"


rule report_all:
    """DVC stage `report`: every enabled benchmark's tables and figures, the metrics JSON, the
    headline numbers and the explorer page."""
    input:
        "results/tables",
        f"results/metrics/{RUN}.json",
        f"metrics/{RUN}",
        benchmark_figure_files(),
        f"results/explorer/{RUN}/index.html",
