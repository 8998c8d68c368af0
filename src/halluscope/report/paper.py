"""The sections of the reproduction report, what each one includes, and the report's build.

Why read them: a section's LaTeX names the tables and figures it includes
(``\\input{\\reportdir{<profile>}/<table>.tex}``,
``\\includegraphics{\\figdir{<profile>}/<figure>.pdf}``), so the list of the paper's inputs is
derived from there instead of kept again beside it. A section also says what it shows, for the
abstract (a ``% abstract: <phrase>`` line), and which label its ``\\section`` has; the abstract
lists exactly the sections a build includes (:func:`sections_tex`). A benchmark's sections are
``paper.tex`` and ``paper-*.tex`` in its folder
(:meth:`halluscope.benchmarks.Benchmark.paper_sections`); the demo's, which spans every
benchmark, is ``paper/sections/demo.tex``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

#: ``\reportdir{<profile>}/<name>.tex`` or ``\figdir{<profile>}/<name>.pdf`` inside a section
INPUT = re.compile(r"\\(reportdir|figdir)\{([^}]+)\}/([^}]+)\}")
FOLDERS = {"reportdir": "results/report", "figdir": "results/figures"}
#: ``% abstract: <phrase>``: what the section shows, as the abstract names it
ABSTRACT = re.compile(r"^%\s*abstract:\s*(.+?)\s*$", re.MULTILINE)
#: the label of the section's ``\section``
LABEL = re.compile(r"\\section\*?\{.*?\}\s*\\label\{([^}]+)\}", re.DOTALL)
#: how the abstract counts its sections
NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}
#: a LaTeX warning, an overfull box or an undefined reference in pdflatex's log
LOG_PROBLEM = re.compile(
    r"^(?:LaTeX Warning:.*|Package \S+ Warning:.*|Overfull \\[hv]box.*|pdfTeX warning.*)$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Section:
    """One section file (repository path), the profile whose results it shows, the files it
    includes (paths in the project), its label and what it shows (the abstract's phrase)."""

    path: str
    profile: str
    inputs: tuple[str, ...]
    label: str
    summary: str


def read_section(path: Path, root: Path) -> Section:
    """The section at ``path``: its inputs, its profile (the one every input names), its label
    and its abstract phrase."""
    source = path.read_text(encoding="utf-8")
    text = "\n".join(line.split("%")[0] for line in source.splitlines())
    found = INPUT.findall(text)
    profiles = {profile for _, profile, _ in found}
    if len(profiles) != 1:
        raise ValueError(f"{path}: a section includes one profile's results, found {profiles}")
    summary, label = ABSTRACT.search(source), LABEL.search(text)
    if summary is None or label is None:
        raise ValueError(
            f"{path}: a section opens with a '% abstract: <what it shows>' line and labels its "
            "\\section (\\label{sec:...}), so the abstract can name it"
        )
    inputs = tuple(dict.fromkeys(f"{FOLDERS[kind]}/{p}/{name}" for kind, p, name in found))
    return Section(_repository_path(path, root), profiles.pop(), inputs, label[1], summary[1])


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


def abstract_list(included: Sequence[Section]) -> str:
    """The abstract's sentence naming the included sections, in report order, each with its
    section number (``\\ref``)."""
    items = [f"{s.summary} (Section~\\ref{{{s.label}}})" for s in included]
    if not items:
        return "This build of the report includes no section of results."
    if len(items) == 1:
        return f"This build of the report includes one section of results: {items[0]}."
    count = NUMBERS.get(len(items), str(len(items)))
    listed = "; ".join(items[:-1]) + f"; and {items[-1]}"
    return f"This build of the report includes {count} sections of results: {listed}."


def sections_tex(included: Sequence[Section], main: Path, root: Path) -> str:
    """``results/paper/sections.tex``, read in the preamble of ``main``: ``\\reportabstractlist``,
    the abstract's list of the included sections, and ``\\reportsections``, which inputs them
    (paths relative to ``main``; section paths are in the project ``root``). Both come from the
    one list, so the abstract names exactly the sections the report has."""
    inputs = "".join(
        f"\\input{{{input_name(os.path.join(root, s.path), str(main))}}}\n" for s in included
    )
    return (
        "% generated by halluscope stage paper: the sections whose profile has run\n"
        f"\\newcommand{{\\reportabstractlist}}{{{abstract_list(included)}}}\n"
        f"\\newcommand{{\\reportsections}}{{%\n{inputs}}}\n"
    )


def log_summary(log: str) -> str:
    """The lines of pdflatex's log a reader must see (warnings, overfull boxes), counted."""
    problems = LOG_PROBLEM.findall(log)
    head = f"pdflatex: {len(problems)} warning(s) or overfull box(es)"
    return "\n".join([head + (":" if problems else "."), *problems]) + "\n"


def build(main: Path, paths: Sequence[str], out_sections: Path, out: Path, root: Path) -> str:
    """Write the section list of the section files ``paths`` (paths in the project ``root``),
    run pdflatex twice (cross-references) with a fixed SOURCE_DATE_EPOCH so the PDF carries no
    run time, and move the PDF into place. Returns pdflatex's log of the last pass (its
    warnings and overfull boxes first: :func:`log_summary`). A LaTeX error fails with the end
    of its log."""
    import subprocess
    import tempfile

    from halluscope.io import InputError, atomic_write_bytes, atomic_write_text

    root, main, out = root.resolve(), main.resolve(), out.resolve()
    included = [read_section(root / path, root) for path in paths]
    atomic_write_text(out_sections, sections_tex(included, main, root))
    env = {**os.environ, "SOURCE_DATE_EPOCH": "0", "FORCE_SOURCE_DATE": "1"}
    with tempfile.TemporaryDirectory(prefix=".paper-", dir=out.parent) as build_dir:
        command = [
            "pdflatex", "-interaction=nonstopmode", "-halt-on-error",
            f"-output-directory={build_dir}", f"-jobname={out.stem}", main.name,
        ]  # fmt: skip
        log = Path(build_dir, out.stem + ".log")
        for _ in range(2):
            run = subprocess.run(
                command, cwd=main.parent, env=env, capture_output=True, text=True, check=False
            )
            if run.returncode != 0:
                tail = log.read_text(errors="replace")[-3000:] if log.exists() else run.stdout
                raise InputError(f"pdflatex failed on {main}:\n{tail}")
        atomic_write_bytes(out, Path(build_dir, out.stem + ".pdf").read_bytes())
        text = log.read_text(encoding="utf-8", errors="replace")
    return log_summary(text) + f"\npdflatex log of the last pass ({main.name}):\n" + text
