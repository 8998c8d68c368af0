# CAOS's helpers for its rules (rules.smk). Its tables and figures for the rules that collect
# every benchmark's are listed by halluscope.benchmarks.caos.report_files. POPE-F1 joins the CAOS
# summary: rule summarize reads POPE's score files through halluscope.benchmarks.pope.outputs (an
# import, so the order in which the Snakefile includes the benchmarks does not matter).
from halluscope.benchmarks.pope.outputs import score_files as _pope_score_files

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


def pope_f1_files(dataset=RUN):
    """POPE's score files, whose F1 joins the CAOS summary (none when POPE is disabled)."""
    return _pope_score_files(config, dataset)
