"""Each backend checks its own ``models:`` spec; params validation only asks it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from halluscope.config import ConfigError, validate
from halluscope.models import base

ROOT = Path(__file__).resolve().parents[1]


def test_the_sim_backend_checks_its_preset() -> None:
    with pytest.raises(ValueError, match=r"models\.m\.preset: unknown sim preset 'sim-precize'"):
        base.check_spec({"backend": "sim", "preset": "sim-precize"}, "m")
    base.check_spec({"backend": "sim", "preset": "sim-precise"}, "m")
    base.check_spec({"backend": "hf", "model": "anything"}, "m")  # no check registered: accepted


def test_a_sim_spec_with_the_runs_key_profile_is_refused() -> None:
    """``profile`` names the run; a sim spec that gives it (the key before ``preset``) fails
    at validation, naming the key to write instead, rather than being read as a preset."""
    with pytest.raises(ValueError, match=r"models\.m\.profile: a sim spec names its preset with "):
        base.check_spec({"backend": "sim", "profile": "sim-precise"}, "m")


def test_validation_asks_each_models_backend(monkeypatch) -> None:
    """A check registered for the llamacpp backend runs on the demo's smollm2 spec."""
    seen: list[str] = []

    def refuse(spec, model_id: str) -> None:
        seen.append(model_id)
        raise ValueError(f"models.{model_id}.weights: refused by the backend")

    monkeypatch.setitem(base._SPEC_CHECKS, "llamacpp", refuse)
    config = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    with pytest.raises(ConfigError, match=r"params\.yaml: models\.smollm2\.weights: refused"):
        validate(config)
    assert seen == ["smollm2"]
