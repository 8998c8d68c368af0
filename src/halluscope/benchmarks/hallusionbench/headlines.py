"""HallusionBench's headline number (:mod:`halluscope.report.headline`): aAcc per model, as a
fraction (its table prints percentages, as the reference does), over the subset the table
states."""

from __future__ import annotations

from halluscope.report.headline import Headline

HEADLINES: tuple[Headline, ...] = (
    Headline("HallusionBench_aAcc", "hallusionbench_table", r"aAcc", percent=True),
)
