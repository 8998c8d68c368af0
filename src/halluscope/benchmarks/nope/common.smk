# NOPE's helpers for its rules (rules.smk): the generation shards and the score files of the
# enabled benchmark.


def nope_shard_files(dataset=RUN):
    shards = range(config["nope"]["shards"])
    return expand("results/nope/{dataset}/generated/shard{shard}.json", dataset=dataset, shard=shards)


def nope_score_files(dataset=RUN):
    return benchmark_score_files("nope", dataset)
