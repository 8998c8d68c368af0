"""Make the test helper modules (tests/*.py without test_ prefix) importable."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory) -> Path:
    """One whole-DAG build of the demo in a temporary copy, shared by the whole-DAG test modules
    (the build dominates the suite's time; each module only reads it or works on copies)."""
    from pipeline_helpers import built_copy

    return built_copy(tmp_path_factory.mktemp("demo") / "halluscope", "results/tables/", "all")
