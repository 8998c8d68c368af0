# CAOS's caption pipeline, step 4: vectors of every object name, GT object and K object
# (halluscope.benchmarks.caos.captions.embed; K: k_order.py).
from halluscope.resources import model_resources
from halluscope.benchmarks.caos.captions.embed import EmbedSettings


rule embed:
    """Vectors for every object name, GT object and frequent object of the dataset."""
    input:
        objects=object_files(),
        item_file="results/data/{profile}/items.jsonl",
    output:
        vectors="results/embeddings/{profile}/{embedder}.npz",
        missing="results/embeddings/{profile}/{embedder}.missing.json",
    params:
        settings=settings_arg(EmbedSettings, "embedder"),
        code=code_version("embed"),
    resources:
        **model_resources(config, "embed"),
    priority: CAPTION_PRIORITY
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/embed/{profile}/{embedder}.log",
    shell:
        "halluscope stage embed --settings {params.settings:q} "
        "--items {input.item_file:q} --out {output.vectors:q} "
        "--missing {output.missing:q} {input.objects:q} > {log:q} 2>&1"


rule embed_all:
    """DVC stage target: every embedding file."""
    input:
        expand("results/embeddings/{profile}/{embedder}.npz", profile=RUN, embedder=EMBEDDERS),
