"""PhD (Liu et al., CVPR 2025): yes/no questions in four modes (base, iac, icc, ccs) over five
tasks; the PhD Index per mode x task."""

from halluscope.benchmarks import Parts

PARTS = Parts(
    helpers=("common.smk",),
    stages={
        "stages": ("phd-prompts", "phd-answers", "phd-score"),
        "report": ("phd-table", "phd-figure"),
    },
    data="data",
    sources="sources",
    simulated="simulated",
    explorer="explorer",
    report="report",
    tables=("phd_table",),
    figures=("phd_heatmap",),
    paper=("paper.tex",),
)
