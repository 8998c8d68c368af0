# Shared helpers: config validation, wildcard constraints and the lists that define the DAG.
from halluscope.config import validate as validate_params

validate_params(config, source="params.yaml (+ any --configfile/--config overrides)")

DATASET = config["data"]["dataset"]
MODELS = config["generate"]["models"]
INSTRUCTIONS = config["generate"]["instructions"]
EMBEDDERS = config["embed"]["embedders"]
CAOS_FIGURES = ["caos_radar", "caos_ksweep", "caos_subsets", "caos_instructions"]


wildcard_constraints:
    dataset=r"[A-Za-z0-9_.-]+",
    model=r"[A-Za-z0-9_.-]+",
    instruction=r"[A-Za-z0-9_-]+",
    embedder=r"[A-Za-z0-9_-]+",
    setting=r"random|popular|adversarial",


def json_arg(value):
    """Quote a params value as one JSON shell argument (params stay tracked by Snakemake)."""
    import json
    import shlex

    return shlex.quote(json.dumps(value, sort_keys=True))


def response_files(dataset=DATASET):
    return expand(
        "results/responses/{dataset}/{model}/{instruction}.jsonl",
        dataset=dataset, model=MODELS, instruction=INSTRUCTIONS,
    )


def object_files(dataset=DATASET):
    return expand(
        "results/objects/{dataset}/{model}/{instruction}.jsonl",
        dataset=dataset, model=MODELS, instruction=INSTRUCTIONS,
    )


def oracle_files(dataset=DATASET):
    return expand(
        "results/oracle/{dataset}/{model}/{instruction}.jsonl",
        dataset=dataset, model=MODELS, instruction=INSTRUCTIONS,
    )


def score_files(dataset=DATASET):
    return expand(
        "results/scores/{dataset}/{embedder}/{model}/{instruction}.captions.csv",
        dataset=dataset, embedder=EMBEDDERS, model=MODELS, instruction=INSTRUCTIONS,
    )


def pope_score_files(dataset=DATASET):
    if not config["pope"]["enabled"]:
        return []
    return expand(
        "results/pope/{dataset}/{model}/{setting}.scores.json",
        dataset=dataset, model=MODELS, setting=config["pope"]["settings"],
    )


def caos_figure_files(dataset=DATASET):
    return expand("results/figures/{name}.{ext}", name=CAOS_FIGURES, ext=["pdf", "png"])
