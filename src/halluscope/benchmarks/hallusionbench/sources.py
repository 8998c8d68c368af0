"""HallusionBench's raw files, pinned at one upstream commit (merged into
:data:`halluscope.data.sources.SOURCES`; read from ``../shared/data`` or downloaded and checked).

The images are not among them (a Google Drive zip, not public offline): the 178 text-only
questions (``visual_input`` 0) need none, the others need the user's own copy."""

from __future__ import annotations

from halluscope.data.source import Source, github_source

# repo@commit of the upstream (the provenance table of ../shared/data/README.md)
_UPSTREAM = "tianyi-lab/HallusionBench@744007c232c292942c7f80eb61edb2465482da31"
_LICENSE = "BSD-3-Clause"

QUESTIONS = "hallusionbench/HallusionBench.json"
RESULT_SAMPLE = "hallusionbench/HallusionBench_result_sample.json"
LEADERBOARD = "hallusionbench/leaderboard.json"

SOURCES: tuple[Source, ...] = (
    github_source(
        QUESTIONS,
        _UPSTREAM,
        "HallusionBench.json",
        431987,
        "6ea24532854cab043a6464cff8a194ad",
        "ca6e0fb677dd56e5fb0e2700d06c58d01f8a6ae66e0f1773b2ac48c0a095d051",
        _LICENSE,
    ),
    github_source(
        RESULT_SAMPLE,
        _UPSTREAM,
        "HallusionBench_result_sample.json",
        131464,
        "35965326c9782e667a2a3f704d8c7674",
        "d7152ae3a961f50d3ec7eeee6863aedcbea18fdff3ff0342ffe3e07880870666",
        _LICENSE,
    ),
    github_source(
        LEADERBOARD,
        _UPSTREAM,
        "leaderboard.json",
        1177,
        "e544dca5987d55e959c2e86fe5e3c5a2",
        "dfb69db9ea482a8accfbdfa7d4539adbf1d87325d3835d9e053bbf0e148d1b4f",
        _LICENSE,
    ),
    github_source(
        "hallusionbench/LICENSE.md",
        _UPSTREAM,
        "LICENSE.md",
        1489,
        "7b25603b1c5c370c7e0842c7c2d406c7",
        "48e21451501644e832448a7691243db1d49ae37d1ac9971afa15c056be2e4c1e",
        _LICENSE,
    ),
)
