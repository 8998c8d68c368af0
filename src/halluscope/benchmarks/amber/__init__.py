"""AMBER (Wang et al., 2023): the generative task (CHAIR, Cover, Hal, Cog) on its annotations."""

from halluscope.benchmarks import Parts

PARTS = Parts(
    helpers=("common.smk",),
    stages={"stages": ("amber-prompts", "amber-answers", "amber-score", "amber-table")},
    data="data",
    sources="sources",
    simulated="simulated",
    headlines="headlines",
    explorer="explorer",
    tables=("amber_table",),
)
