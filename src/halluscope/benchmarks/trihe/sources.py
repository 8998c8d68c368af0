"""Tri-HE's raw file, pinned at one upstream commit (merged into
:data:`halluscope.data.sources.SOURCES`; read from ``../shared/data`` or downloaded and checked)."""

from __future__ import annotations

from halluscope.data.source import Source, github_source

# repo@commit of the upstream (the provenance table of ../shared/data/README.md)
_UPSTREAM = "wujunjie1998/Tri-HE@c84079061f382f8da07f5d51382a93669dbe6b87"
_LICENSE = None  # the shared data README states no licence file


SOURCES: tuple[Source, ...] = (
    github_source(
        "trihe/tri-he.json",
        _UPSTREAM,
        "data/tri-he.json",
        553050,
        "a89207c21d82014130e92c23f1ee7f7d",
        "9742e23933a1463ad487ab4e557b962b5d453500ef4ceee88a8ace9378b4a82b",
        _LICENSE,
    ),
)
