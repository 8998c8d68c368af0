"""params.yaml is kept in the exact layout ``dvc exp run -S`` writes, so an experiment's params
change is the one line it sets.

``dvc exp run -S caos.k=4`` (DVC 3.67, no Hydra config) calls
``dvc.repo.experiments.queue.base.BaseStashQueue._update_params`` ->
``dvc.utils.hydra.apply_overrides``: it loads params.yaml with ruamel.yaml (round trip), applies
the override through OmegaConf, merges the result back (every list and scalar replaced by a plain
Python value) and dumps with ruamel's defaults: block-style lists at the parent key's indentation,
strings re-quoted by ruamel (plain when possible), lines folded at 80 columns, comments kept. A
file already in that layout is a fixed point; in any other layout ``-S`` rewrites dozens of lines.
The tests call the same DVC function on a copy of params.yaml.
"""

from __future__ import annotations

import difflib
import shutil
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PARAMS = ROOT / "params.yaml"


def dvc_set(path: Path, *overrides: str) -> str:
    """What ``dvc exp run -S OVERRIDE...`` writes to ``path`` (DVC's own code path)."""
    from dvc.utils.hydra import apply_overrides

    apply_overrides(path, list(overrides))
    return path.read_text(encoding="utf-8")


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_exp_run_set_param_changes_exactly_one_line(tmp_path: Path) -> None:
    before = PARAMS.read_text(encoding="utf-8")
    k = yaml.safe_load(before)["caos"]["k"]
    copy = tmp_path / "params.yaml"
    shutil.copy(PARAMS, copy)
    after = dvc_set(copy, f"caos.k={k + 1}")
    assert changed_lines(before, after) == [f"-  k: {k}", f"+  k: {k + 1}"], changed_lines(
        before, after
    )
    expected = yaml.safe_load(before)
    expected["caos"]["k"] = k + 1
    assert yaml.safe_load(after) == expected


def test_params_yaml_is_a_fixed_point_of_dvc_set(tmp_path: Path) -> None:
    """Setting a key to its own value (what DVC does to every other key) rewrites nothing."""
    before = PARAMS.read_text(encoding="utf-8")
    copy = tmp_path / "params.yaml"
    shutil.copy(PARAMS, copy)
    k = yaml.safe_load(before)["caos"]["k"]
    after = dvc_set(copy, f"caos.k={k}")
    assert after == before, "\n".join(changed_lines(before, after))


def test_other_experiment_keys_change_one_line_each(tmp_path: Path) -> None:
    """The keys an experiment typically sets: a nested scalar, a string, a float."""
    before = PARAMS.read_text(encoding="utf-8")
    for override, n_lines in (
        ("figures.dpi=300", 2),
        ("tables.precision_recall=micro", 2),
        ("trihe.judge.threshold=0.7", 2),
        ("generate.seed=1", 2),
    ):
        copy = tmp_path / "params.yaml"
        shutil.copy(PARAMS, copy)
        diff = changed_lines(before, dvc_set(copy, override))
        assert len(diff) == n_lines, (override, diff)


def test_comments_are_kept_by_dvc_set(tmp_path: Path) -> None:
    before = PARAMS.read_text(encoding="utf-8")
    copy = tmp_path / "params.yaml"
    shutil.copy(PARAMS, copy)
    after = dvc_set(copy, "caos.k=5")
    comments = [line.split("#", 1)[1] for line in before.splitlines() if "#" in line]
    assert len(comments) > 50
    for comment in comments:
        assert comment in after, comment


def _git(*args: str) -> str | None:
    try:
        proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    except FileNotFoundError:
        return None
    return proc.stdout if proc.returncode == 0 else None


def _in_dvc_layout(text: str, tmp_path: Path) -> bool:
    copy = tmp_path / "probe.yaml"
    copy.write_text(text, encoding="utf-8")
    return dvc_set(copy, f"caos.k={yaml.safe_load(text)['caos']['k']}") == text


def _paths(node, prefix=()):
    """(key path, leaf value) of every leaf, in file order."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    else:
        yield prefix, node


def _comments(text: str) -> list[str]:
    return [line.split("#", 1)[1].strip() for line in text.splitlines() if "#" in line]


def test_real_exp_run_queue_set_param_is_a_one_line_diff(tmp_path: Path) -> None:
    """A real ``dvc exp run --queue -S caos.k=K+1`` in a git + DVC copy of the project: the
    queued experiment's params.yaml differs from the commit by one line."""
    from pipeline_helpers import copy_project, run

    root = copy_project(tmp_path / "halluscope")
    run(["git", "init", "-q"], root)
    run(["git", "add", "-A"], root)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], root)
    k = yaml.safe_load(PARAMS.read_text(encoding="utf-8"))["caos"]["k"]
    run(["dvc", "exp", "run", "--queue", "-S", f"caos.k={k + 1}"], root)
    refs = run(["git", "for-each-ref", "--format=%(refname)", "refs/exps"], root).stdout.split()
    stash = [ref for ref in refs if ref.endswith("/stash")]
    assert len(stash) == 1, refs
    diff = run(["git", "diff", "--unified=0", "HEAD", stash[0], "--", "params.yaml"], root).stdout
    changed = [
        line
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert changed == [f"-  k: {k}", f"+  k: {k + 1}"], diff
    # the workspace copy is left as it was
    assert (root / "params.yaml").read_text(encoding="utf-8") == PARAMS.read_text("utf-8")
