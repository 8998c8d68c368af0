# PhD's helpers for its rules (rules.smk): the score files of the enabled benchmark.


def phd_score_files(dataset=RUN):
    return benchmark_score_files("phd", dataset)
