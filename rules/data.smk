from halluscope.stages.data import DataSettings


rule data_items:
    """Export the dataset's images and per-image ground truth (items.jsonl)."""
    input:
        annotations=config["data"]["annotations"],
        image_list=image_list_input(config["data"].get("image_list")),
    output:
        item_file="results/data/{profile}/items.jsonl",
        images=directory("results/data/{profile}/images"),
    params:
        settings=settings_arg(DataSettings),
        image_ids=lambda wc, input: image_list_ids(input.image_list),
        code=code_version("data"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/data/{profile}.log",
    shell:
        "halluscope stage data --settings {params.settings:q} "
        "--items {output.item_file:q} --images {output.images:q} > {log:q} 2>&1"


rule data_all:
    """DVC stage target: every data artifact."""
    input:
        f"results/data/{RUN}/items.jsonl",
