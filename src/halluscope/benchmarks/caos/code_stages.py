"""CAOS's code stages: the Python each step of its caption pipeline and its scores runs.

CAOS is the one benchmark with several steps (generate, extract, oracle, embed, score), each a
Snakemake target of its own rules file; :mod:`halluscope.registry` digests each step's code
separately (a ``params:`` value of its rules), so that an edit of one step reruns that step and
what follows it, not the whole caption pipeline. Plain data here (the registry builds its
``Stage`` records from these keyword arguments), so this module imports nothing of it.
"""

from __future__ import annotations

HERE = "src/halluscope/benchmarks/caos"
#: the rules of score, summarize, figure, caos_tables, ..., their helpers and the ``caos``
#: section's schema (the defaults of its keys)
RULES = [f"{HERE}/rules.smk", f"{HERE}/common.smk", f"{HERE}/schema.json"]


def _caption_step(name: str) -> dict:
    """A step of the caption pipeline: rules ``<name>.smk``, stage code ``captions/<name>.py``."""
    return dict(name=name, code=[f"{HERE}/{name}.smk", f"{HERE}/captions/{name}.py"])


STEPS = [
    *(_caption_step(name) for name in ("generate", "extract", "oracle", "embed")),
    dict(name="score", code=[*RULES, f"{HERE}/score.py", f"{HERE}/summarize.py"]),
]
