"""One raw input file (:class:`Source`): where it comes from and what its bytes must hash to.

Its own module so that a benchmark's ``sources.py`` (merged into
:data:`halluscope.data.sources.SOURCES`) declares its files without importing that registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["Source", "github_raw_url", "github_source"]


@dataclass(frozen=True, slots=True)
class Source:
    """One raw input file.

    ``url`` is ``None`` for files that only exist in the mirror (derived files with no public
    download); ``how`` then says how to obtain them. ``md5`` and ``sha256`` are ``None`` when
    no checksum is known in advance, which makes the file trust-on-first-use.
    """

    path: str
    url: str | None
    size: int | None
    md5: str | None
    sha256: str | None
    origin: str
    license: str | None = None
    how: str = ""

    @property
    def trust_on_first_use(self) -> bool:
        """True when nothing pins the bytes in advance (checksums come from the lock file)."""
        return self.md5 is None and self.sha256 is None


def github_raw_url(repo: str, commit: str, path: str) -> str:
    """The immutable raw URL of ``path`` in ``repo`` at ``commit``."""
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


def github_source(
    rel: str, origin: str, upstream: str, size: int, md5: str, sha256: str, license: str | None
) -> Source:
    """The file ``upstream`` of ``origin`` (``owner/repo@commit``) stored at ``rel``."""
    repo, commit = origin.split("@")
    return Source(
        path=rel,
        url=github_raw_url(repo, commit, upstream),
        size=size,
        md5=md5,
        sha256=sha256,
        origin=f"{origin}:{upstream}",
        license=license,
    )


def github_sources_of(licenses: Mapping[str, str | None]) -> Callable[..., Source]:
    """:func:`github_source` with the licence looked up by origin: a sources module lists each
    upstream's licence once (``{origin: licence}``), not once per file."""

    def source(rel: str, origin: str, upstream: str, size: int, md5: str, sha256: str) -> Source:
        return github_source(rel, origin, upstream, size, md5, sha256, licenses[origin])

    return source
