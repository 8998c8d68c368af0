"""params.yaml validation: unknown or mistyped keys fail with the key's name."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from halluscope.config import ConfigError, check_yaml_syntax, load, validate

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def params() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))


def test_committed_params_are_valid() -> None:
    load(ROOT / "params.yaml")


def test_unknown_key_is_named(params: dict) -> None:
    bad = copy.deepcopy(params)
    bad["caos"]["kk"] = 3
    with pytest.raises(ConfigError, match=r"unknown key 'caos\.kk'"):
        validate(bad)


def test_type_error_is_named(params: dict) -> None:
    bad = copy.deepcopy(params)
    bad["caos"]["k"] = "three"
    with pytest.raises(ConfigError, match=r"key 'caos\.k'.*not of type 'integer'"):
        validate(bad)


@pytest.mark.parametrize(
    ("section", "key", "value", "message"),
    [
        (
            "generate",
            "models",
            ["sim-precise", "gpt-9"],
            r"unknown model id 'gpt-9'; valid ids: sim-",
        ),
        (
            "generate",
            "instructions",
            ["i01", "i99"],
            r"unknown instruction id 'i99'; valid ids: i01",
        ),
        ("embed", "embedders", ["glove", "bert"], r"unknown embedder id 'bert'; valid ids: glove"),
    ],
)
def test_unknown_ids_list_valid_ids(params, section, key, value, message) -> None:
    bad = copy.deepcopy(params)
    bad[section][key] = value
    with pytest.raises(ConfigError, match=message):
        validate(bad)


def test_snakemake_refuses_bad_params_with_key_name(tmp_path, params: dict) -> None:
    bad = copy.deepcopy(params)
    bad["figures"]["dpi"] = "high"
    override = tmp_path / "bad.yaml"
    override.write_text(yaml.safe_dump(bad))
    proc = _snakemake_dry_run(tmp_path, override)
    assert proc.returncode != 0
    assert "figures.dpi" in proc.stdout + proc.stderr


# ------------------------------------------------------------------------------------------------
# YAML syntax errors: file, line and column


BROKEN_YAML = "profile: demo\ncaos:\n  k: 3\n  frequent: [person, car\n  k_max: 10\n"


def test_yaml_syntax_error_names_file_line_and_column(tmp_path) -> None:
    broken = tmp_path / "params.yaml"
    broken.write_text(BROKEN_YAML, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load(broken)
    message = str(caught.value)
    mark = _yaml_mark(BROKEN_YAML)
    assert message.startswith(f"{broken}:{mark.line + 1}:{mark.column + 1}: malformed YAML ("), (
        message
    )
    assert "line 4, column 13" in message  # where the unclosed flow sequence started


def test_yaml_tab_indentation_names_line_and_column(tmp_path) -> None:
    broken = tmp_path / "params.yaml"
    broken.write_text("caos:\n  k: 3\n\tk_max: 10\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(broken))}:3:1: malformed YAML"):
        load(broken)


def test_check_yaml_syntax_passes_good_files_and_names_the_broken_one(tmp_path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("a: 1\n", encoding="utf-8")
    broken = tmp_path / "broken.yaml"
    broken.write_text(BROKEN_YAML, encoding="utf-8")
    check_yaml_syntax([ROOT / "params.yaml", good])
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(broken))}:\d+:\d+: malformed YAML"):
        check_yaml_syntax([good, broken])


def _yaml_mark(text: str):
    try:
        yaml.safe_load(text)
    except yaml.MarkedYAMLError as err:
        return err.problem_mark
    raise AssertionError("the text parses")


def test_snakemake_reports_params_yaml_syntax_error_with_line_and_column(tmp_path) -> None:
    """A broken params.yaml (the file users edit) fails `snakemake -n` with FILE:LINE:COLUMN,
    from the Snakefile's check before `configfile:`."""
    from pipeline_helpers import copy_project, snakemake

    root = copy_project(tmp_path / "broken")
    (root / "params.yaml").write_text(BROKEN_YAML, encoding="utf-8")
    proc = snakemake(root, "-n", "--cores", "1", check=False)
    mark = _yaml_mark(BROKEN_YAML)
    assert proc.returncode != 0
    assert f"params.yaml:{mark.line + 1}:{mark.column + 1}: malformed YAML" in (
        proc.stdout + proc.stderr
    )


def test_check_params_names_the_overlay_line_and_column_and_a_bad_key(tmp_path) -> None:
    """`halluscope check-params OVERLAY` (run by the Makefile's profile targets) gives what
    Snakemake's own --configfile message lacks: FILE:LINE:COLUMN, then the merged keys' check."""
    from pipeline_helpers import ROOT, env

    broken = tmp_path / "broken.yaml"
    broken.write_text(BROKEN_YAML, encoding="utf-8")
    mark = _yaml_mark(BROKEN_YAML)
    cmd = [sys.executable, "-m", "halluscope.cli", "check-params"]
    proc = subprocess.run([*cmd, str(broken)], cwd=ROOT, env=env(), capture_output=True, text=True)
    assert proc.returncode == 2
    assert f"{broken}:{mark.line + 1}:{mark.column + 1}: malformed YAML" in proc.stderr
    typo = tmp_path / "typo.yaml"
    typo.write_text("caos:\n  kk: 3\n", encoding="utf-8")
    proc = subprocess.run([*cmd, str(typo)], cwd=ROOT, env=env(), capture_output=True, text=True)
    assert proc.returncode == 2 and "unknown key 'caos.kk'" in proc.stderr
    good = "config/profiles/pope-captions.yaml"
    proc = subprocess.run([*cmd, good], cwd=ROOT, env=env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"params.yaml + {good}: valid (profile 'pope-captions')" in proc.stdout


@pytest.mark.xfail(
    strict=True,
    reason="Snakemake loads --configfile files (and `configfile:` before rules/common.smk runs) "
    "itself and its WorkflowError drops the YAML mark: no halluscope code runs before it "
    "(`halluscope check-params OVERLAY` gives file, line and column instead)",
)
def test_snakemake_reports_yaml_syntax_error_with_line_and_column(tmp_path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(BROKEN_YAML, encoding="utf-8")
    mark = _yaml_mark(BROKEN_YAML)
    proc = _snakemake_dry_run(tmp_path, broken)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert str(broken) in out, out
    assert f"line {mark.line + 1}, column {mark.column + 1}" in out, out


# ------------------------------------------------------------------------------------------------
# sim presets


def test_sim_preset_typo_fails_validation_listing_the_profiles(params: dict) -> None:
    from halluscope.models.sim import PRESETS

    bad = copy.deepcopy(params)
    bad["models"]["sim-x"] = {"backend": "sim", "preset": "sim-precize"}
    with pytest.raises(ConfigError) as caught:
        validate(bad)
    message = str(caught.value)
    assert "models.sim-x.preset: unknown sim preset 'sim-precize'" in message
    assert f"valid sim presets: {', '.join(sorted(PRESETS))}" in message
    assert "did you mean 'sim-precise'?" in message


def test_sim_preset_defaults_to_the_model_id(params: dict) -> None:
    bad = copy.deepcopy(params)
    bad["models"]["sim-typo"] = {"backend": "sim"}
    with pytest.raises(ConfigError, match=r"models\.sim-typo\.preset: unknown sim preset "
                       r"'sim-typo' \(no 'preset' given"):  # fmt: skip
        validate(bad)
    fine = copy.deepcopy(params)
    fine["models"]["sim-verbose"] = {"backend": "sim"}  # the id is a preset name
    fine["models"]["other"] = {"backend": "sim", "name": "sim-frequent"}
    validate(fine)


def test_sim_preset_overrides_and_dicts_are_checked(params: dict) -> None:
    from halluscope.models.sim import PRESETS

    bad = copy.deepcopy(params)
    bad["models"]["sim-precise"]["overrides"] = {"hallucination_rate": 1.5}
    with pytest.raises(ConfigError, match=r"models\.sim-precise: .*hallucination_rate"):
        validate(bad)
    bad = copy.deepcopy(params)
    bad["models"]["sim-precise"]["overrides"] = {"halucination_rate": 0.1}
    with pytest.raises(ConfigError, match=r"models\.sim-precise: .*unknown field"):
        validate(bad)
    fine = copy.deepcopy(params)
    fine["models"]["sim-precise"] = {"backend": "sim", "preset": dict(PRESETS["sim-precise"])}
    validate(fine)


def test_snakemake_refuses_a_sim_preset_typo_before_any_job(tmp_path) -> None:
    override = tmp_path / "typo.yaml"
    override.write_text(
        yaml.safe_dump({"models": {"sim-x": {"backend": "sim", "preset": "sim-precize"}}})
    )
    proc = _snakemake_dry_run(tmp_path, override)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "models.sim-x.preset: unknown sim preset 'sim-precize'" in out, out
    assert "sim-precise" in out and "Job stats" not in out


def _snakemake_dry_run(tmp_path, configfile) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "--configfile",
            str(configfile),
            "-d",
            str(ROOT),
            "-s",
            str(ROOT / "Snakefile"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
