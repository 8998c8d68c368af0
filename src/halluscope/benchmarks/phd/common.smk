# PhD's helpers for its rules (rules.smk): the score files of the enabled benchmark.


def phd_score_files(dataset=RUN):
    if not (config.get("phd") or {}).get("enabled"):
        return []
    return expand("results/phd/{dataset}/{model}/scores.json", dataset=dataset, model=MODELS)
