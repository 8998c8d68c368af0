"""HallusionBench (Guan et al., CVPR 2024): yes/no questions on figures, charts, maps, tables,
illusions and videos, built so that language hallucination and visual illusion can be told
apart; scored per question (aAcc), per figure (fAcc) and per question pair (qAcc)."""

from halluscope.benchmarks import Parts

PARTS = Parts(
    helpers=("common.smk",),
    stages={
        "stages": ("hallusionbench-questions", "hallusionbench-answers", "hallusionbench-score"),
        "report": ("hallusionbench-table", "hallusionbench-published", "hallusionbench-figure"),
    },
    sources="sources",
    check="check",
    needs="needs",
    simulated="simulated",
    headlines="headlines",
    explorer="explorer",
    report="report",
    tables=("hallusionbench_table", "hallusionbench_published"),
    figures=("hallusionbench_bars",),
    paper=("paper.tex",),
)
