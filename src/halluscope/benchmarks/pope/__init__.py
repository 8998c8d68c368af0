"""POPE (Li et al., EMNLP 2023): "Is there a <object> in the image?" questions from the per-image
ground truth in three negative-sampling settings; accuracy, precision, recall, F1, yes ratio.
POPE-F1 (mean over the settings) also joins the CAOS tables (``benchmarks/caos/summarize.py``)."""

from halluscope.benchmarks import Parts

PARTS = Parts(
    helpers=("common.smk",),
    stages={"stages": ("pope-questions", "pope-answers", "pope-score")},
    sources="sources",
    check="check",
    simulated="simulated",
    explorer="explorer",
)
