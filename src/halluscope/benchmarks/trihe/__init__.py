"""Tri-HE (Wu et al., arXiv:2410.23114): triplets of a model's answers judged against the image's
scene graph; Hallu_Q / Hallu_I, split into object and relation hallucinations.

The metric (judgement rules on given similarities, object/relation split, the rates) is
:mod:`~halluscope.benchmarks.trihe.metric`; the judges that load or call a model are
:mod:`~halluscope.benchmarks.trihe.judges`; the triplet extraction
:mod:`~halluscope.benchmarks.trihe.triplets`; the hand-check command ``halluscope trihe``
:mod:`~halluscope.benchmarks.trihe.check`."""

from halluscope.benchmarks import Parts

PARTS = Parts(
    helpers=("common.smk",),
    stages={
        "stages": ("trihe-questions", "trihe-answers", "trihe-triplets", "trihe-judge"),
        "report": ("trihe-table", "trihe-figure"),
    },
    data="data",
    sources="sources",
    check="check",
    needs="needs",
    simulated="simulated",
    explorer="explorer",
    report="report",
    tables=("trihe_table",),
    figures=("trihe_bars",),
    paper=("paper.tex",),
)
