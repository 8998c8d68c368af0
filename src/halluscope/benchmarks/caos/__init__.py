"""CAOS (Context-Aware Object Similarities, the CAOS paper's Algorithm 1) with the CHAIR-style
counts of its Table 1: score each caption's objects (``metric.py``; ``score.py`` per model x
instruction x embedder), pool them into ``summary.csv`` (``summarize.py``; POPE-F1 joins it),
and draw Figures 3-6 and Tables 1-2 with the ratio, sensitivity and comparison tables
(``report.py``, ``figures.py``, ``tables.py``), and the paired differences between its models
and between one model's instructions (``paired.py``). The captions, object lists, oracle
decisions and vectors it reads come from the data stage and the caption pipeline
(``captions/``: generate, extract, oracle, embed)."""

from halluscope.benchmarks import Parts

# Its stages keep their unprefixed names (``score``, ``figure``, ``tables``...: the paper's own
# benchmark, named before the registry); its caption pipeline's rules files (generate.smk,
# extract.smk, oracle.smk, embed.smk) are included by rules.smk and named by code_stages.py.
PARTS = Parts(
    helpers=("common.smk",),
    stages={
        "captions.generate": ("generate",),
        "captions.extract": ("extract", "extract-nouns", "extract-report"),
        "captions.oracle": ("oracle-decide", "oracle-pool"),
        "captions.embed": ("embed",),
        "score": ("score",),
        "summarize": ("summarize",),
        "sensitivity_p": ("sensitivity-p",),
        "report": ("figure", "tables", "caos-paired", "sensitivity", "llm-comparison"),
    },
    check="check",
    params_check="params_check",
    needs="needs",
    explorer="explorer",
    report="report",
    report_files="report_files",
    code_stages="code_stages",
    labels=(
        "caos_agreement",
        "caos_comparison",
        "caos_instructions",
        "caos_ksweep",
        "caos_paired",
        "caos_radar",
        "caos_ratios",
        "caos_sensitivity",
        "caos_sensitivity_p",
        "caos_subsets",
        "caos_table1",
        "caos_table2",
        "llm_comparison",
    ),
    paper=("paper.tex", "paper-llm.tex"),
)
