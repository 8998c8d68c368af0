# AMBER's helpers for its rules (rules.smk): the params section and the score files.

AMBER = config.get("amber") or {"enabled": False}
AMBER_FILES = {
    "annotations": "amber/annotations.json",
    "relation": "amber/relation.json",
    "safe_words": "amber/safe_words.txt",
}


def amber_file(key):
    """An AMBER input: the params value (a registered data file or a path)."""
    return AMBER.get(key, AMBER_FILES[key])


def amber_score_files(dataset=RUN):
    if not AMBER["enabled"]:
        return []
    return expand("results/amber/{dataset}/{model}/scores.json", dataset=dataset, model=MODELS)
