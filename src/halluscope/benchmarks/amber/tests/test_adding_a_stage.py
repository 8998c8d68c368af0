"""docs/adding-a-benchmark.md's worked example, run: a new stage is its function, its rule and its
name in ``PARTS``.

The page's first two code blocks are appended to AMBER's ``stages.py`` and ``rules.smk`` in a
copy of the project, its third replaces the ``stages`` line of AMBER's ``__init__.py``, and nothing
else is edited: ``halluscope stage`` then lists the stage with the flags
its signature declares, runs it, and Snakemake plans its rule in the AMBER profile."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from pipeline_helpers import ROOT, copy_project, env

DOC = ROOT / "docs" / "adding-a-benchmark.md"


def example_blocks() -> tuple[str, str, str]:
    """The worked example's function, rule and declared name (its first three Python blocks)."""
    section = DOC.read_text(encoding="utf-8").split("## Worked example", 1)[1]
    function, rule, declared = re.findall(r"```python\n(.*?)```", section, re.S)[:3]
    return function, rule, declared


def test_the_worked_example_stage_runs_from_its_function_and_rule(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "halluscope")
    function, rule, declared = example_blocks()
    amber = root / "src/halluscope/benchmarks/amber"
    for path, block in ((amber / "stages.py", function), (amber / "rules.smk", rule)):
        path.write_text(path.read_text(encoding="utf-8") + "\n\n" + block, encoding="utf-8")
    init = amber / "__init__.py"
    text, found = re.subn(
        r"^    stages=.*\n", declared, init.read_text(encoding="utf-8"), flags=re.M
    )
    assert found == 1, text
    init.write_text(text, encoding="utf-8")
    environment = {**env(), "PYTHONPATH": str(root / "src")}

    def run(*cmd: str) -> subprocess.CompletedProcess:
        return subprocess.run(cmd, cwd=root, env=environment, capture_output=True, text=True)

    listing = run("halluscope", "stage", "--help").stdout
    assert re.search(r"amber-silent +AMBER: share of one model's responses", listing), listing
    usage = run("halluscope", "stage", "amber-silent", "--help").stdout
    assert all(flag in usage for flag in ("--settings", "--answers", "--out")), usage

    relation = tmp_path / "relation.json"
    relation.write_text(json.dumps({"dog": ["puppy"], "grass": [], "cat": []}), encoding="utf-8")
    safe_words = tmp_path / "safe_words.txt"
    safe_words.write_text("light\n", encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(json.dumps({"id": i, "model": "m", "response": text}) + "\n"
                for i, text in ((1, "A dog on grass."), (2, "Nothing to see here."))),
        encoding="utf-8",
    )  # fmt: skip
    settings = {
        "annotations": "unused.json",
        "relation": str(relation),
        "safe_words": str(safe_words),
        "similarity": "none",
        "threshold": 0.8,
    }
    out = tmp_path / "silent.json"
    proc = run("halluscope", "stage", "amber-silent", "--settings", json.dumps(settings),
               "--answers", str(answers), "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text(encoding="utf-8")) == {"model": "m", "silent": 0.5}

    target = "results/amber/amber-gen/sim-precise/silent.json"
    plan = run("snakemake", "-n", "--configfile", "config/profiles/amber-gen.yaml", "--", target)
    assert plan.returncode == 0, plan.stderr[-3000:]
    assert re.search(r"amber_silent +1\b", plan.stdout), plan.stdout[-3000:]
