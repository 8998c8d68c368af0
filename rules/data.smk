rule data_items:
    """Export the dataset's images and per-image ground truth (items.jsonl)."""
    input:
        annotations=config["data"]["annotations"],
    output:
        item_file="results/data/{dataset}/items.jsonl",
        images=directory("results/data/{dataset}/images"),
    params:
        dataset=DATASET,
        options=json_arg(
            {k: config["data"][k] for k in ("image_list", "gt_variant", "images", "limit") if k in config["data"]}
        ),
        code=code_version("data"),
    conda:
        "../envs/halluscope.yaml"
    log:
        "logs/data/{dataset}.log",
    shell:
        "halluscope stage data --dataset {params.dataset} "
        "--annotations {input.annotations} --items {output.item_file} --images {output.images} "
        "--options {params.options} "
        "> {log} 2>&1"


rule data_all:
    """DVC stage target: every data artifact."""
    input:
        f"results/data/{RUN}/items.jsonl",
