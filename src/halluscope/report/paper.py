"""The sections of the reproduction report and what each one includes, read from the sections.

Why read them: a section's LaTeX names the tables and figures it includes
(``\\input{\\reportdir{<profile>}/<table>.tex}``,
``\\includegraphics{\\figdir{<profile>}/<figure>.pdf}``), so the list of the paper's inputs is
derived from there instead of kept again beside it. A benchmark's sections are ``paper.tex``
and ``paper-*.tex`` in its folder (:meth:`halluscope.benchmarks.Benchmark.paper_sections`); the
demo's, which spans every benchmark, is ``paper/sections/demo.tex``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

#: ``\reportdir{<profile>}/<name>.tex`` or ``\figdir{<profile>}/<name>.pdf`` inside a section
INPUT = re.compile(r"\\(reportdir|figdir)\{([^}]+)\}/([^}]+)\}")
FOLDERS = {"reportdir": "results/report", "figdir": "results/figures"}


@dataclass(frozen=True)
class Section:
    """One section file (repository path), the profile whose results it shows, and the files it
    includes (paths in the project)."""

    path: str
    profile: str
    inputs: tuple[str, ...]


def read_section(path: Path, root: Path) -> Section:
    """The section at ``path``: its inputs, and its profile (the one every input names)."""
    text = "\n".join(line.split("%")[0] for line in path.read_text(encoding="utf-8").splitlines())
    found = INPUT.findall(text)
    profiles = {profile for _, profile, _ in found}
    if len(profiles) != 1:
        raise ValueError(f"{path}: a section includes one profile's results, found {profiles}")
    inputs = tuple(dict.fromkeys(f"{FOLDERS[kind]}/{p}/{name}" for kind, p, name in found))
    return Section(_repository_path(path, root), profiles.pop(), inputs)


def _repository_path(path: Path, root: Path) -> str:
    """``path`` relative to the project ``root``; absolute when the package is installed
    elsewhere (a benchmark's section lives in the package folder, as its rules do)."""
    path, root = path.resolve(), root.resolve()
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()


def sections(root: Path) -> list[Section]:
    """Every section in report order: the benchmarks' (registry order), then ``paper/sections``."""
    from halluscope.benchmarks import BENCHMARKS

    paths = [p for b in BENCHMARKS for p in b.paper_sections()]
    paths += sorted((root.resolve() / "paper" / "sections").glob("*.tex"))
    return [read_section(p, root) for p in paths]


def input_name(section: str, main: str) -> str:
    """The ``\\input`` argument of repository path ``section`` in the LaTeX file ``main``."""
    return Path(os.path.relpath(section, Path(main).parent)).with_suffix("").as_posix()
