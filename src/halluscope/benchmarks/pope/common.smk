# POPE's helpers for its rules (rules.smk). Its score files are listed by
# halluscope.benchmarks.pope.outputs, which CAOS imports too (POPE-F1 joins the CAOS summary).
from halluscope.benchmarks.pope.outputs import score_files as _score_files


def pope_score_files(profile=RUN):
    """POPE's per-model, per-setting score files (none when POPE is disabled)."""
    return _score_files(config, profile)
