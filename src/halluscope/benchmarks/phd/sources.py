"""PhD's raw files, each pinned at one upstream commit (merged into
:data:`halluscope.data.sources.SOURCES`; read from ``../shared/data`` or downloaded and checked)."""

from __future__ import annotations

from halluscope.data.source import Source, github_sources_of

# repo@commit of each upstream (the provenance table of ../shared/data/README.md)
_PHD_README = "jiazhen-code/PhD@4cc31db049a70abff2912d5c083ebcc5c384b011"
_PHD = "jiazhen-code/PhD@fffcebb069f6d0058ac43d3e75497906efefae8f"

#: Licence of each upstream as stated by the shared data README (``None``: no licence file).
_LICENSES: dict[str, str | None] = {
    _PHD_README: None,
    _PHD: None,
}

_gh = github_sources_of(_LICENSES)


SOURCES: tuple[Source, ...] = (
    _gh(
        "phd/README.upstream.md",
        _PHD_README,
        "README.md",
        12068,
        "4dc1eb8cd2dc07feca1d18ad98649e1d",
        "fa2360e6f2e135e84bf62bb08f6cc7ef08d55a72f9bb3ab8c91e70d214f1e70b",
    ),
    _gh(
        "phd/data_ccs.json",
        _PHD,
        "data_ccs.json",
        322488,
        "f81ad401b391ad77ef78117966788da0",
        "66e2fded6065bf74e084b3763fc855458d6b2fdea7b04df98b0f7ebf3cc53208",
    ),
)
