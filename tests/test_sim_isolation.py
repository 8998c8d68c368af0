"""Only the sim package names the simulated backend: no ``backend == "sim"`` branches elsewhere.

Checked statically (AST, nothing imported): every module of ``src/halluscope`` outside
``models/sim/`` (and ``models/sim_*.py``) is scanned for the string literal ``"sim"`` (a backend
name). Allowed: the key of the backend registry's lazy-module table in ``models/base.py``, where
every backend is named with its module, and the explicitly listed exceptions below.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "halluscope"
BACKEND_NAME = "sim"
REGISTRY_TABLE = "_LAZY_MODULES"

#: (module, source line) pairs allowed to name the backend, with why. None: each backend checks
#: its own spec (models.base.register_spec_check), so config.py no longer names one.
KNOWN_EXCEPTIONS: set[tuple[str, str]] = set()


def is_sim_module(path: Path) -> bool:
    """Modules of the sim itself (the package, or ``models/sim_*.py`` modules), and a benchmark
    folder's tests (``benchmarks/<name>/tests/``: test code, which runs the demo's sim models)."""
    rel = path.relative_to(PACKAGE).as_posix()
    if rel.startswith("benchmarks/") and "/tests/" in rel:
        return True
    return rel.startswith("models/sim/") or rel.startswith("models/sim_") or rel == "models/sim.py"


def backend_name_literals(source: str, name: str = BACKEND_NAME) -> list[tuple[int, str]]:
    """(line, source line) of every string literal equal to ``name``, except the keys of the
    backend registry's lazy-module table (``_LAZY_MODULES = {"sim": "halluscope.models.sim"}``)."""
    tree = ast.parse(source)
    allowed: set[int] = set()
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        if targets and isinstance(value, ast.Dict):
            if any(isinstance(t, ast.Name) and t.id == REGISTRY_TABLE for t in targets):
                allowed |= {id(k) for k in value.keys if k is not None}
    lines = source.splitlines()
    return [
        (node.lineno, lines[node.lineno - 1].strip())
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value == name and id(node) not in allowed
    ]


def test_no_module_outside_the_sim_package_names_the_sim_backend() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if is_sim_module(path):
            continue
        rel = path.relative_to(PACKAGE).as_posix()
        for line, text in backend_name_literals(path.read_text(encoding="utf-8")):
            if (rel, text) not in KNOWN_EXCEPTIONS:
                found.append(f"src/halluscope/{rel}:{line}: {text}")
    assert not found, "the sim backend is named outside models/sim:\n" + "\n".join(found)


def test_the_registry_table_is_the_only_allowed_place_in_models_base() -> None:
    source = (PACKAGE / "models" / "base.py").read_text(encoding="utf-8")
    assert f'"{BACKEND_NAME}": "halluscope.models.sim"' in source
    assert backend_name_literals(source) == []


def test_known_exceptions_still_exist() -> None:
    """A stale exception (the line was fixed or moved) must be dropped from the list."""
    for rel, text in KNOWN_EXCEPTIONS:
        source = (PACKAGE / rel).read_text(encoding="utf-8")
        assert text in [t for _, t in backend_name_literals(source)], (rel, text)


def test_a_planted_backend_name_is_found() -> None:
    planted = '''
def answer(backend, spec):
    if backend.identity.get("backend") == "sim":
        return 1
    kinds = {'sim': 2, "similar": 3, "sim-precise": 4}
    _LAZY_MODULES = {"sim": "halluscope.models.sim"}
    other = {"sim": "x"}
    """A docstring about the sim backend."""
    return kinds
'''
    found = backend_name_literals(planted)
    assert [line for line, _ in found] == [3, 5, 7], found
    assert 'get("backend") == "sim"' in found[0][1]
    assert not any("_LAZY_MODULES" in text for _, text in found)
