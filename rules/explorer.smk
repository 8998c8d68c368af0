# The explorer page (halluscope.stages.explorer): every caption and answer of the profile, per
# image, worst images first, in one HTML file that opens offline. Its inputs are the files each
# enabled benchmark's explorer part reads (src/halluscope/benchmarks/<name>/explorer.py), the
# same files its tables read; its code digest covers those parts and the page's template. The
# params.yaml profile's page is also DVC's stage `explorer` (halluscope.registry), built by
# `explorer_all`.
from halluscope.stages import explorer as explorer_stage


rule explorer:
    """Every caption and answer of the profile per image, worst images first (offline HTML)."""
    input:
        unpack(lambda wc: explorer_stage.rule_inputs(config, wc.profile)),
    output:
        report(
            "results/explorer/{profile}/index.html",
            caption="../docs/report/explorer.rst",
            category="Explorer",
            subcategory="Pages",
            labels={"name": "every caption and answer, per image", "profile": "{profile}"},
        ),
    params:
        settings=settings_arg(explorer_stage.ExplorerSettings),
        code=code_version("explorer"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/explorer/{profile}.log",
    shell:
        "halluscope stage explorer --settings {params.settings:q} --items {input.item_file:q} "
        "--tables {input.tables:q} --out {output:q} > {log:q} 2>&1"


rule explorer_all:
    """DVC stage target: the params.yaml profile's explorer page."""
    input:
        f"results/explorer/{RUN}/index.html",
