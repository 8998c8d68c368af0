"""params.yaml validation: unknown or mistyped keys fail with the key's name."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from halluscope.config import ConfigError, load, validate

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
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "--configfile",
            str(override),
            "-d",
            str(ROOT),
            "-s",
            str(ROOT / "Snakefile"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode != 0
    assert "figures.dpi" in proc.stdout + proc.stderr
