# AMBER's helpers for its rules (rules.smk): the score files of the enabled benchmark.

AMBER = config.get("amber") or {"enabled": False}


def amber_score_files(profile=RUN):
    if not AMBER["enabled"]:
        return []
    return expand("results/amber/{profile}/{model}/scores.json", profile=profile, model=MODELS)
