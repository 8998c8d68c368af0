# halluscope workflow: wiring only. Stage logic lives in rules/*.smk and src/halluscope.
# Run: snakemake --cores 8 results/tables/   (see README.md)

from snakemake.utils import min_version

min_version("9.0")

# Snakemake's own message for a YAML syntax error gives no line: check params.yaml first. Every
# --configfile too (Snakemake has read them already): a duplicate key, which Snakemake would
# silently resolve and DVC refuse, or aliases that expand without bound stop the run here.
from halluscope.config import check_yaml_syntax

check_yaml_syntax(["params.yaml", *workflow.overwrite_configfiles])


configfile: "params.yaml"


# `snakemake --report report.zip`: figures (PNG) and CSV twins, captions in docs/report/.
report: "docs/report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"


# The packaged benchmarks (halluscope.benchmarks): each one's own rules file (CAOS's brings its
# caption pipeline: generate, extract, oracle, embed), in any order, before the rules that
# collect every benchmark's tables and figures.
for _benchmark in BENCHMARKS:

    include: str(_benchmark.rules)


include: "rules/figures.smk"
include: "rules/tables.smk"
include: "rules/paper.smk"
include: "rules/explorer.smk"


# Outputs replaced since this project's runs wrote them (`dvc checkout`, `git checkout`, a
# copy) change their jobs' `code` param, so this run rebuilds them (halluscope.provenance).
rebuild_replaced_outputs()


# Every run, finished or failed, ends by recording the bytes of the files it leaves (how a
# replaced output is told from a touched one); a finished run that built the DVC stages' targets
# records them in dvc.lock (so DVC agrees with it), and one that built the tables prints where
# the results are and a few headline numbers.
onsuccess:
    from halluscope.report.closing import log_closing_block

    record_outputs()
    commit_dvc_stages()
    log_closing_block(workflow, config)


onerror:
    record_outputs()


rule all:
    default_target: True
    input:
        "results/tables",
        f"results/metrics/{RUN}.json",
        f"results/explorer/{RUN}/index.html",
        benchmark_figure_files(),
        dvc_stage_files(),
