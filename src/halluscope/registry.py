"""The stage registry: the single source from which ``dvc.yaml`` is generated.

One entry per paper stage. Each DVC stage runs Snakemake on that stage's target rule, lists only
the dotted ``params.yaml`` keys the stage reads (DVC 3 records them per stage in ``dvc.lock``),
its code and upstream outputs as deps, and marks its output folders ``persist: true`` so DVC
never deletes what Snakemake keeps incrementally. ``scripts/write_dvc_yaml.py`` writes the file;
``tests/test_dvc_sync.py`` fails when the committed ``dvc.yaml`` differs from this registry.

The params of a stage are not listed by hand: they are the keys that the settings of its rules
read (:mod:`halluscope.rule_settings` finds each rule's settings class and outputs in the rules
files, :mod:`halluscope.settings` records the keys its ``from_config`` reads on the params.yaml
config), plus the keys that decide which files the stage's target builds (:attr:`Stage.shape`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

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
    """One paper stage: Snakemake target, deps and outputs (its params: :func:`stage_params`)."""

    name: str
    target: str
    code: list[str]
    outs: list[str]
    upstream: list[str] = field(default_factory=list)
    description: str = ""
    #: per-profile folders of headline metrics (``<folder>/<profile>/<model>.json``): DVC
    #: ``metrics:`` with ``cache: false``, so git carries them and ``dvc exp show`` compares an
    #: experiment with the committed baseline
    metrics: list[str] = field(default_factory=list)
    #: per-profile files among the outs (``{profile}`` in the path), cached like the folders
    files: list[str] = field(default_factory=list)
    #: the files its target builds, from the params and the profile (``None``: every output of
    #: its rules); the keys this reads are params of the stage, and a rule whose outputs are not
    #: among these files is not the stage's
    shape: Callable[[Mapping[str, Any], str], list[str]] | None = None


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


def benchmark_stages(dvc_only: bool = False) -> list[Stage]:
    """One code stage per packaged benchmark (:mod:`halluscope.benchmarks`): its rules file and
    its stage and simulated-answerer modules, for the Snakemake code digest. Those with
    ``dvc_stage`` (the demo runs them) are also DVC stages (``dvc_only``: only those)."""
    from halluscope.benchmarks import BENCHMARKS

    return [
        Stage(
            b.name,
            f"{b.name}_all",
            [
                _repo_path(b.rules),
                *_rule_side(b),
                *_stage_files(b),
                *(b.module_file(m) for m in ("simulated", "sources") if b.module(m)),
                *b.dvc_data,
            ],
            [f"results/{b.name}"],
            ["results/data"],
            b.title,
            shape=functools.partial(_enabled_files, b),
        )
        for b in BENCHMARKS
        if b.dvc_stage or not dvc_only
    ]


def _stage_files(benchmark: Any) -> list[str]:
    """The repository paths of the modules its ``PARTS`` declares stages in, in name order."""
    modules = sorted(set(benchmark.stage_modules().values()))
    return [f"src/{m.replace('.', '/')}.py" for m in modules]


def _enabled_files(benchmark: Any, config: Mapping[str, Any], profile: str) -> list[str]:
    """Every output of a benchmark's rules when it is enabled, else none."""
    return [f"results/{benchmark.name}/"] if benchmark.enabled(config) else []


def _table_files(config: Mapping[str, Any], profile: str) -> list[str]:
    from halluscope.benchmarks import BENCHMARKS

    tables = [f for b in BENCHMARKS for f in b.table_files(config, profile)]
    return [*tables, "results/tables/", "results/metrics/", "metrics/"]


def _figure_files(config: Mapping[str, Any], profile: str) -> list[str]:
    from halluscope.benchmarks import BENCHMARKS

    return [f for b in BENCHMARKS for f in b.figure_files(config, profile)]


def benchmark_report_code() -> list[str]:
    """The rules files (with their helpers, ``common.smk``, and the schema of their params
    section, whose defaults the settings read) and report modules of the packaged benchmarks
    the demo runs (DVC stages): the figures and tables stages run them."""
    from halluscope.benchmarks import BENCHMARKS

    return [
        path
        for b in BENCHMARKS
        if b.dvc_stage or b.module("dvc_stages")
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


def _declared(part: str) -> list[dict[str, Any]]:
    """The ``part`` list (``BEFORE``, ``AFTER``, ``REPORTED``, ``PLOTS``) of every benchmark that
    declares DVC stages of its own (its ``dvc_stages`` part: CAOS's caption pipeline, scores)."""
    from halluscope.benchmarks import import_plugins

    return [entry for module in import_plugins("dvc_stages") for entry in getattr(module, part)]


def _reported() -> list[str]:
    """What the figures and tables stages read: the result folders of the benchmarks."""
    from halluscope.benchmarks import BENCHMARKS

    own = (f"results/{b.name}" for b in BENCHMARKS if b.dvc_stage and b.module("report"))
    return [*_declared("REPORTED"), *own]


STAGES: list[Stage] = [
    Stage(
        "data",
        "data_all",
        ["rules/data.smk", "src/halluscope/stages/data.py", "data/demo", *benchmark_data_code()],
        ["results/data"],
        description="images and per-image ground truth",
    ),
    *(Stage(**stage) for stage in _declared("BEFORE")),
    *benchmark_stages(dvc_only=True),
    *(Stage(**stage) for stage in _declared("AFTER")),
    Stage(
        "figures",
        "figures_all",
        ["rules/figures.smk", "src/halluscope/report/benchmarks.py", *benchmark_report_code()],
        ["results/figures"],
        _reported(),
        "every enabled benchmark's figures (PDF, PNG) and their data (CSV)",
        shape=_figure_files,
    ),
    Stage(
        "tables",
        "tables metrics",
        [
            "rules/tables.smk",
            "src/halluscope/stages/report.py",
            "src/halluscope/report/benchmarks.py",
            *benchmark_report_code(),
            *benchmark_modules("headlines"),
        ],
        ["results/report", "results/tables"],
        _reported(),
        "every enabled benchmark's tables (LaTeX, CSV twins), the metrics JSON and the headline",
        metrics=["metrics"],
        files=["results/metrics/{profile}.json"],
        shape=_table_files,
    ),
    Stage(
        "explorer",
        "explorer_all",
        [
            "rules/explorer.smk",
            "src/halluscope/stages/explorer.py",
            *(f"src/halluscope/explorer/page.{suffix}" for suffix in ("html", "js", "css")),
            *benchmark_modules("explorer"),
        ],
        ["results/explorer"],
        # what the page shows: the caption pipeline's files and every benchmark's answers
        [
            "results/data",
            *_declared("SHOWN"),
            *(out for stage in benchmark_stages(dvc_only=True) for out in stage.outs),
        ],
        "the explorer page: every caption and answer per image, worst images first",
    ),
]


@dataclass(frozen=True)
class Plot:
    """A top-level DVC plot: a CSV the figures stage writes beside a figure (rule ``figure``)."""

    name: str  # the figure: results/figures/<profile>/<name>.csv
    x: str
    y: str | list[str]
    template: str  # a DVC template, or one of ours in .dvc/plots/ (``series_*``)
    title: str
    x_label: str
    y_label: str


#: ``dvc plots show`` / ``dvc plots diff``: the benchmarks' figure data, inside the figures
#: stage's out folder (DVC allows top-level plots there). The ``series_*`` templates of
#: ``.dvc/plots/`` draw one series per model x embedder (DVC's own colour only by revision,
#: file or column, which would join the six series into one line), and leave out a row whose x
#: or y cell is blank: a blank cell is no point, not 0.
PLOTS: list[Plot] = [Plot(**plot) for plot in _declared("PLOTS")]


def dvc_plots(profile: str) -> list[dict]:
    """The top-level ``plots:`` of ``dvc.yaml`` for the params.yaml profile."""
    return [
        {
            f"results/figures/{profile}/{plot.name}.csv": {
                "x": plot.x,
                "y": plot.y,
                "template": plot.template,
                "title": plot.title,
                "x_label": plot.x_label,
                "y_label": plot.y_label,
            }
        }
        for plot in PLOTS
    ]


def dvc_yaml() -> str:
    """Render ``dvc.yaml`` from :data:`STAGES` and :data:`PLOTS` (deterministic text)."""
    stages = {}
    root = Path(__file__).resolve().parents[2]
    profile = dvc_profile(root)
    for stage in STAGES:
        stages[stage.name] = {
            "desc": stage.description,
            "cmd": f"snakemake --cores all --rerun-incomplete {stage.target}",
            "deps": [
                *CORE_CODE,
                *dvc_code_deps(stage, root),
                *(f"{u}/{profile}" for u in stage.upstream),
            ],
            "params": stage_params(stage, root),
            # only the params.yaml profile's folders: other profiles' results are not DVC's
            "outs": [
                {path: {"persist": True}}
                for path in [
                    *(f"{out}/{profile}" for out in stage.outs),
                    *(f.format(profile=profile) for f in stage.files),
                ]
            ],
        }
        if stage.metrics:
            # in git, not DVC's cache (.gitignore lets them through): the committed baseline
            stages[stage.name]["metrics"] = [
                {f"{m}/{profile}": {"cache": False, "persist": True}} for m in stage.metrics
            ]
    header = (
        "# GENERATED by scripts/write_dvc_yaml.py from src/halluscope/registry.py;"
        " do not edit by hand.\n"
    )
    document = {"stages": stages, "plots": dvc_plots(profile)}
    return header + yaml.safe_dump(document, sort_keys=False, width=100)


def stage_params(stage: Stage, root: Path | None = None) -> list[str]:
    """The dotted ``params.yaml`` keys a DVC stage reads: those the ``from_config`` of its
    rules' settings read (:func:`halluscope.settings.read_keys`), on the params.yaml config, and
    those that decide which files its target builds (``shape``); as ``params.yaml`` holds them
    (:func:`halluscope.settings.params_keys`)."""
    from halluscope.config import load
    from halluscope.rule_settings import stage_settings
    from halluscope.settings import KeyRecorder, params_keys, read_keys

    root = root or Path(__file__).resolve().parents[2]
    config = load(root / "params.yaml")
    profile = str(config["profile"])
    recorder = KeyRecorder(config)
    built = stage.shape(recorder, profile) if stage.shape else None
    keys = read_keys(stage_settings(stage, built, profile, root), config) | recorder.keys_read
    return params_keys(keys, yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8")))


def dvc_profile(root: Path | None = None) -> str:
    """The profile ``dvc repro`` runs: the ``profile`` of params.yaml (DVC reads no overlay)."""
    path = (root or Path(__file__).resolve().parents[2]) / "params.yaml"
    return str(yaml.safe_load(path.read_text(encoding="utf-8"))["profile"])


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
IMPORTS_CACHE = Path(".snakemake") / "halluscope-imports.json"
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


def dvc_code_deps(stage: Stage, root: Path) -> list[str]:
    """DVC deps of a stage's code: its non-Python entries (rules, data) and its import closure."""
    others = [
        e
        for e in stage.code
        if not (e.endswith(".py") or (root / e).is_dir() and e.startswith("src/"))
    ]
    closure = import_closure(_entry_modules(stage, root), root)
    core = {root / entry for entry in CORE_CODE}
    return others + sorted(p.relative_to(root).as_posix() for p in closure - core)


def code_digest(stage: str, root: Path) -> str:
    """SHA-256 over the stage's Python files (paths and bytes), for a Snakemake ``params:`` value.

    Why: Snakemake reruns a job when its params change but does not see the package code that
    its shell command runs; with this digest an edit of a stage's code reruns that stage's jobs
    (and what depends on them), as ``dvc repro`` does with the same code lists.
    """
    digest = hashlib.sha256()
    for path in code_files(stage, root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
