"""The package's structure, checked statically with the project's own import reader
(halluscope.registry.module_imports, the same one that computes each stage's code set)."""

from __future__ import annotations

from pathlib import Path

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
    stage includes stages/oracle.py (load_decisions), stages/data.py, stages/embed.py and
    embeddings.py (load_vectors), which the hand-kept lists had missed."""
    score = {p.relative_to(ROOT).as_posix() for p in code_files("score", ROOT)}
    for module in ("stages/oracle.py", "stages/data.py", "stages/embed.py", "embeddings.py"):
        assert f"src/halluscope/{module}" in score, module
    core = {ROOT / e for e in CORE_CODE}
    for stage in STAGES:
        files = set(code_files(stage.name, ROOT))
        for path in files - core:
            if "commands" not in path.parts:  # dispatch modules are digested, not followed
                assert module_imports(path, ROOT) <= files, (stage.name, path)


def test_every_module_is_under_600_lines() -> None:
    """Small modules with one job each: the longest module of the package stays under 600."""
    long = {
        p.relative_to(PACKAGE).as_posix(): n
        for p in modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) >= 600
    }
    assert not long, long
