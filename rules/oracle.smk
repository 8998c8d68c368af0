rule oracle:
    """Presence decision for every out-of-domain object (demo: from the authored annotations)."""
    input:
        objects="results/objects/{dataset}/{model}/{instruction}.jsonl",
        item_file="results/data/{dataset}/items.jsonl",
    output:
        "results/oracle/{dataset}/{model}/{instruction}.jsonl",
    params:
        method=config["oracle"]["method"],
    conda:
        "../envs/halluscope.yaml"
    log:
        "logs/oracle/{dataset}/{model}/{instruction}.log",
    shell:
        "halluscope stage-oracle --objects {input.objects} --items {input.item_file} "
        "--method {params.method} --out {output} > {log} 2>&1"


rule oracle_all:
    """DVC stage target: every oracle file."""
    input:
        oracle_files(),
