# The vectors are read with ancient(): a vector depends only on its name and the embedder spec
# (a params of this rule), so adding a 15th instruction re-embeds but does not rescore the
# other 14 x models jobs.
rule score:
    """CAOS (Algorithm 1) and CHAIR-style counts for one model x instruction x embedder."""
    input:
        objects="results/objects/{dataset}/{model}/{instruction}.jsonl",
        oracle="results/oracle/{dataset}/{model}/{instruction}.jsonl",
        item_file="results/data/{dataset}/items.jsonl",
        vectors=ancient("results/embeddings/{dataset}/{embedder}.npz"),
    output:
        captions="results/scores/{dataset}/{embedder}/{model}/{instruction}.captions.csv",
        objects="results/scores/{dataset}/{embedder}/{model}/{instruction}.objects.csv",
    params:
        k=config["caos"]["k"],
        k_max=config["caos"]["k_max"],
        frequent=json_arg(config["caos"]["frequent"]),
        spec=lambda wc: json_arg(config["embed"]["specs"][wc.embedder]),
        code=code_version("score"),
    conda:
        "../envs/halluscope.yaml"
    log:
        "logs/score/{dataset}/{embedder}/{model}/{instruction}.log",
    shell:
        "halluscope stage score --objects {input.objects} --oracle {input.oracle} "
        "--items {input.item_file} --vectors {input.vectors} --k {params.k} --k-max {params.k_max} "
        "--frequent {params.frequent} --model-id {wildcards.model} "
        "--instruction-id {wildcards.instruction} --embedder-id {wildcards.embedder} "
        "--out-captions {output.captions} --out-objects {output.objects} > {log} 2>&1"


rule summarize:
    """Pool per-job scores into the summary used by every table and figure."""
    input:
        captions=score_files(),
        pope=pope_score_files(),
    output:
        summary="results/scores/{dataset}/summary.csv",
        objects="results/scores/{dataset}/objects.csv",
    params:
        table1=json_arg(config["tables"]["table1_instructions"]),
        code=code_version("score"),
    conda:
        "../envs/halluscope.yaml"
    log:
        "logs/summarize/{dataset}.log",
    shell:
        "halluscope stage summarize --table1 {params.table1} "
        "--out-summary {output.summary} --out-objects {output.objects} "
        "--pope {input.pope} -- {input.captions} > {log} 2>&1"


rule score_all:
    """DVC stage target: every score file and the summary."""
    input:
        f"results/scores/{RUN}/summary.csv",
