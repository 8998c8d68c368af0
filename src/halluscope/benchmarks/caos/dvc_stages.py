"""CAOS's DVC stages and plots, which :mod:`halluscope.registry` collects into ``dvc.yaml``.

CAOS is the one benchmark with several DVC stages: its caption pipeline (generate, extract,
oracle, embed) and its scores, each a Snakemake target of its own rules, so that an edit of one
step reruns that step and what follows it. Plain data here (the registry builds its ``Stage`` and
``Plot`` records from these keyword arguments), so this module imports nothing of the registry.
"""

from __future__ import annotations

HERE = "src/halluscope/benchmarks/caos"
#: the rules of score, summarize, figure, caos_tables, ..., their helpers and the ``caos``
#: section's schema (the defaults of its keys)
RULES = [f"{HERE}/rules.smk", f"{HERE}/common.smk", f"{HERE}/schema.json"]


def _caption_step(name: str, outs: list[str], upstream: list[str], description: str) -> dict:
    """A step of the caption pipeline: rule file ``<name>.smk``, stage code
    ``captions/<name>.py``, Snakemake target ``<name>_all``."""
    return dict(
        name=name,
        target=f"{name}_all",
        code=[f"{HERE}/{name}.smk", f"{HERE}/captions/{name}.py"],
        outs=outs,
        upstream=upstream,
        description=description,
    )


#: Before the other benchmarks' stages (generate, extract, oracle) and after them (embed, score),
#: as ``dvc.yaml`` lists them.
BEFORE = [
    _caption_step(
        "generate", ["results/responses"], ["results/data"], "captions per model x instruction"
    ),
    _caption_step(
        "extract",
        ["results/objects", "results/nouns"],
        ["results/responses"],
        "ordered object lists (L1 + L2)",
    ),
    _caption_step(
        "oracle",
        ["results/oracle"],
        ["results/objects", "results/data"],
        "presence of out-of-domain objects",
    ),
]
AFTER = [
    _caption_step(
        "embed", ["results/embeddings"], ["results/objects", "results/data"], "object vectors"
    ),
    dict(
        name="score",
        target="score_all",
        code=[*RULES, f"{HERE}/score.py", f"{HERE}/summarize.py"],
        outs=["results/scores"],
        upstream=["results/objects", "results/oracle", "results/embeddings", "results/pope"],
        description="CAOS, CHAIR, precision, recall",
    ),
]
#: What the figures and tables stages read of CAOS (besides its rules and report code), and what
#: the explorer page shows.
REPORTED = ["results/scores"]
SHOWN = ["results/responses", "results/objects", "results/oracle", "results/scores"]

#: ``dvc plots show`` / ``dvc plots diff``: the data behind Figures 4 and 6 (the ``series_*``
#: templates of ``.dvc/plots/`` draw one series per model x embedder and leave out a row whose
#: x or y cell is blank: Figure 6's instructions without CAOS_T).
PLOTS = [
    dict(
        name="caos_ksweep",
        x="k",
        y="CAOS_K",
        template="series_linear",
        title="CAOS_K for k = 1..10 (Figure 4)",
        x_label="k (size of K, the most frequent objects)",
        y_label="CAOS_K",
    ),
    dict(
        name="caos_instructions",
        x="CAOS_T",
        y=["CAOS_X", "CAOS_K"],
        template="series_scatter",
        title="CAOS_X and CAOS_K against CAOS_T, one point per instruction (Figure 6)",
        x_label="CAOS_T",
        y_label="CAOS_X or CAOS_K (shape)",
    ),
]
