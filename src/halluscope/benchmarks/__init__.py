"""The benchmark registry: benchmarks packaged one folder each (see docs/adding-a-benchmark.md).

Why a registry: a benchmark spread over files outside its folder (the Snakefile, the data
sources, the report's titles, tests) is hard to add and to remove. A benchmark package holds all
of its own pieces and declares them in its ``__init__.py`` as ``PARTS``, a :class:`Parts`; one
:class:`Benchmark` line here is the only code outside its folder that names it. The Snakefile
includes its rules file, :mod:`halluscope.config` merges its params-schema fragment, the data
stage takes its items loader, ``halluscope stage`` its stage functions, the simulator its
answerer, rule ``tables`` its tables, the report its captions and the paper its section, all
from :data:`BENCHMARKS` and each one's declaration.

Why declared, not found: a part found by the presence of a file name (or a stage by a scan of
source text) is invisible to a reader of the package and silently lost to a typo; a declared
part that is missing is an error naming the benchmark and the part, and a module that is not
declared is never imported as a part. The declaration is read at run time
(:func:`importlib.import_module` of the package), so the static import closure of a stage that
reads this registry (the data stage, the sim) does not grow by every benchmark's package; the
stages that do run a benchmark's parts list them (:func:`halluscope.registry.benchmark_stages`).

What :class:`Parts` declares (each optional but the rules and the schema):

- ``rules`` (``rules.smk``): its Snakemake rules (``results/<name>/<profile>/...``), included
  by the Snakefile, and ``helpers`` (``common.smk``), the rules' helper functions;
- ``schema`` (``schema.json``): the JSON schema of its ``params.yaml`` section ``<name>`` (the
  section may be absent: the benchmark is then disabled), its profiles and the ``data.dataset``
  values it defines;
- ``stages``: module -> the stage names it declares, each a function ``@stage("<name>-<step>")``
  whose signature is its command line (:mod:`halluscope.stage_command`);
- ``data``: ``items(options)`` for each dataset it defines;
- ``sources``: ``SOURCES``, the raw files it reads (merged into
  :data:`halluscope.data.sources.SOURCES`);
- ``check``: ``add_parser(subparsers)`` registering its hand-check commands;
- ``params_check``: ``check(config, source)``, its checks of the params beyond its schema;
- ``needs``: ``RULE_NEEDS``, the models each job of its model-calling rules loads;
- ``simulated``: the simulated LVLM's answerer of its task (``register_answerer``) and the
  preset fields it reads (``declare_preset_fields``);
- ``headlines``: ``HEADLINES``, its numbers in ``metrics/<profile>/<model>.json``;
- ``explorer``: its records of the explorer page (:mod:`halluscope.explorer.records`);
- ``report``: the code that writes its tables and figures (in the digests of those stages);
- ``report_files``: ``table_files(config, run)`` and ``figure_files(config, run)`` when its
  tables and figures depend on params (CAOS) rather than on its captions alone;
- ``code_stages``: ``STEPS``, code stages of its own, each digested apart (CAOS's caption
  pipeline and scores: an edit of one step reruns that step);
- ``tables``, ``figures``: the report caption ``<name>.rst`` of each table and figure it builds
  whenever it is enabled (first line ``.. table: <title>`` / ``.. figure: <title>``), and
  ``labels`` those whose first line ``.. title: <title>`` only labels a file it lists itself;
- ``paper``: its sections of the reproduction report, in order, whose inputs are read from the
  section itself (:mod:`halluscope.report.paper`).

Its ``tests/`` are collected by pytest with the suite. CAOS's folder also holds the rules of
its caption pipeline (generate, extract, oracle, embed), whose stage code is in
``benchmarks/caos/captions/``; the data stage and the rules that collect every benchmark's
tables and figures stay outside. See docs/architecture.md.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent


CAPTION_MARK = re.compile(r"\.\. (table|figure|title): (.+)")

#: The module parts of :class:`Parts` (each the name of a module of the package, or None).
MODULE_PARTS = (
    "data",
    "sources",
    "check",
    "params_check",
    "needs",
    "simulated",
    "headlines",
    "explorer",
    "report",
    "report_files",
    "code_stages",
)


class PartError(LookupError):
    """A benchmark's declaration names a part its folder lacks (or is not a :class:`Parts`)."""


@dataclass(frozen=True)
class Parts:
    """What a benchmark package holds, declared once in its ``__init__.py`` as ``PARTS`` (the
    module docstring says what each part is). Module parts are names relative to the package
    (``"check"``, ``"captions.embed"``); files are names in its folder."""

    rules: str = "rules.smk"
    schema: str = "schema.json"
    helpers: tuple[str, ...] = ()
    stages: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    data: str | None = None
    sources: str | None = None
    check: str | None = None
    params_check: str | None = None
    needs: str | None = None
    simulated: str | None = None
    headlines: str | None = None
    explorer: str | None = None
    report: str | None = None
    report_files: str | None = None
    code_stages: str | None = None
    tables: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    paper: tuple[str, ...] = ()

    def files(self) -> dict[str, str]:
        """Part -> the file of the folder it names, for every declared part (the check that
        each one is there)."""
        found = {"rules": self.rules, "schema": self.schema}
        found |= {f"helpers {name}": name for name in self.helpers}
        found |= {f"stages {m}": _module_path(m) for m in self.stages}
        found |= {p: _module_path(getattr(self, p)) for p in MODULE_PARTS if getattr(self, p)}
        for kind in ("tables", "figures", "labels"):
            found |= {f"{kind} {name}": f"{name}.rst" for name in getattr(self, kind)}
        return found | {f"paper {name}": name for name in self.paper}


def _module_path(module: str) -> str:
    return module.replace(".", "/") + ".py"


@dataclass(frozen=True)
class Caption:
    """A report caption of a benchmark's folder (``<name>.rst``) and what its first line says:
    ``kind`` table or figure (built whenever the benchmark is enabled) or title (a label only)."""

    name: str
    kind: str
    title: str


@dataclass(frozen=True)
class Benchmark:
    """One packaged benchmark: its name (the params section, the ``results/<name>/`` folder and
    the ``<name>-*`` prefix of its stage names) and its label; what it contributes is its
    package's declaration (:attr:`parts`)."""

    name: str
    title: str
    # Whether it is a stage of dvc.yaml (the demo profile runs it: its target <name>_all), and
    # the data files its jobs read besides the package's code (in its code digest).
    dvc_stage: bool = False
    dvc_data: tuple[str, ...] = ()
    # Whether a profile without its params section (or without ``enabled``) runs it: only CAOS,
    # the paper's own benchmark, which every caption profile scores.
    enabled_by_default: bool = False

    @property
    def package(self) -> str:
        return f"{__name__}.{self.name}"

    @property
    def folder(self) -> Path:
        return PACKAGE_DIR / self.name

    @property
    def parts(self) -> Parts:
        """Its package's ``PARTS``, each declared file checked to be in its folder."""
        return _parts(self.name, self.package, self.folder)

    @property
    def rules(self) -> Path:
        return self.folder / self.parts.rules

    def module(self, part: str) -> str | None:
        """``<package>.<module>`` of the module its declaration names for ``part``, else None."""
        if part not in MODULE_PARTS:
            raise PartError(f"no benchmark part {part!r}; parts: {', '.join(MODULE_PARTS)}")
        name = getattr(self.parts, part)
        return f"{self.package}.{name}" if name else None

    def module_file(self, part: str) -> str:
        """The repository path of the module its declaration names for ``part``."""
        name = getattr(self.parts, part) if part in MODULE_PARTS else None
        if not name:
            raise PartError(f"benchmark {self.name!r} declares no {part} part")
        return self.file(_module_path(name))

    def file(self, name: str) -> str:
        """The repository path of the file ``name`` of its folder."""
        return f"src/halluscope/benchmarks/{self.name}/{name}"

    def stage_modules(self) -> dict[str, str]:
        """Stage name -> ``<package>.<module>`` that declares it, as its ``stages`` says."""
        return {s: f"{self.package}.{m}" for m, names in self.parts.stages.items() for s in names}

    def schema(self) -> dict[str, Any]:
        return _schema(self.folder / self.parts.schema)

    @property
    def datasets(self) -> tuple[str, ...]:
        """The ``data.dataset`` values whose items its ``data`` part defines (its schema says)."""
        return tuple(self.schema().get("datasets", ()))

    def captions(self) -> tuple[Caption, ...]:
        """Its declared captions in name order (as the report lists them)."""
        return _captions(self)

    @property
    def tables(self) -> tuple[str, ...]:
        """``results/report/<profile>/<table>.{tex,csv}`` of each ``.. table:`` caption."""
        return tuple(c.name for c in self.captions() if c.kind == "table")

    @property
    def figures(self) -> tuple[str, ...]:
        """``results/figures/<profile>/<figure>.{pdf,png}`` of each ``.. figure:`` caption."""
        return tuple(c.name for c in self.captions() if c.kind == "figure")

    @property
    def titles(self) -> tuple[tuple[str, str], ...]:
        """(table or figure, its label in the report) of every declared caption."""
        return tuple((c.name, c.title) for c in self.captions())

    def table_files(self, config: dict[str, Any], run: str) -> list[str]:
        """The tables rule ``tables`` assembles when the benchmark is enabled: LaTeX and CSV
        twin of each declared table, or what its ``report_files`` part lists."""
        if not self.enabled(config):
            return []
        if files := self._files():
            return files.table_files(config, run)
        return [f"results/report/{run}/{t}.{ext}" for t in self.tables for ext in ("tex", "csv")]

    def figure_files(self, config: dict[str, Any], run: str) -> list[str]:
        """The figures (PDF and PNG) of each declared figure, or what its ``report_files`` part
        lists, when the benchmark is enabled."""
        if not self.enabled(config):
            return []
        if files := self._files():
            return files.figure_files(config, run)
        return [f"results/figures/{run}/{f}.{ext}" for f in self.figures for ext in ("pdf", "png")]

    def _files(self) -> Any:
        name = self.module("report_files")
        return importlib.import_module(name) if name else None

    def paper_sections(self) -> tuple[Path, ...]:
        """Its sections of the reproduction report, in the order it declares them."""
        return tuple(self.folder / name for name in self.parts.paper)

    def enabled(self, config: dict[str, Any]) -> bool:
        return bool((config.get(self.name) or {}).get("enabled", self.enabled_by_default))


@cache
def _parts(name: str, package: str, folder: Path) -> Parts:
    """The ``PARTS`` of ``package``, every file it names checked to be in ``folder``."""
    parts = getattr(importlib.import_module(package), "PARTS", None)
    if not isinstance(parts, Parts):
        raise PartError(f"benchmark {name!r}: its __init__.py declares no PARTS = Parts(...)")
    for part, file in parts.files().items():
        if not (folder / file).is_file():
            raise PartError(f"benchmark {name!r} declares its {part} part, but {file} is missing")
    return parts


def _schema(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def _captions(benchmark: Benchmark) -> tuple[Caption, ...]:
    """The declared captions of a benchmark in name order, each first line's mark checked
    against the kind it is declared as (an unmarked ``.rst`` is a caption of a file the rules
    name themselves, such as a figure's CSV data, and is not declared)."""
    parts = benchmark.parts
    kinds = {"table": parts.tables, "figure": parts.figures, "title": parts.labels}
    out = []
    for kind, names in kinds.items():
        for caption in names:
            first = (
                (benchmark.folder / f"{caption}.rst").read_text(encoding="utf-8").partition("\n")[0]
            )
            match = CAPTION_MARK.fullmatch(first.strip())
            if not match or match[1] != kind:
                raise PartError(
                    f"benchmark {benchmark.name!r} declares {caption}.rst a {kind} caption,"
                    f" but its first line is not '.. {kind}: <title>'"
                )
            out.append(Caption(caption, kind, match[2].strip()))
    return tuple(sorted(out, key=lambda c: c.name))


BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark("pope", "POPE questions, answers and scores", dvc_stage=True),
    # CAOS lists its own tables and figures (report_files.py: they depend on tables.published
    # and tables.compare_with) and its own code stages (code_stages.py: the caption pipeline's).
    Benchmark("caos", "CAOS scores, summary, Tables 1-2, Figures 3-6", enabled_by_default=True),
    Benchmark(
        "trihe",
        "Tri-HE answers, triplets, judgements, Hallu_Q / Hallu_I",
        dvc_stage=True,
        dvc_data=("data/demo/trihe_questions.yaml",),
    ),
    Benchmark(
        "phd",
        "PhD prompts, answers and PhD Index per mode x task",
        dvc_stage=True,
        dvc_data=("data/demo/phd_questions.yaml",),
    ),
    Benchmark("amber", "AMBER (generative task)"),
    Benchmark(
        "nope",
        "NOPE questions (list-then-rewrite), answers, accuracy / METEOR / NegP accuracy",
        dvc_stage=True,
        dvc_data=("data/demo/nope_fallback.yaml",),
    ),
    Benchmark(
        "hallusionbench",
        "HallusionBench answers to the text-only questions, judged; aAcc / fAcc / qAcc",
        dvc_stage=True,
        dvc_data=("data/demo/hallusionbench_questions.json",),
    ),
)


def by_name(name: str) -> Benchmark:
    for benchmark in BENCHMARKS:
        if benchmark.name == name:
            return benchmark
    raise KeyError(f"no benchmark {name!r}; registered: {[b.name for b in BENCHMARKS]}")


@cache
def dataset_items() -> dict[str, Any]:
    """``data.dataset`` value -> the ``items(options)`` loader of the benchmark that defines it."""
    out = {}
    for benchmark in BENCHMARKS:
        for dataset in benchmark.datasets:
            if not (module := benchmark.module("data")):
                raise PartError(f"benchmark {benchmark.name!r} defines datasets, no data part")
            out[dataset] = importlib.import_module(module).items
    return out


def import_plugins(part: str) -> list[Any]:
    """Import the ``<part>`` module (``check``, ``simulated``) of every benchmark that declares
    one, in registry order; no other module of its folder is imported."""
    names = (b.module(part) for b in BENCHMARKS)
    return [importlib.import_module(name) for name in names if name is not None]
