"""The packaged benchmarks' simulated answerers (their ``simulated`` modules), loaded once.

Why here: a benchmark package registers its own answerer (:func:`register_answerer`) in its
``simulated`` module; the sim imports those modules when it is imported, so a new benchmark adds
an answerer without editing the sim.
"""

from __future__ import annotations


def load_benchmark_answerers() -> None:
    from halluscope.benchmarks import import_plugins

    import_plugins("simulated")
