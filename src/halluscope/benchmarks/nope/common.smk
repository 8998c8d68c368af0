# NOPE's helpers for its rules (rules.smk): the generation shards and the score files of the
# enabled benchmark.


def nope_shard_files(profile=RUN):
    shards = range(config["nope"]["shards"])
    return expand("results/nope/{profile}/generated/shard{shard}.json", profile=profile, shard=shards)


def nope_score_files(profile=RUN):
    return benchmark_score_files("nope", profile)
