"""AMBER's headline numbers (:mod:`halluscope.report.headline`): CHAIR and Hal per model."""

from __future__ import annotations

from halluscope.report.headline import Headline

HEADLINES: tuple[Headline, ...] = (
    Headline("AMBER_CHAIR", "amber_table", r"CHAIR"),
    Headline("AMBER_Hal", "amber_table", r"Hal"),
)
