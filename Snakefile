# halluscope workflow: wiring only. Stage logic lives in rules/*.smk and src/halluscope.
# Run: snakemake --cores 8 results/tables/   (see README.md)

from snakemake.utils import min_version

min_version("9.0")

# Snakemake's own message for a YAML syntax error gives no line: check params.yaml first.
from halluscope.config import check_yaml_syntax

check_yaml_syntax(["params.yaml"])


configfile: "params.yaml"


# `snakemake --report report.zip`: figures (PNG) and CSV twins, captions in docs/report/.
report: "docs/report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/generate.smk"
include: "rules/extract.smk"
include: "rules/oracle.smk"
include: "rules/embed.smk"
include: "rules/score.smk"
include: "rules/figures.smk"
include: "rules/tables.smk"
include: "rules/paper.smk"


# The packaged benchmarks (halluscope.benchmarks): each one's own rules file.
for _benchmark in BENCHMARKS:

    include: str(_benchmark.rules)


rule all:
    default_target: True
    input:
        "results/tables",
        f"results/metrics/{RUN}.json",
        caos_figure_files(),
        benchmark_figure_files(),
