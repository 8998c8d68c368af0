"""Make the test helper modules (tests/*.py without test_ prefix) importable."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _git_identity() -> None:
    """The whole-DAG and DVC tests commit into temporary repositories: on a bare machine with no
    git identity configured, give those commits one (environment only, nothing configured)."""
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


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One whole-DAG build of the demo in a temporary copy, shared by the whole-DAG test modules
    (the build dominates the suite's time; each test only reads it or works on a copy)."""
    reuse = os.environ.get("HALLUSCOPE_TEST_DEMO_BUILD")  # a developer's existing build
    if reuse:
        return Path(reuse)
    return session_build(tmp_path_factory, "demo", ("results/tables/", "all"))


def session_build(
    tmp_path_factory: pytest.TempPathFactory, name: str, targets: tuple[str, ...]
) -> Path:
    """A copy of the project with ``targets`` built, once per test session.

    Why: under pytest-xdist each worker is its own session; the first worker to ask builds into
    the folder the workers share, the others wait on a file lock and read the same build (a
    failed build is recorded, so they fail with its message instead of building again).
    """
    from filelock import FileLock
    from pipeline_helpers import built_copy

    if "PYTEST_XDIST_WORKER" not in os.environ:
        return built_copy(tmp_path_factory.mktemp(name) / "halluscope", *targets)
    shared = tmp_path_factory.getbasetemp().parent / f"shared-{name}"
    root, failed = shared / "halluscope", shared / "failed.txt"
    with FileLock(f"{shared}.lock"):
        if failed.exists():
            raise AssertionError(failed.read_text(encoding="utf-8"))
        if not (shared / "built").exists():
            shutil.rmtree(shared, ignore_errors=True)
            shared.mkdir()
            try:
                built_copy(root, *targets)
            except BaseException as error:
                failed.write_text(f"the shared {name} build failed: {error}", encoding="utf-8")
                raise
            (shared / "built").touch()
    return root


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Test files whose first test waits for the shared demo build run after the others, but
    for the first such file; within each group, the longest files first (:data:`FILE_SECONDS`).

    Why: with pytest-xdist (``--dist loadfile --no-loadscope-reorder``, as ``make test`` runs
    it) that first file starts the build on one worker while the other worker runs the files
    that can start without it, instead of waiting on the build's lock. Longest first, so that no
    worker is left alone with a long file at the end while the other has nothing to do. Order
    within a file is kept.
    """
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::")[0], []).append(item)
    waiting = [f for f, group in files.items() if _needs_demo(group[0])]
    others = [f for f in files if f not in waiting]
    order = waiting[:1] + _longest_first(others) + _longest_first(waiting[1:])
    items[:] = [item for f in order for item in files[f]]


#: Seconds each test file kept a pytest-xdist worker busy (both tiers, from JUnit reports summed
#: by ``timings/file_seconds.py``); read only to hand the files to the workers longest first. A
#: file missing here or a stale number changes the order in which files start, never a result.
FILE_SECONDS: dict[str, float] = json.loads(
    (Path(__file__).with_name("file_seconds.json")).read_text(encoding="utf-8")
)


def _longest_first(files: list[str]) -> list[str]:
    """``files`` by their recorded seconds, longest first (ties and unknown files: as given)."""
    return sorted(files, key=lambda f: -FILE_SECONDS.get(f, 0.0))


def _needs_demo(item: pytest.Item) -> bool:
    """Whether a collected test uses the shared demo build (directly or through a fixture)."""
    return "demo_build" in getattr(item, "fixturenames", ())
