"""Make the test helper modules (tests/*.py without test_ prefix) importable."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _git_identity() -> None:
    """The whole-DAG and DVC tests commit into temporary repositories: on a bare machine with no
    git identity configured, give those commits one (environment only, nothing configured)."""
    import os
    import subprocess

    for key, value in (("name", "halluscope tests"), ("email", "tests@halluscope.invalid")):
        try:
            found = subprocess.run(["git", "config", f"user.{key}"], capture_output=True, text=True)
            configured = found.returncode == 0 and found.stdout.strip()
        except OSError:  # no git at all: the tests that need it say so
            configured = False
        if not configured:
            for role in ("AUTHOR", "COMMITTER"):
                os.environ.setdefault(f"GIT_{role}_{key.upper()}", value)


_git_identity()


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory) -> Path:
    """One whole-DAG build of the demo in a temporary copy, shared by the whole-DAG test modules
    (the build dominates the suite's time; each module only reads it or works on copies)."""
    import os

    from pipeline_helpers import built_copy

    reuse = os.environ.get("HALLUSCOPE_TEST_DEMO_BUILD")  # a developer's existing build
    if reuse:
        return Path(reuse)
    return built_copy(tmp_path_factory.mktemp("demo") / "halluscope", "results/tables/", "all")
