"""The benchmark registry: benchmarks packaged one folder each (see docs/adding-a-benchmark.md).

Why a registry: a benchmark spread over files outside its folder (the Snakefile, the data
sources, the report's titles, tests) is hard to add and to remove. A benchmark package holds all
of its own pieces, and one :class:`Benchmark` line here is the only code outside its folder that
names it; everything else is discovered from the folder. The Snakefile includes its rules file,
:mod:`halluscope.config` merges its params-schema fragment, the data stage takes its items
loader, ``halluscope stage`` its stage functions, the simulator its answerer, rule ``tables`` its
tables, the report its captions and the paper its section, all from :data:`BENCHMARKS`.

A package ``halluscope.benchmarks.<name>`` holds (each optional but the rules and the schema):

- ``rules.smk``: its Snakemake rules (``results/<name>/<profile>/...``), included by the
  Snakefile;
- ``schema.json``: the JSON schema of its ``params.yaml`` section ``<name>`` (the section may be
  absent: the benchmark is then disabled), its profiles and the ``data.dataset`` values it
  defines;
- ``data.py``: ``items(options)`` for each dataset it defines;
- ``sources.py``: ``SOURCES``, the raw files it reads (merged into
  :data:`halluscope.data.sources.SOURCES`);
- ``stages.py`` (and any module of the folder): its stages, each a function declared
  ``@stage("<name>-<step>")`` whose signature is its command line
  (:mod:`halluscope.stage_command`);
- ``check.py``: ``add_parser(subparsers)`` registering its hand-check commands;
- ``params_check.py``: ``check(config, source)``, its checks of the params beyond its schema;
- ``needs.py``: ``RULE_NEEDS``, the models each job of its model-calling rules loads;
- ``simulated.py``: the simulated LVLM's answerer of its task (``register_answerer``) and the
  preset fields it reads (``declare_preset_fields``);
- ``headlines.py``: ``HEADLINES``, its numbers in ``metrics/<profile>/<model>.json``;
- ``report_files.py``: ``table_files(config, run)`` and ``figure_files(config, run)`` when
  its tables and figures depend on params (CAOS) rather than on its captions alone;
- ``<table or figure>.rst``: the report caption of each table and figure, whose first line
  ``.. table: <title>`` or ``.. figure: <title>`` declares it (built whenever the benchmark is
  enabled) and ``.. title: <title>`` only labels it (a benchmark that lists its own outputs);
- ``paper.tex``, ``paper-<more>.tex``: its sections of the reproduction report, whose inputs
  are read from the section itself (:mod:`halluscope.report.paper`);
- ``tests/``: its tests (collected by pytest with the suite).

CAOS's folder also holds the rules of its caption pipeline (generate, extract, oracle, embed),
whose stage code is in ``benchmarks/caos/captions/``; the data stage and the rules that
collect every benchmark's tables and figures stay outside. See docs/architecture.md.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent


CAPTION_MARK = re.compile(r"\.\. (table|figure|title): (.+)")


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
    the ``<name>-*`` prefix of its stage names) and its label; what it contributes is read from
    its folder."""

    name: str
    title: str
    # Whether it is a DVC stage of its own (the demo profile runs it; its params are the keys its
    # rules' settings read, halluscope.registry), and the data files that stage reads besides the
    # package's code.
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
    def rules(self) -> Path:
        return self.folder / "rules.smk"

    def module(self, part: str) -> str | None:
        """``<package>.<part>`` when the package has that module, else None.

        Built at run time, on purpose: the static import closure of a stage that reads this
        registry (the data stage, the sim) does not grow by every benchmark's modules; the stages
        that do run them list them (:func:`halluscope.registry.benchmark_stages`)."""
        return f"{self.package}.{part}" if (self.folder / f"{part}.py").is_file() else None

    def module_file(self, part: str) -> str:
        """The repository path of ``<package>/<part>.py`` (for the stage registry)."""
        return f"src/halluscope/benchmarks/{self.name}/{part}.py"

    def schema(self) -> dict[str, Any]:
        return _schema(self.folder)

    @property
    def datasets(self) -> tuple[str, ...]:
        """The ``data.dataset`` values whose items its ``data.py`` defines (its schema says)."""
        return tuple(self.schema().get("datasets", ()))

    def captions(self) -> tuple[Caption, ...]:
        return _captions(self.folder)

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
        """(table or figure, its label in the report) of every marked caption."""
        return tuple((c.name, c.title) for c in self.captions())

    def table_files(self, config: dict[str, Any], run: str) -> list[str]:
        """The tables rule ``tables`` assembles when the benchmark is enabled: LaTeX and CSV
        twin of each ``.. table:`` caption, or what its ``report_files.py`` lists."""
        if not self.enabled(config):
            return []
        if files := self._files():
            return files.table_files(config, run)
        return [f"results/report/{run}/{t}.{ext}" for t in self.tables for ext in ("tex", "csv")]

    def figure_files(self, config: dict[str, Any], run: str) -> list[str]:
        """The figures (PDF and PNG) of each ``.. figure:`` caption, or what its
        ``report_files.py`` lists, when the benchmark is enabled."""
        if not self.enabled(config):
            return []
        if files := self._files():
            return files.figure_files(config, run)
        return [f"results/figures/{run}/{f}.{ext}" for f in self.figures for ext in ("pdf", "png")]

    def _files(self) -> Any:
        import importlib

        name = self.module("report_files")
        return importlib.import_module(name) if name else None

    def paper_sections(self) -> tuple[Path, ...]:
        """Its sections of the reproduction report: ``paper.tex`` first, then ``paper-*.tex``
        in name order."""
        found = self.folder.glob("paper*.tex")
        return tuple(sorted(found, key=lambda p: (p.stem != "paper", p.stem)))

    def enabled(self, config: dict[str, Any]) -> bool:
        return bool((config.get(self.name) or {}).get("enabled", self.enabled_by_default))


def _schema(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "schema.json").read_text(encoding="utf-8"))


@cache
def _captions(folder: Path) -> tuple[Caption, ...]:
    """The marked captions of ``folder`` in name order (an unmarked ``.rst`` is a caption of a
    file the rules name themselves, such as a figure's CSV data)."""
    out = []
    for path in sorted(folder.glob("*.rst")):
        first = path.read_text(encoding="utf-8").partition("\n")[0]
        if match := CAPTION_MARK.fullmatch(first.strip()):
            out.append(Caption(path.stem, match[1], match[2].strip()))
    return tuple(out)


BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark("pope", "POPE questions, answers and scores", dvc_stage=True),
    # CAOS lists its own tables and figures (report_files.py: they depend on tables.published
    # and tables.compare_with) and its own DVC stages (dvc_stages.py: the caption pipeline's).
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
    Benchmark("hallusionbench", "HallusionBench aAcc / fAcc / qAcc (hand-check command)"),
)


def by_name(name: str) -> Benchmark:
    for benchmark in BENCHMARKS:
        if benchmark.name == name:
            return benchmark
    raise KeyError(f"no benchmark {name!r}; registered: {[b.name for b in BENCHMARKS]}")


@cache
def dataset_items() -> dict[str, Any]:
    """``data.dataset`` value -> the ``items(options)`` loader of the benchmark that defines it."""
    import importlib

    out = {}
    for benchmark in BENCHMARKS:
        for dataset in benchmark.datasets:
            out[dataset] = importlib.import_module(str(benchmark.module("data"))).items
    return out


def import_plugins(part: str) -> list[Any]:
    """Import every benchmark's ``<part>`` module (``commands``, ``simulated``) that exists."""
    import importlib

    names = (b.module(part) for b in BENCHMARKS)
    return [importlib.import_module(name) for name in names if name is not None]
