"""The code stages: which Python each step of the pipeline runs, digested for Snakemake.

Why: Snakemake reruns a job when its params change but does not see the package code its shell
command runs. Each rule passes the digest of its stage's code (:func:`code_digest`) as a
``params:`` value, so an edit of any module a stage imports, even transitively, reruns that
stage's jobs and what depends on them, and no other stage's. A stage names its entry modules and
files; the import closure is computed, never listed by hand. (``dvc.yaml`` is written by hand:
its stages depend on the whole package, and the Snakemake run inside each reruns only the jobs
whose digest moved.)
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CORE_CODE = [
    "Snakefile",
    "rules/common.smk",
    "src/halluscope/config.py",
    "src/halluscope/io.py",
    "src/halluscope/cli.py",
    "src/halluscope/hand_check.py",
    "src/halluscope/stage_command.py",
    "config/params.schema.json",
]


@dataclass(frozen=True)
class Stage:
    """One code stage: its name (the argument of the rules' ``code_version``) and its entry
    modules and files (folders expand to their ``*.py``)."""

    name: str
    code: list[str]


def benchmark_data_code() -> list[str]:
    """The items loaders of the packaged benchmarks' datasets and their data sources (the data
    stage runs them)."""
    from halluscope.benchmarks import BENCHMARKS

    loaders = [b.module_file("data") for b in BENCHMARKS if b.datasets]
    return loaders + benchmark_modules("sources")


def benchmark_modules(part: str) -> list[str]:
    """Every packaged benchmark's module that its ``PARTS`` declares as ``part`` (modules the
    registry imports at run time, which the static import closure cannot see)."""
    from halluscope.benchmarks import BENCHMARKS

    return [b.module_file(part) for b in BENCHMARKS if b.module(part)]


def benchmark_stages() -> list[Stage]:
    """One code stage per packaged benchmark (:mod:`halluscope.benchmarks`): its rules file and
    its stage and simulated-answerer modules."""
    from halluscope.benchmarks import BENCHMARKS

    return [
        Stage(
            b.name,
            [
                _repo_path(b.rules),
                *_rule_side(b),
                *_stage_files(b),
                *(b.module_file(m) for m in ("simulated", "sources") if b.module(m)),
                *b.dvc_data,
            ],
        )
        for b in BENCHMARKS
    ]


def _stage_files(benchmark: Any) -> list[str]:
    """The repository paths of the modules its ``PARTS`` declares stages in, in name order."""
    modules = sorted(set(benchmark.stage_modules().values()))
    return [f"src/{m.replace('.', '/')}.py" for m in modules]


def benchmark_report_code() -> list[str]:
    """The rules files (with their helpers, ``common.smk``, and the schema of their params
    section, whose defaults the settings read) and report modules of the packaged benchmarks
    the demo runs: the figures and tables stages run them."""
    from halluscope.benchmarks import BENCHMARKS

    return [
        path
        for b in BENCHMARKS
        if b.dvc_stage or b.module("code_stages")
        for path in (
            _repo_path(b.rules),
            *_rule_side(b),
            *([b.module_file("report")] if b.module("report") else []),
        )
    ]


def _rule_side(benchmark: Any) -> list[str]:
    """The repository paths of a benchmark's declared rules helpers and params schema."""
    return [benchmark.file(name) for name in (*benchmark.parts.helpers, benchmark.parts.schema)]


def _repo_path(path: Path) -> str:
    return path.relative_to(Path(__file__).resolve().parents[2]).as_posix()


def _declared_steps() -> list[Stage]:
    """The code stages benchmarks declare of their own (their ``code_stages`` part: CAOS's
    caption pipeline and scores)."""
    from halluscope.benchmarks import import_plugins

    return [Stage(**step) for module in import_plugins("code_stages") for step in module.STEPS]


STAGES: list[Stage] = [
    Stage(
        "data",
        ["rules/data.smk", "src/halluscope/stages/data.py", "data/demo", *benchmark_data_code()],
    ),
    *_declared_steps(),
    Stage(
        "figures",
        ["rules/figures.smk", "src/halluscope/report/benchmarks.py", *benchmark_report_code()],
    ),
    Stage(
        "tables",
        [
            "rules/tables.smk",
            "src/halluscope/stages/report.py",
            "src/halluscope/report/benchmarks.py",
            *benchmark_report_code(),
            *benchmark_modules("headlines"),
        ],
    ),
    Stage(
        "explorer",
        [
            "rules/explorer.smk",
            "src/halluscope/stages/explorer.py",
            *(f"src/halluscope/explorer/page.{suffix}" for suffix in ("html", "js", "css")),
            *benchmark_modules("explorer"),
        ],
    ),
]


PACKAGE = "halluscope"
SRC = Path("src")


def module_imports(path: Path, root: Path, strings: bool = True) -> set[Path]:
    """The ``halluscope`` modules a file imports anywhere in its body (function-level imports
    included: the CLI and stages import lazily), resolved to files under ``src/``. Static: read
    from the AST, nothing is imported. ``strings``: also count modules named by a string constant
    (``"halluscope.models.hf"``, imported through importlib by the backend registry)."""
    return set(_resolved_imports(path, root, path.read_text(encoding="utf-8"), strings))


@functools.cache
def _resolved_imports(path: Path, root: Path, text: str, strings: bool) -> frozenset[Path]:
    """:func:`module_imports` of one file's ``text``.

    Why cached by path and text: each of a Snakefile parse's 18 stage digests walks the shared
    modules again (about 830 calls for 120 files), and building and probing the candidate paths
    cost as much as parsing; an edited file has other text, so it is resolved anew.
    """
    package = path.relative_to(root / SRC).with_suffix("").parts[:-1]
    names = _stored_names(root, text, str(path), package, strings)
    found: set[Path] = set()
    for name in names:
        if name != PACKAGE and not name.startswith(PACKAGE + "."):
            continue
        parts = name.split(".")
        for candidate in (
            root / SRC / Path(*parts).with_suffix(".py"),
            root / SRC / Path(*parts) / "__init__.py",
        ):
            if candidate.is_file():
                found.add(candidate)
        for k in range(1, len(parts)):  # importing a.b.c runs a/__init__ and a/b/__init__
            init = root / SRC / Path(*parts[:k]) / "__init__.py"
            if init.is_file():
                found.add(init)
    return frozenset(found)


@functools.cache
def _imported_names(
    text: str, filename: str, package: tuple[str, ...], strings: bool
) -> frozenset[str]:
    """The dotted module names a module's source imports (see :func:`module_imports`).

    Why cached by source text: every stage's code set walks the shared modules again (14 stages
    per Snakefile parse), and parsing them dominated each ``snakemake`` start; an edited file has
    other text, so it is parsed anew.
    """
    import ast

    tree = ast.parse(text, filename=filename)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import
                parent = package[: len(package) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif strings and isinstance(node, ast.Constant) and isinstance(node.value, str):
            # modules named by string, imported with importlib (the lazy backend registry)
            if re.fullmatch(rf"{PACKAGE}(\.\w+)+", node.value):
                names.add(node.value)
    return frozenset(names)


#: The import names of the modules parsed so far, kept between processes (per project), by
#: source text: each ``snakemake`` start (a local run's one, two per job under an executor such
#: as SLURM's) digests every stage's code, and parsing the ~120 modules was most of that.
IMPORTS_CACHE = Path(".halluscope") / "imports.json"
# Entries kept at the most (an edited module adds one; the oldest go first, and one still in
# use is parsed and added again).
IMPORTS_CACHE_SIZE = 2000
_stored: dict[Path, dict[str, list[str]]] = {}  # project root -> key -> names, as on disk
_added: dict[Path, dict[str, list[str]]] = {}  # project root -> key -> names, to write


def _stored_names(
    root: Path, text: str, filename: str, package: tuple[str, ...], strings: bool
) -> frozenset[str]:
    """:func:`_imported_names`, through the project's :data:`IMPORTS_CACHE`; keyed by the source
    text's SHA-256 (and the package and ``strings``, which change the answer), so an edited
    module is parsed anew and a stale entry can never answer."""
    if root not in _stored:
        _stored[root] = _read_imports_cache(root / IMPORTS_CACHE)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    key = f"{digest}:{'.'.join(package)}:{int(strings)}"
    names = _stored[root].get(key)
    if names is None:
        names = sorted(_imported_names(text, filename, package, strings))
        _stored[root][key] = names
        _added.setdefault(root, {})[key] = names
    return frozenset(names)


def _read_imports_cache(path: Path) -> dict[str, list[str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        k: v
        for k, v in data.items()
        if isinstance(v, list) and all(isinstance(name, str) for name in v)
    }


def _write_imports_cache(root: Path) -> None:
    """Add this process's new entries to the project's cache file (atomically: processes that
    parse at the same time each write a whole file; an entry lost that way is parsed again)."""
    added = _added.pop(root, None)
    if not added:
        return
    path = root / IMPORTS_CACHE
    entries = {**_read_imports_cache(path), **added}
    if len(entries) > IMPORTS_CACHE_SIZE:  # oldest first (dicts keep insertion order)
        entries = dict(list(entries.items())[-IMPORTS_CACHE_SIZE:])
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(entries, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a read-only project: parse again next time
        tmp.unlink(missing_ok=True)


def import_closure(entries: list[Path], root: Path) -> set[Path]:
    """Every ``halluscope`` module reachable from ``entries`` by imports (the entries included)."""
    seen: set[Path] = set()
    todo = list(entries)
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        todo.extend(module_imports(path, root) - seen)
    _write_imports_cache(root)
    return seen


#: Argument-parsing modules: digested as files, not expanded (they import every stage lazily).
DISPATCH = "src/halluscope/commands/"
#: Stage code that only the rules read (not the job), so no Snakemake code digest holds it.
RULE_SIDE = (".smk", ".json")


def _entry_modules(stage: Stage, root: Path) -> list[Path]:
    """The Python entries a registry stage names whose imports are followed (folders expanded
    to their ``*.py``; the dispatch modules of ``commands/`` are not followed)."""
    files: list[Path] = []
    for entry in stage.code:
        if entry.startswith(DISPATCH):
            continue
        path = root / entry
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*.py")))
        elif path.suffix == ".py":
            files.append(path)
    return files


def code_files(stage: str, root: Path) -> list[Path]:
    """The Python files a stage runs: the core modules plus the *import closure* of the stage's
    entry modules. The closure is computed, never listed by hand, so an edit of any module a
    stage imports (even transitively) changes its digest and reruns it. The core modules (the
    CLI dispatch, config, io) are digested as files, not expanded: the CLI imports every stage
    lazily, and expanding it would make every stage depend on all the others. Other files of the
    package that a stage reads at run time (the explorer page's template, script and style) are
    digested too; not its rules files (Snakemake sees a rule's own edits) nor its params schema
    (read when the rule builds its settings, whose JSON Snakemake tracks)."""
    by_name = {s.name: s for s in [*benchmark_stages(), *STAGES]}
    if stage not in by_name:
        raise ValueError(f"unknown stage {stage!r}; stages: {', '.join(by_name)}")
    code = by_name[stage].code
    files = {root / e for e in [*CORE_CODE, *code] if e.startswith(DISPATCH)}
    package_data = [e for e in code if e.startswith("src/") and not e.endswith((".py", *RULE_SIDE))]
    files |= {root / e for e in package_data}
    files |= {root / entry for entry in CORE_CODE if entry.endswith(".py")}
    files |= import_closure(_entry_modules(by_name[stage], root), root)
    return sorted(files)


def code_digest(stage: str, root: Path) -> str:
    """SHA-256 over the stage's Python files (paths and bytes), for a Snakemake ``params:`` value.

    Why: Snakemake reruns a job when its params change but does not see the package code that
    its shell command runs; with this digest an edit of a stage's code reruns that stage's jobs
    (and what depends on them).
    """
    digest = hashlib.sha256()
    for path in code_files(stage, root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
