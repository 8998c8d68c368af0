rule extract:
    """Objects of each response in caption order: rule-based MSCOCO (L1) + out-of-domain (L2)."""
    input:
        responses="results/responses/{dataset}/{model}/{instruction}.jsonl",
    output:
        "results/objects/{dataset}/{model}/{instruction}.jsonl",
    params:
        synonyms=config["extract"]["synonyms"],
        variant=config["extract"]["variant"],
        lexicon=config["extract"]["ood_lexicon"],
    conda:
        "../envs/halluscope.yaml"
    log:
        "logs/extract/{dataset}/{model}/{instruction}.log",
    shell:
        "halluscope stage-extract --responses {input.responses} "
        "--synonyms {params.synonyms} --variant {params.variant} --lexicon {params.lexicon} "
        "--out {output} > {log} 2>&1"


rule extract_all:
    """DVC stage target: every object file."""
    input:
        object_files(),
