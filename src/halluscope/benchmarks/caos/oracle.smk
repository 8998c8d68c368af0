# CAOS's caption pipeline, step 3: is each out-of-domain object in the image (stage code:
# captions/oracle.py; the LVLM-ensemble members: models/oracle.py).
from halluscope.resources import model_resources
from halluscope.benchmarks.caos.captions.oracle import OracleSettings


rule oracle:
    """Presence decision for every out-of-domain object: the CAOS LVLM-ensemble oracle (majority
    vote, ties Absent), the authored annotations, or none; plus the accuracy on labelled objects."""
    input:
        objects="results/objects/{profile}/{model}/{instruction}.jsonl",
        item_file="results/data/{profile}/items.jsonl",
    output:
        decisions="results/oracle/{profile}/{model}/{instruction}.jsonl",
        accuracy="results/oracle/{profile}/{model}/{instruction}.accuracy.json",
    params:
        settings=settings_arg(OracleSettings),
        code=code_version("oracle"),
    resources:
        **model_resources(config, "oracle"),
    priority: CAPTION_PRIORITY
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/oracle/{profile}/{model}/{instruction}.log",
    shell:
        "halluscope stage oracle decide --settings {params.settings:q} "
        "--objects {input.objects:q} --items {input.item_file:q} --cache results/cache/responses "
        "--out {output.decisions:q} --accuracy {output.accuracy:q} > {log:q} 2>&1"


rule oracle_accuracy:
    """Accuracy of each oracle member and of the decisions over the whole dataset (each distinct
    image/object pair once)."""
    input:
        decisions=lambda wc: oracle_files(wc.profile),
        item_file="results/data/{profile}/items.jsonl",
    output:
        "results/oracle/{profile}/accuracy.json",
    params:
        code=code_version("oracle"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/oracle/{profile}/accuracy.log",
    shell:
        "halluscope stage oracle pool --items {input.item_file:q} --out {output:q} "
        "{input.decisions:q} > {log:q} 2>&1"


rule oracle_all:
    """DVC stage target: every oracle file and the pooled accuracy report."""
    input:
        oracle_files(),
        expand("results/oracle/{profile}/accuracy.json", profile=RUN),
