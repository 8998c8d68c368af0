# HallusionBench's helpers for its rules (rules.smk): the score files of the enabled benchmark.


def hallusionbench_score_files(profile=RUN):
    return benchmark_score_files("hallusionbench", profile)
