# Tri-HE's helpers for its rules (rules.smk): the score files of the enabled benchmark.


def trihe_score_files(profile=RUN):
    return benchmark_score_files("trihe", profile)
