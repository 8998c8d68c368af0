# CAOS's caption pipeline, step 2: the ordered objects of each caption, rule-based (L1) and
# out-of-domain (L2: lexicon and/or LLM; stage code captions/extract.py, objects/llm_extract.py).
from halluscope.resources import model_resources, model_threads
from halluscope.benchmarks.caos.captions.extract import ExtractSettings
from halluscope.benchmarks.caos.captions.extract import NounTagSettings


# The noun check's tags of a model's captions, made in one process so that its extract jobs do
# not each load spaCy's tagger (1.5 CPU s apiece). A plain input of every extract job of the
# model: when one caption file changes, the model's other extract jobs rerun too, on cached LLM
# replies and with the same bytes (an ancient() input would save them, but Snakemake then misses
# an extract job whose own captions, params or code changed in the same run: it skips the jobs
# downstream of a job to run and reaches them only through non-ancient inputs).
rule noun_tags:
    """Tags of the windows around the out-of-domain lexicon matches of one model's captions."""
    input:
        model_response_files,
    output:
        "results/nouns/{profile}/{model}.jsonl",
    params:
        settings=settings_arg(NounTagSettings),
        code=code_version("extract"),
    priority: LLM_PRIORITY
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/noun_tags/{profile}/{model}.log",
    shell:
        "halluscope stage extract nouns --settings {params.settings:q} --out {output:q} {input:q} "
        "> {log:q} 2>&1"


# The settings of a job hold the extractor LLM of its instruction (halluscope.benchmarks.caos.captions.extract.
# instruction_llm), so a change of the LLM's model spec, generation params or instruction subset
# reruns exactly the affected extract jobs.
rule extract:
    """Objects of each response in caption order: rule-based MSCOCO (L1) + out-of-domain (L2:
    lexicon and/or the 5-shot LLM of CAOS, tallied with the caption's words)."""
    input:
        responses="results/responses/{profile}/{model}/{instruction}.jsonl",
        noun_tags="results/nouns/{profile}/{model}.jsonl",
    output:
        "results/objects/{profile}/{model}/{instruction}.jsonl",
    params:
        settings=settings_arg(ExtractSettings, "instruction"),
        code=code_version("extract"),
    resources:
        **model_resources(config, "extract"),
    threads: model_threads(config, "extract")
    priority: caption_priority
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/extract/{profile}/{model}/{instruction}.log",
    shell:
        "HALLUSCOPE_THREADS={threads:q} halluscope stage extract --settings {params.settings:q} --responses {input.responses:q} "
        "--cache results/cache/responses --noun-tags {input.noun_tags:q} --out {output:q} > {log:q} 2>&1"


rule extract_report:
    """Pooled extraction counts: objects per source, LLM replies, rejected LLM names by reason."""
    input:
        lambda wc: object_files(wc.profile),
    output:
        "results/objects/{profile}/extract_report.json",
    params:
        code=code_version("extract"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/extract/{profile}/extract_report.log",
    shell:
        "halluscope stage extract report --out {output:q} {input:q} > {log:q} 2>&1"


rule extract_all:
    """DVC stage target: every object file and the pooled extraction report."""
    input:
        object_files(),
        noun_tag_files(),
        expand("results/objects/{profile}/extract_report.json", profile=RUN),
