"""The package's structure, checked statically with the project's own import reader
(halluscope.registry.module_imports, the same one that computes each stage's code set)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from halluscope.benchmarks import BENCHMARKS, by_name
from halluscope.registry import CORE_CODE, STAGES, code_files, module_imports

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "halluscope"


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def find_cycle(graph: dict[Path, set[Path]]) -> list[Path] | None:
    """One import cycle of ``graph`` (a list of modules, first == last), or None."""
    state: dict[Path, int] = {}
    stack: list[Path] = []

    def visit(node: Path) -> list[Path] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_cycle_inside_halluscope() -> None:
    """Package __init__ files are left out of the edges (importing a.b runs a/__init__, which is
    not an import *by* the module); every import statement, lazy ones included, counts. Backends
    named by string for importlib (the plug-in registry of models/base.py) are not imports."""
    graph = {
        m: {d for d in module_imports(m, ROOT, strings=False) if d.name != "__init__.py" and d != m}
        for m in modules()
    }
    cycle = find_cycle(graph)
    assert cycle is None, " -> ".join(p.relative_to(PACKAGE).as_posix() for p in cycle)


def test_find_cycle_finds_a_planted_cycle() -> None:
    a, b, c = Path("a.py"), Path("b.py"), Path("c.py")
    assert find_cycle({a: {b}, b: {c}, c: {a}}) == [a, b, c, a]
    assert find_cycle({a: {b}, b: {c}, c: set()}) is None


def test_stage_code_is_the_import_closure() -> None:
    """Each stage's digest covers every module its entry modules import, transitively: the score
    stage includes CAOS's captions/oracle.py (load_decisions), stages/data.py, CAOS's K order
    and embeddings.py (load_vectors), which the hand-kept lists had missed."""
    score = {p.relative_to(ROOT).as_posix() for p in code_files("score", ROOT)}
    modules = (
        "benchmarks/caos/captions/oracle.py",
        "stages/data.py",
        "benchmarks/caos/k_order.py",
        "embeddings.py",
    )
    for module in modules:
        assert f"src/halluscope/{module}" in score, module
    core = {ROOT / e for e in CORE_CODE}
    for stage in STAGES:
        files = set(code_files(stage.name, ROOT))
        for path in files - core:
            # dispatch modules are digested, not followed; page files are not Python
            if "commands" not in path.parts and path.suffix == ".py":
                assert module_imports(path, ROOT) <= files, (stage.name, path)


def test_stored_import_names_answer_only_for_the_same_source_text(tmp_path, monkeypatch) -> None:
    """The import names kept between processes (registry.IMPORTS_CACHE) spare a new process the
    parsing, and an edited module is parsed again (its text is the key)."""
    from halluscope import registry

    package = tmp_path / "src" / "halluscope"
    package.mkdir(parents=True)
    for name, text in (("__init__", ""), ("a", "import halluscope.b\n"), ("b", ""), ("c", "")):
        (package / f"{name}.py").write_text(text, encoding="utf-8")

    real = registry._imported_names

    def new_process() -> None:
        registry._stored.clear()
        registry._resolved_imports.cache_clear()
        real.cache_clear()

    a, b, c, init = (package / f"{n}.py" for n in ("a", "b", "c", "__init__"))
    assert registry.import_closure([a], tmp_path) == {a, b, init}
    assert (tmp_path / registry.IMPORTS_CACHE).is_file()
    new_process()
    parsed = []
    monkeypatch.setattr(registry, "_imported_names", lambda *a: parsed.append(a[1]) or real(*a))
    assert registry.import_closure([a], tmp_path) == {a, b, init}
    assert parsed == []  # every module's names came from the file
    a.write_text("import halluscope.c\n", encoding="utf-8")
    new_process()
    assert registry.import_closure([a], tmp_path) == {a, c, init}
    assert parsed == [str(a)]


def test_every_module_is_under_600_lines() -> None:
    """Small modules with one job each: the longest module of the package stays under 600."""
    long = {
        p.relative_to(PACKAGE).as_posix(): n
        for p in modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) >= 600
    }
    assert not long, long


# A benchmark is its folder plus one registry line (and its profile and docs). AMBER is kept in
# that shape: outside src/halluscope/benchmarks/amber/ only these files name it (this guard
# aside). Generated files (dvc.yaml, dvc.lock: the registry's rendering, listing the folder's
# modules; tests/file_seconds.json: measured seconds per test file, its tests included) do not
# count.
SHAPED = "amber"
NAMED_OUTSIDE = {
    "src/halluscope/benchmarks/__init__.py": "the registry line",
    "config/profiles/amber-gen.yaml": "its profile",
    "README.md": "docs: the profile list",
    "docs/adding-a-benchmark.md": "docs: the worked example of the how-to",
    "docs/architecture.md": "docs: the data flow, module table and glossary",
    "docs/profiles-and-data.md": "docs: the profile list",
    "tests/test_structure.py": "guard: this test",
}
GENERATED = {"dvc.yaml", "dvc.lock", "tests/file_seconds.json"}


def project_files() -> list[str]:
    """The source files of the checkout (tracked, and new ones git does not ignore), without the
    artifacts (``results/``, ``logs/``), which name whatever ran."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, text=True, check=True,
        )  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    files = out.stdout.splitlines()
    return [f for f in files if not f.startswith(("results/", "logs/")) and (ROOT / f).is_file()]


def test_only_the_registry_line_profile_and_docs_name_a_shaped_benchmark_outside_its_folder():
    folder = f"src/halluscope/benchmarks/{SHAPED}/"
    naming = set()
    for name in project_files():
        if name.startswith(folder) or name in GENERATED:
            continue
        try:
            text = (ROOT / name).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if re.search(SHAPED, text, re.IGNORECASE):
            naming.add(name)
    assert naming <= set(NAMED_OUTSIDE), sorted(naming - set(NAMED_OUTSIDE))
    assert sum(not v.startswith(("docs", "guard")) for v in NAMED_OUTSIDE.values()) <= 3
    registry = (PACKAGE / "benchmarks" / "__init__.py").read_text(encoding="utf-8")
    lines = [line for line in registry.splitlines() if re.search(SHAPED, line, re.IGNORECASE)]
    assert lines == [f'    Benchmark("{SHAPED}", "AMBER (generative task)"),'], lines


#: The core modules that know no benchmark: the command line, the stage runner, the params
#: check and the scheduler resources read every benchmark from its folder.
#: The simulated LVLMs' core: a benchmark's answerer and its preset fields are in its folder.
SIM_CORE = ROOT / "src/halluscope/models/sim"
BENCHMARK_FREE = (
    "src/halluscope/cli.py",
    "src/halluscope/stage_command.py",
    "src/halluscope/config.py",
    "src/halluscope/resources.py",
    "src/halluscope/hand_check.py",
    "src/halluscope/registry.py",
    *sorted(f"src/halluscope/models/sim/{p.name}" for p in SIM_CORE.glob("*.py")),
)


def _code_words(path: Path) -> set[str]:
    """The names, attributes, imported modules and string constants of a module's code, its
    docstrings left out (they may give a benchmark as an example)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    words: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                words.update(re.findall(r"[A-Za-z]+", node.value))
        elif isinstance(node, ast.Name):
            words.add(node.id)
        elif isinstance(node, ast.Attribute):
            words.add(node.attr)
        elif isinstance(node, ast.ImportFrom) and node.module:
            words.update(node.module.split("."))
        elif isinstance(node, ast.alias):
            words.update(node.name.split("."))
    return {w.lower() for w in words}


def test_the_core_modules_name_no_benchmark() -> None:
    """Every benchmark, CAOS included, is its folder plus one registry line: the CLI, the stage
    runner, the params check, the resources, the DVC stages, the simulated LVLMs' core and the
    rules' shared helpers (rules/common.smk) name none of them in their code."""
    from halluscope.benchmarks import BENCHMARKS

    names = {b.name for b in BENCHMARKS}
    for module in BENCHMARK_FREE:
        found = names & _code_words(ROOT / module)
        assert not found, f"{module} names {sorted(found)}"
    # the rules every rules file includes (Snakemake, not Python: its comments and docstrings
    # left out by hand, as _code_words leaves out a module's docstrings)
    common = (ROOT / "rules/common.smk").read_text(encoding="utf-8")
    common = re.sub(r"#.*", "", re.sub(r'"""[\s\S]*?"""', "", common))
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", common)}
    assert "config" in words and not names & words, sorted(names & words)


def test_a_benchmarks_data_sources_come_from_its_folder() -> None:
    """Every file of a benchmark with a ``sources.py`` is declared there, under its own data
    folder (``<name>/...``), and nowhere else."""
    import importlib

    from halluscope.data import sources

    core = (*sources._GITHUB, *sources._DERIVED)
    for benchmark in BENCHMARKS:
        if not benchmark.module("sources"):
            continue
        own = importlib.import_module(str(benchmark.module("sources"))).SOURCES
        assert own and all(s.path.startswith(f"{benchmark.name}/") for s in own)
        assert all(sources.SOURCES[s.path] == s for s in own)
        assert not [s.path for s in core if s.path.startswith(f"{benchmark.name}/")]


def test_every_table_and_figure_has_its_caption_in_its_benchmarks_folder() -> None:
    """The CSV twin of every table and the PNG of every figure a benchmark builds (all of them
    enabled, CAOS's optional tables too) is captioned by ``<name>.rst`` beside its rules, and no
    benchmark's rules take a caption from elsewhere."""
    config = {
        **{b.name: {"enabled": True} for b in BENCHMARKS},
        "tables": {"published": True, "compare_with": "other"},
    }
    for benchmark in BENCHMARKS:
        files = benchmark.table_files(config, "p") + benchmark.figure_files(config, "p")
        for path in files:
            if path.endswith((".csv", ".png")):
                caption = benchmark.folder / f"{Path(path).stem}.rst"
                assert caption.is_file(), (benchmark.name, path)
        for rules in benchmark.folder.glob("*.smk"):
            assert "docs/report" not in rules.read_text(encoding="utf-8"), rules


def test_the_paper_sections_come_from_the_folders_and_name_their_own_outputs() -> None:
    """A benchmark's section is in its folder and includes only what that benchmark builds for
    the section's profile; the paper's other inputs are the demo section's. Nothing else lists
    the paper's inputs: they are read from the sections (halluscope.report.paper)."""
    from pipeline_helpers import merged_params

    from halluscope.report.paper import sections

    found = sections(ROOT)
    paths = {s.path for s in found}
    assert paths == {
        *(p.relative_to(ROOT).as_posix() for b in BENCHMARKS for p in b.paper_sections()),
        *(p.relative_to(ROOT).as_posix() for p in (ROOT / "paper/sections").glob("*.tex")),
    }
    for benchmark in BENCHMARKS:
        for path in benchmark.paper_sections():
            (section,) = [s for s in found if s.path == path.relative_to(ROOT).as_posix()]
            config = merged_params(section.profile)
            built = benchmark.table_files(config, section.profile)
            built += benchmark.figure_files(config, section.profile)
            assert set(section.inputs) <= set(built), (section.path, section.inputs)
    # the core rules name no benchmark's table or figure (they ask the registry)
    names = {c.name for b in BENCHMARKS for c in b.captions()}
    for smk in [ROOT / "Snakefile", *(ROOT / "rules").glob("*.smk")]:
        text = smk.read_text(encoding="utf-8")
        assert not {n for n in names if n in text}, smk


def _code(path: Path) -> str:
    """A rules file without its imports and comments."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(
        line.split("#")[0] for line in lines if not line.startswith(("from ", "import "))
    )


def _smk_names(path: Path) -> set[str]:
    """The functions and module-level names a rules helper file defines."""
    text = _code(path)
    return set(re.findall(r"^def (\w+)", text, re.M)) | set(re.findall(r"^([A-Z_]+) =", text, re.M))


def test_no_benchmark_rules_use_another_benchmarks_helpers() -> None:
    """The Snakefile includes the benchmarks in registry order; a benchmark whose rules called a
    helper of another's common.smk would work only in that order (CAOS's summary reads POPE's
    score files through an import of halluscope.benchmarks.pope.outputs instead)."""
    for owner in BENCHMARKS:
        common = owner.folder / "common.smk"
        names = set(_smk_names(common)) if common.exists() else set()
        for other in BENCHMARKS:
            if other is owner:
                continue
            for smk in other.folder.glob("*.smk"):
                text = _code(smk)
                used = {n for n in names if re.search(rf"\b{n}\b", text)}
                assert not used, (smk.relative_to(ROOT).as_posix(), owner.name, used)


def test_caos_k_order_lives_with_caos() -> None:
    """K (caos.frequent) is defined once, in the CAOS folder; the caption pipeline's rules are
    CAOS's (its folder), not the Snakefile's."""
    defining = [p for p in modules() if "def frequent_objects(" in p.read_text(encoding="utf-8")]
    assert defining == [by_name("caos").folder / "k_order.py"]
    snakefile = (ROOT / "Snakefile").read_text(encoding="utf-8")
    for rules in ("generate", "extract", "oracle", "embed"):
        assert (by_name("caos").folder / f"{rules}.smk").is_file()
        assert f"rules/{rules}.smk" not in snakefile


def test_a_setting_travels_from_params_yaml_to_its_stage_in_one_step() -> None:
    """params.yaml -> ``<Settings>.from_config`` in the rule -> ``--settings`` -> the stage
    function: every flag of a rule's ``halluscope stage`` command is its settings, a path (an
    input, output or log, the response cache) or a wildcard, never a value the rule read from
    params.yaml; every settings class of the package is some rule's."""
    import importlib

    from rule_settings import RULE, SECTION, resolve, rule_files, rules

    from halluscope.settings import StageSettings

    for path in rule_files(ROOT):
        for name, body in RULE.findall(path.read_text(encoding="utf-8")):
            shell = dict(SECTION.findall(body)).get("shell", "")
            for flag, source in re.findall(r"(--[\w-]+) \{(\w+)", shell):
                assert source in ("input", "output", "log", "wildcards", "params"), (name, flag)
                if flag == "--settings":
                    assert source == "params", name
            # a params value in the shell: the settings, or paths made from the inputs (tested in
            # test_settings.py: every other params value is a function of input or output)
            assert (
                "{config" not in shell
                and "--settings {params.settings:q}" in shell
                or ("--settings" not in shell)
            ), name
    used = {resolve(r.settings, ROOT) for r in rules(ROOT) if r.settings}
    for path in modules():
        module = ".".join(path.relative_to(ROOT / "src").with_suffix("").parts)
        if "tests" in path.parts or path.name == "__main__.py":
            continue
        text = path.read_text(encoding="utf-8")
        if not re.search(r"^class \w+\([\w.]*Settings\):", text, re.M):
            continue
        for value in vars(importlib.import_module(module)).values():
            if (
                isinstance(value, type)
                and issubclass(value, StageSettings)
                and value is not StageSettings
                and value.__module__ == module
            ):
                mine = any(issubclass(u, value) for u in used)  # a rule's, or a base of one
                assert mine, f"{module}.{value.__name__} is no rule's settings"


CAOS_STAGES = {"generate", "extract", "oracle", "embed", "score"}


def test_caos_stage_code_lives_in_its_folder() -> None:
    """CAOS's caption pipeline (generate, extract, oracle, embed) and its scores are CAOS's code,
    in benchmarks/caos/: every module of src/halluscope/stages/ is code of a core stage (data,
    figures, tables) or of another benchmark's stage, so the shared folder shares."""
    from halluscope.registry import benchmark_stages

    users: dict[Path, set[str]] = {}
    for stage in [*benchmark_stages(), *STAGES]:
        for path in code_files(stage.name, ROOT):
            users.setdefault(path, set()).add(stage.name)
    shared = ROOT / "src" / "halluscope" / "stages"
    modules = [p for p in shared.glob("*.py") if p.name != "__init__.py"]
    assert modules
    for module in modules:
        assert users.get(module, set()) - CAOS_STAGES, f"{module.name}: used by CAOS only"
    captions = ROOT / "src" / "halluscope" / "benchmarks" / "caos" / "captions"
    for name in ("generate", "extract", "oracle", "embed"):
        assert captions / f"{name}.py" in code_files(name, ROOT), name


def test_every_settings_class_has_its_own_name() -> None:
    """A settings class is named for what it is (``CaosScoreSettings``, not a sixth
    ``TableSettings``): the rules files share one namespace, and a reader finds one class by
    its name."""
    import collections

    defined = collections.Counter(
        match
        for path in (ROOT / "src/halluscope").rglob("*.py")
        for match in re.findall(r"^class (\w+Settings)\b", path.read_text(encoding="utf-8"), re.M)
    )
    assert len(defined) > 20, defined
    assert not [name for name, n in defined.items() if n > 1], defined


def test_the_explorer_digest_holds_its_page_files() -> None:
    """The page's template, script and style are code of the explorer stage: an edit of one
    reruns the page (rules files stay out of every digest: Snakemake sees a rule's edits)."""
    files = code_files("explorer", ROOT)
    page = ROOT / "src/halluscope/explorer"
    assert {page / f"page.{suffix}" for suffix in ("html", "js", "css")} <= set(files)
    assert (ROOT / "src/halluscope/stages/explorer.py") in files
    assert not [p for stage in STAGES for p in code_files(stage.name, ROOT) if p.suffix == ".smk"]


def test_the_how_to_shows_amber_s_declaration_as_it_is() -> None:
    """docs/adding-a-benchmark.md's example of ``PARTS`` is AMBER's, word for word: a reader who
    copies it copies what the registry reads."""
    doc = (ROOT / "docs" / "adding-a-benchmark.md").read_text(encoding="utf-8")
    shown = re.search(r"```python\n(PARTS = Parts\(.*?\n\))\n```", doc, re.S)
    init = (PACKAGE / "benchmarks" / "amber" / "__init__.py").read_text(encoding="utf-8")
    assert shown and shown[1] in init
