"""AMBER's headline numbers (:mod:`halluscope.report.headline`): CHAIR and Hal per model, as
fractions (its table prints percentages, as upstream does)."""

from __future__ import annotations

from halluscope.report.headline import Headline

HEADLINES: tuple[Headline, ...] = (
    Headline("AMBER_CHAIR", "amber_table", r"CHAIR", percent=True),
    Headline("AMBER_Hal", "amber_table", r"Hal", percent=True),
)
