"""The benchmark registry: benchmarks packaged one folder each (see docs/adding-a-benchmark.md).

Why a registry: a benchmark used to be spread over ~17 files (Snakefile, schema, rules, commands,
data loaders, the simulator, the report). A benchmark package holds all of its own pieces, and
one :class:`Benchmark` line here is the only thing outside its folder that names it. The
Snakefile includes its rules file, :mod:`halluscope.config` merges its params-schema fragment,
the data stage takes its items loader, ``halluscope stage`` its stage commands, the simulator its
answerer and rule ``tables`` its tables, all from :data:`BENCHMARKS`.

A package ``halluscope.benchmarks.<name>`` holds (each optional but the rules and the schema):

- ``rules.smk``: its Snakemake rules (``results/<name>/<profile>/...``), included by the
  Snakefile;
- ``schema.json``: the JSON schema of its ``params.yaml`` section ``<name>`` (the section may be
  absent: the benchmark is then disabled);
- ``data.py``: ``items(options)`` for each dataset it defines (:attr:`Benchmark.datasets`);
- ``commands.py``: ``add_parser(subparsers)`` registering its ``stage-<name>-*`` commands;
- ``simulated.py``: the simulated LVLM's answerer of its task (``register_answerer``).

Packaged: CAOS (its scoring, summary, tables and figures), POPE, Tri-HE, PhD and NOPE (moved
here, every output unchanged) and AMBER (added this way). What stays outside is the caption
pipeline that CAOS and AMBER's generative task read (``stages/`` and ``rules/``: data, generate,
extract, oracle, embed) and the rules that collect every benchmark's tables and figures. POPE-F1
joins the CAOS summary: rule ``summarize`` reads POPE's ``pope_score_files``, so POPE is
registered (and its rules included) before CAOS.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Benchmark:
    """One packaged benchmark: its name (the params section, the ``results/<name>/`` folder and
    the ``stage-<name>-*`` prefix), the modules it contributes and the files it writes."""

    name: str
    title: str
    package: str
    datasets: tuple[str, ...] = ()  # data.dataset values whose items it defines
    tables: tuple[str, ...] = ()  # results/report/<profile>/<table>.{tex,csv}
    figures: tuple[str, ...] = ()  # results/figures/<profile>/<figure>.{pdf,png}
    titles: tuple[tuple[str, str], ...] = ()  # (table or figure, its label in the report)
    # (profile, (paper/sections/<template>.tex, tables, figures)): its reproduction-report section
    paper: tuple[tuple[str, tuple[str, list[str], list[str]]], ...] = ()
    # Params keys of its DVC stage when the demo profile runs it (empty: not a DVC stage), and the
    # data files that stage reads besides the package's code.
    dvc_params: tuple[str, ...] = ()
    dvc_data: tuple[str, ...] = ()
    # Whether a profile without its params section (or without ``enabled``) runs it: only CAOS,
    # the paper's own benchmark, which every caption profile scores.
    enabled_by_default: bool = False

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
        return json.loads((self.folder / "schema.json").read_text(encoding="utf-8"))

    def enabled(self, config: dict[str, Any]) -> bool:
        return bool((config.get(self.name) or {}).get("enabled", self.enabled_by_default))


#: Generation settings every answering benchmark's DVC stage reads.
ANSWERING = (
    "models",
    "generate.models",
    "generate.seed",
    "generate.max_new_tokens",
    "generate.temperature",
    "generate.template_version",
)

BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark(
        "pope",
        "POPE questions, answers and scores",
        "halluscope.benchmarks.pope",
        dvc_params=("pope", *ANSWERING),
    ),
    # CAOS's tables and figures are listed by its common.smk (caos_table_files, which depend on
    # tables.published and tables.compare_with); its DVC stages are score, figures and tables
    # (halluscope.registry.STAGES).
    Benchmark(
        "caos",
        "CAOS scores, summary, Tables 1-2, Figures 3-6",
        "halluscope.benchmarks.caos",
        titles=(
            ("caos_radar", "Figure 3: metrics per model (radar)"),
            ("caos_ksweep", "Figure 4: CAOS_K for k = 1..10"),
            ("caos_subsets", "Figure 5: CAOS on subsets of hallucinated objects"),
            ("caos_instructions", "Figure 6: CAOS across instructions"),
            ("caos_table1", "Table 1: CAOS, CHAIR, precision, recall"),
            ("caos_table2", "Table 2: CAOS ratios and average"),
            ("caos_ratios", "Ratios of the pooled means vs mean of per-caption ratios"),
            ("caos_sensitivity", "Sensitivity of Table 1 to K order, aggregation, readings"),
            ("caos_sensitivity_p", "Table 1 with unverified objects hallucinated at a rate p"),
            ("caos_agreement", "Rank agreement with the published Table 1"),
            ("llm_comparison", "Table 1 with and without the LLM extractor"),
        ),
        paper=(
            (
                "pope-captions",
                (
                    "caos-real",
                    [
                        "caos_comparison",
                        "caos_agreement",
                        "caos_table1",
                        "caos_ratios",
                        "caos_sensitivity",
                        "caos_sensitivity_p",
                        "caos_setting",
                        "caos_differences",
                    ],
                    ["caos_radar"],
                ),
            ),
            ("pope-captions-llm500", ("caos-llm", ["llm_comparison"], [])),
        ),
        enabled_by_default=True,
    ),
    Benchmark(
        "trihe",
        "Tri-HE answers, triplets, judgements, Hallu_Q / Hallu_I",
        "halluscope.benchmarks.trihe",
        datasets=("trihe-gqa",),
        tables=("trihe_table",),
        figures=("trihe_bars",),
        titles=(
            ("trihe_table", "Tri-HE Hallu_I / Hallu_Q per model"),
            ("trihe_bars", "Tri-HE object vs relation hallucination"),
        ),
        paper=(("trihe-gqa", ("trihe-real", ["trihe_table"], ["trihe_bars"])),),
        dvc_params=("trihe", *ANSWERING),
        dvc_data=("data/demo/trihe_questions.yaml",),
    ),
    Benchmark(
        "phd",
        "PhD prompts, answers and PhD Index per mode x task",
        "halluscope.benchmarks.phd",
        datasets=("phd-ccs",),
        tables=("phd_table",),
        figures=("phd_heatmap",),
        titles=(
            ("phd_table", "PhD Index per mode x task"),
            ("phd_heatmap", "PhD Index heatmap (mode x task)"),
        ),
        paper=(("phd-ccs", ("phd-real", ["phd_table"], ["phd_heatmap"])),),
        dvc_params=("phd", *ANSWERING),
        dvc_data=("data/demo/phd_questions.yaml",),
    ),
    Benchmark(
        "amber",
        "AMBER (generative task)",
        "halluscope.benchmarks.amber",
        datasets=("amber-gen",),
        tables=("amber_table",),
        titles=(("amber_table", "AMBER generative: CHAIR, Cover, Hal, Cog"),),
    ),
    Benchmark(
        "nope",
        "NOPE questions (list-then-rewrite), answers, accuracy / METEOR / NegP accuracy",
        "halluscope.benchmarks.nope",
        tables=("nope_table", "nope_breakdown"),
        figures=("nope_question_types",),
        titles=(
            ("nope_table", "NOPE accuracy, METEOR, NegP accuracy"),
            ("nope_breakdown", "NOPE NegP accuracy by question type and relevance"),
            ("nope_question_types", "NOPE accuracy per question type"),
        ),
        dvc_params=("nope", *ANSWERING),
        dvc_data=("data/demo/nope_fallback.yaml",),
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
