# CAOS's helpers for its rules (rules.smk). Its tables and figures for the rules that collect
# every benchmark's are listed by halluscope.benchmarks.caos.report_files. POPE-F1 joins the CAOS
# summary: rule summarize reads POPE's score files through halluscope.benchmarks.pope.outputs (an
# import, so the order in which the Snakefile includes the benchmarks does not matter).
from halluscope.benchmarks.pope.outputs import score_files as _pope_score_files

# one list of the CAOS figures, shared with the figure stage
from halluscope.benchmarks.caos.report import FIGURES as _CAOS_FIGURES

CAOS_FIGURES = list(_CAOS_FIGURES)


def score_files(dataset=RUN):
    return expand(
        "results/scores/{dataset}/{embedder}/{model}/{instruction}.captions.csv",
        dataset=dataset, embedder=EMBEDDERS, model=MODELS, instruction=INSTRUCTIONS,
    )


def by_model_instruction(paths):
    """``{model: {instruction: path}}`` of ``results/<area>/<dataset>/<model>/<instruction>.jsonl``
    paths, for a stage that reads every model's files of some instructions."""
    from pathlib import Path

    out = {}
    for path in paths:
        out.setdefault(Path(path).parent.name, {})[Path(path).stem] = str(path)
    return out


def pope_f1_files(dataset=RUN):
    """POPE's score files, whose F1 joins the CAOS summary (none when POPE is disabled)."""
    return _pope_score_files(config, dataset)
