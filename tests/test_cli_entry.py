"""One entry point into every stage (`halluscope stage NAME`), user commands listed apart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from halluscope.cli import main
from halluscope.stage_command import stage_names

ROOT = Path(__file__).resolve().parents[1]


def test_help_lists_user_commands_not_stages(capsys) -> None:
    try:
        main(["--help"])
    except SystemExit:
        pass
    text = capsys.readouterr().out
    for command in ("caos", "chair", "pope", "trihe", "phd", "nope"):
        assert re.search(rf"^\s+{command}\s", text, re.M), command
    assert "stage-" not in text
    assert "halluscope stage NAME" in text


def test_stage_help_lists_every_stage(capsys) -> None:
    assert main(["stage", "--help"]) == 0
    text = capsys.readouterr().out
    for name in ("data", "generate", "extract", "oracle", "score", "summarize", "tables", "paper"):
        assert name in text


def test_unknown_stage_is_named(capsys) -> None:
    assert main(["stage", "scroe"]) == 2
    assert "unknown stage 'scroe'" in capsys.readouterr().err


def test_every_rule_calls_stages_through_the_one_entry_point() -> None:
    """Rules (the core ones and every benchmark package's) run `halluscope stage NAME [STEP]`,
    never a stage module or a stage-* command directly."""
    files = [*(ROOT / "rules").glob("*.smk"), *(ROOT / "src/halluscope/benchmarks").glob("*/*.smk")]
    calls = 0
    for rules in sorted(files):
        text = rules.read_text(encoding="utf-8")
        assert "python -m halluscope" not in text, rules.name
        assert "halluscope stage-" not in text, rules.name
        for name, step in re.findall(r"halluscope stage ([a-z0-9-]+)(?: ([a-z]+)\b)?", text):
            calls += 1
            assert name in stage_names() or f"{name}-{step}" in stage_names(), (rules, name)
    assert calls > 30


def test_a_stage_step_is_the_same_command(capsys) -> None:
    """`halluscope stage oracle pool ...` is the `oracle-pool` stage (the step's own flags)."""
    assert {"extract", "extract-report", "oracle-decide", "oracle-pool"} <= set(stage_names())
    with pytest.raises(SystemExit) as exit_info:
        main(["stage", "oracle", "pool"])
    assert exit_info.value.code == 2
    assert "halluscope stage oracle-pool: error" in capsys.readouterr().err
