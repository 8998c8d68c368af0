"""The CAOS tables and figures a profile builds (rule ``tables``, rule ``figures_all``, ``all``).

Why not its captions' marks alone (:class:`halluscope.benchmarks.Caption`): which CAOS tables
exist depends on params (``tables.published`` adds the comparison with the printed Table 1,
``tables.compare_with`` the LLM comparison), and some tables have no CSV twin. The registry asks
this module (:meth:`halluscope.benchmarks.Benchmark.table_files`) instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TABLES = [
    "caos_table1", "caos_table2", "caos_ratios", "caos_setting", "caos_sensitivity", "caos_paired",
]  # fmt: skip
TWINS = ["caos_table1", "caos_table2", "caos_ratios", "caos_sensitivity", "caos_paired"]
PUBLISHED = ["caos_comparison", "caos_agreement", "caos_differences", "caos_sensitivity_p"]
PUBLISHED_TWINS = ["caos_comparison", "caos_agreement", "caos_sensitivity_p"]


def table_files(config: Mapping[str, Any], profile: str) -> list[str]:
    """Every LaTeX table, then every CSV twin, under ``results/report/<profile>/``."""
    names, twins = list(TABLES), list(TWINS)
    if config["tables"]["published"]:
        names += PUBLISHED
        twins += PUBLISHED_TWINS
    if config["tables"].get("compare_with"):
        names += ["llm_comparison"]
        twins += ["llm_comparison"]
    return [f"results/report/{profile}/{n}.tex" for n in names] + [
        f"results/report/{profile}/{n}.csv" for n in twins
    ]


def figure_files(config: Mapping[str, Any], profile: str) -> list[str]:
    """Figures 3-6 (PDF and PNG) under ``results/figures/<profile>/``."""
    from halluscope.benchmarks.caos.report import FIGURES

    return [f"results/figures/{profile}/{f}.{ext}" for f in FIGURES for ext in ("pdf", "png")]
