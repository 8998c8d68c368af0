# PhD's helpers for its rules (rules.smk): the score files of the enabled benchmark.


def phd_score_files(profile=RUN):
    return benchmark_score_files("phd", profile)
