# POPE's helpers for its rules (rules.smk) and for rule summarize of the CAOS package, which
# joins POPE-F1 into the CAOS tables.


def pope_score_files(dataset=RUN):
    """POPE's score files (benchmarks/pope), which rule summarize joins into the CAOS tables."""
    if not config["pope"]["enabled"]:
        return []
    return expand(
        "results/pope/{dataset}/{model}/{setting}.scores.json",
        dataset=dataset, model=MODELS, setting=config["pope"]["settings"],
    )
