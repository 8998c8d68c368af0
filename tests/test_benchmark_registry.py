"""The benchmark registry (halluscope.benchmarks): a packaged benchmark is its folder plus one
registry line, and every part of the pipeline finds it through the registry."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest
import yaml
from pipeline_helpers import ROOT, merged_params

import halluscope.benchmarks as registry
from halluscope.benchmarks import (
    BENCHMARKS,
    Benchmark,
    PartError,
    by_name,
    dataset_items,
    import_plugins,
)
from halluscope.config import validate
from halluscope.registry import benchmark_stages, code_files


@pytest.mark.parametrize("benchmark", BENCHMARKS, ids=lambda b: b.name)
def test_a_benchmark_is_its_folder(benchmark) -> None:
    folder = ROOT / "src" / "halluscope" / "benchmarks" / benchmark.name
    assert benchmark.folder == folder
    assert benchmark.rules.is_file() and (folder / "schema.json").is_file()
    fragment = json.loads((folder / "schema.json").read_text(encoding="utf-8"))
    assert fragment["section"]["properties"]["enabled"]["type"] == "boolean"
    for profile in fragment["profiles"]:  # every profile it declares exists and validates
        config = merged_params(profile)
        validate(config, source=profile)
        assert by_name(benchmark.name).enabled(config)
    for dataset in benchmark.datasets:
        assert callable(dataset_items()[dataset])


def test_the_demo_runs_exactly_the_benchmarks_with_a_dvc_stage() -> None:
    """A benchmark the demo runs (PhD) is a stage of dvc.yaml; one it does not run has no
    section in params.yaml at all (an absent section means disabled) and no DVC stage. CAOS,
    enabled by default, is the stage caos (its tables and figures are the report stage's)."""
    config = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    caos = by_name("caos")
    assert caos.enabled(config) and caos.enabled({}) and not by_name("pope").enabled({})
    assert {"data", "caos", "report"} <= set(stages)
    for benchmark in BENCHMARKS:
        if benchmark is caos:
            continue
        assert benchmark.enabled(config) == benchmark.dvc_stage
        assert (benchmark.name in stages) == benchmark.dvc_stage
        if not benchmark.dvc_stage:
            assert benchmark.name not in config
    validate(config)


def test_stage_commands_and_answerers_come_from_the_packages() -> None:
    from halluscope.models.sim import answered_tasks
    from halluscope.stage_command import stage_names

    names = set(stage_names())
    assert [m.__name__ for m in import_plugins("simulated")] == [
        b.module("simulated") for b in BENCHMARKS if b.module("simulated")
    ]
    assert {"phd-prompts", "phd-answers", "phd-score", "phd-table", "phd-figure"} <= names
    trihe = {"questions", "answers", "triplets", "judge", "table", "figure"}
    assert {f"trihe-{stage}" for stage in trihe} <= names
    assert {f"pope-{stage}" for stage in ("questions", "answers", "score")} <= names
    assert {"yesno", "trihe", "trihe-describe", "trihe-answer", "phd"} <= set(answered_tasks())


def test_code_stage_digests_the_package_and_dvc_yaml_holds_only_the_demo() -> None:
    assert [s.name for s in benchmark_stages()] == [b.name for b in BENCHMARKS]
    for benchmark in BENCHMARKS:
        files = {p.relative_to(ROOT).as_posix() for p in code_files(benchmark.name, ROOT)}
        for module in benchmark.stage_modules().values():
            assert f"src/{module.replace('.', '/')}.py" in files, (benchmark.name, module)
        if benchmark.module("simulated"):
            assert benchmark.module_file("simulated") in files, benchmark.name
    data = {p.relative_to(ROOT).as_posix() for p in code_files("data", ROOT)}
    for benchmark in BENCHMARKS:
        if benchmark.datasets:
            assert benchmark.module_file("data") in data
            assert benchmark.file("metric.py") not in data  # closures stay per stage


@pytest.mark.parametrize(
    "benchmark", [b for b in BENCHMARKS if b.dvc_stage and (b.tables or b.figures)],
    ids=lambda b: b.name,
)  # fmt: skip
def test_the_code_that_writes_a_table_or_figure_is_in_that_stage_digest(benchmark) -> None:
    """A package's table and figure jobs carry the tables/figures code digest: the code that
    computes and writes them must be inside it (its report.py), so an edit of it reruns them;
    the package's commands.py, outside that digest, only parses and delegates."""
    report = ROOT / benchmark.module_file("report")
    for stage, names in (("tables", benchmark.tables), ("figures", benchmark.figures)):
        if names:
            assert report in code_files(stage, ROOT), (benchmark.name, stage)
    commands_file = ROOT / benchmark.file("commands.py")  # gone once its stages are @stage
    commands = commands_file.read_text(encoding="utf-8") if commands_file.exists() else ""
    for writer in ("atomic_write_text", "twin_csv", "savefig", "reports_by_model(", "plot_"):
        assert writer not in commands, (benchmark.name, writer)


def test_a_stage_depends_on_the_schema_whose_defaults_its_settings_read() -> None:
    """A key params.yaml leaves out is read as its schema's default (halluscope.settings), so
    each benchmark's schema.json is a DVC dep of every stage (the whole package: an edit of a
    default reruns them), and no Snakemake code digest holds it (the settings JSON, the rule's
    params, already changes with it)."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    assert all("src/halluscope" in stage["deps"] for stage in stages.values())
    for benchmark in BENCHMARKS:
        schema = f"src/halluscope/benchmarks/{benchmark.name}/schema.json"
        assert (ROOT / schema).is_file()
        assert ROOT / schema not in code_files(benchmark.name, ROOT)


def test_every_declared_stage_is_the_function_its_module_registers() -> None:
    """The stage names a benchmark declares (``PARTS.stages``) are exactly those its modules
    register with ``@stage``: no stage is lost to the declaration, none declared in vain."""
    from halluscope.stage_command import STAGES, stage_modules, stages

    assert set(stages()) == set(stage_modules())
    assert {n for n in STAGES if n in stage_modules()} == set(STAGES)


def _fake_benchmark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parts: str) -> Benchmark:
    """A benchmark ``fakebench`` in ``tmp_path`` whose ``__init__.py`` declares ``parts``, with
    a ``simulated.py`` and an undeclared ``check.py`` (with a ``@stage`` line) that fails the test
    on import."""
    folder = tmp_path / "fakebench"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(
        f"from halluscope.benchmarks import Parts\n\nPARTS = Parts({parts})\n", encoding="utf-8"
    )
    (folder / "rules.smk").write_text("", encoding="utf-8")
    (folder / "schema.json").write_text("{}", encoding="utf-8")
    (folder / "simulated.py").write_text("LOADED = True\n", encoding="utf-8")
    # what discovery by file name and by source text would have found: a check part and a stage
    stray = ('raise AssertionError("undeclared check.py imported")', '@stage("fakebench-x")')
    (folder / "check.py").write_text("\n".join((*stray, "def x(): ...\n")), encoding="utf-8")
    monkeypatch.setattr(registry, "PACKAGE_DIR", tmp_path)
    monkeypatch.setattr(registry, "__path__", [str(tmp_path), *registry.__path__])
    for name in [m for m in sys.modules if m.startswith("halluscope.benchmarks.fakebench")]:
        monkeypatch.delitem(sys.modules, name)
    registry._parts.cache_clear()
    importlib.invalidate_caches()
    benchmark = Benchmark("fakebench", "a benchmark of the test")
    monkeypatch.setattr(registry, "BENCHMARKS", (benchmark,))
    return benchmark


def test_an_undeclared_module_of_a_benchmark_folder_is_not_imported(tmp_path, monkeypatch):
    """``check.py`` would be the hand-check part by its name, and its ``@stage`` line a stage, if
    parts were found by file presence and stages by source text; the declaration names
    ``simulated.py`` alone, so only that is imported and no stage is found."""
    from halluscope.stage_command import stage_modules

    benchmark = _fake_benchmark(tmp_path, monkeypatch, 'simulated="simulated"')
    assert [m.__name__ for m in import_plugins("simulated")] == [
        "halluscope.benchmarks.fakebench.simulated"
    ]
    for part in ("check", "sources", "needs", "explorer", "headlines", "params_check"):
        assert import_plugins(part) == [] and benchmark.module(part) is None
    assert "halluscope.benchmarks.fakebench.check" not in sys.modules
    stage_modules.cache_clear()
    assert not [name for name in stage_modules() if name.startswith("fakebench")]
    stage_modules.cache_clear()
    registry._parts.cache_clear()


def test_a_declared_but_missing_module_is_an_error_naming_benchmark_and_part(tmp_path, monkeypatch):
    _fake_benchmark(tmp_path, monkeypatch, 'needs="needs"')
    with pytest.raises(PartError, match=r"benchmark 'fakebench' declares its needs part.*needs"):
        import_plugins("needs")
    registry._parts.cache_clear()
    _fake_benchmark(tmp_path / "b", monkeypatch, 'stages={"steps": ("fakebench-x",)}')
    with pytest.raises(PartError, match=r"'fakebench' declares its stages steps part.*steps\.py"):
        by_name("fakebench").stage_modules()
    registry._parts.cache_clear()
