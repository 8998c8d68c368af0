# CAOS's helpers for its rules (rules.smk) and for the core rules that collect every table and
# figure (rules/tables.smk, rules/figures.smk, the Snakefile's `all`), which the Snakefile
# includes after the packaged benchmarks. POPE-F1 joins the CAOS summary: rule summarize reads
# pope_score_files() of benchmarks/pope/common.smk (POPE is registered, and so included, first).
from halluscope.benchmarks import by_name as _benchmark

CAOS_ENABLED = _benchmark("caos").enabled(config)
SENSITIVITY_DEFAULT = ["coco-instances", "coco-images", "paper-examples"]
# one list of the CAOS figures, shared with the figure stage
from halluscope.benchmarks.caos.report import FIGURES as _CAOS_FIGURES

CAOS_FIGURES = list(_CAOS_FIGURES)


def score_files(dataset=RUN):
    return expand(
        "results/scores/{dataset}/{embedder}/{model}/{instruction}.captions.csv",
        dataset=dataset, embedder=EMBEDDERS, model=MODELS, instruction=INSTRUCTIONS,
    )


def extractor_with_weights(llm):
    """The extractor LLM's settings plus its model's weight format (a llamacpp spec's
    ``weights``; other backends have none), which changes replies as the speed options do."""
    spec = config["models"].get(llm.get("model"), {})
    return {**llm, "weights": spec["weights"]} if "weights" in spec else dict(llm)


def setting_summary():
    """What a CAOS table's numbers depend on, for the generated setting note."""
    extract = config["extract"]
    oracle = config["oracle"]
    return {
        "profile": config["profile"],
        "dataset": DATASET,
        "n_images_limit": config["data"].get("limit"),
        "models": {m: {k: v for k, v in config["models"][m].items() if k != "paths"} for m in MODELS},
        "instructions": INSTRUCTIONS,
        "embedders": {e: config["embed"]["specs"][e] for e in EMBEDDERS},
        "extract": {k: extract[k] for k in extract if k in ("method", "synonyms", "variant")}
        | {"llm": extractor_with_weights(extract["llm"])},
        "oracle": {k: oracle[k] for k in oracle if k in ("method", "members")},
        "k": config["caos"]["k"],
        "frequent": config["caos"]["frequent"],
    }


def by_model_instruction(paths):
    """``{model: {instruction: path}}`` of ``results/<area>/<dataset>/<model>/<instruction>.jsonl``
    paths, for a stage that reads every model's files of some instructions."""
    from pathlib import Path

    out = {}
    for path in paths:
        out.setdefault(Path(path).parent.name, {})[Path(path).stem] = str(path)
    return out


def caos_table_files(dataset=RUN):
    if not CAOS_ENABLED:
        return []
    names = ["caos_table1", "caos_table2", "caos_ratios", "caos_setting", "caos_sensitivity"]
    twins = ["caos_table1", "caos_table2", "caos_ratios", "caos_sensitivity"]
    if config["tables"]["published"]:
        names += ["caos_comparison", "caos_agreement", "caos_differences", "caos_sensitivity_p"]
        twins += ["caos_agreement", "caos_sensitivity_p"]
    if config["tables"].get("compare_with"):
        names += ["llm_comparison"]
        twins += ["llm_comparison"]
    return expand("results/report/{dataset}/{name}.tex", dataset=dataset, name=names) + expand(
        "results/report/{dataset}/{name}.csv", dataset=dataset, name=twins
    )


def caos_figure_files(dataset=RUN):
    if not CAOS_ENABLED:
        return []
    return expand(
        "results/figures/{run}/{name}.{ext}", run=dataset, name=CAOS_FIGURES, ext=["pdf", "png"]
    )
