"""``halluscope check-model`` on tiny checkpoints: a spec given inline, and a profile's model."""

from __future__ import annotations

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import yaml  # noqa: E402
from tiny_models import FAMILIES, build_family  # noqa: E402

from halluscope.cli import main  # noqa: E402

pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def florence(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Florence-2: an encoder-decoder with a bare prompt, the case a user would get wrong."""
    family = next(f for f in FAMILIES if f.slug == "florence-2")
    return build_family(family, tmp_path_factory.mktemp("check-model") / "florence-2")


def _lines(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    out = capsys.readouterr().out
    lines = {line.split(":", 1)[0]: line for line in out.splitlines() if ":" in line}
    return {**lines, "output": out}


def test_check_model_on_a_spec(florence: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = {"backend": "hf", "model": str(florence), "kind": "image-text-to-text"}
    assert main(["check-model", "--spec", json.dumps(spec), "--max-new-tokens", "4"]) == 0
    lines = _lines(capsys)
    assert '"revision": "local-' in lines[str(florence)]
    assert "; prompt format plain, padding right" in lines["output"]
    for task in ("caption", "yes/no"):
        meta = json.loads("{" + lines[task].rsplit(" {", 1)[1])
        assert 1 <= meta["new_tokens"] <= 4 and meta["finish_reason"] in ("stop", "length")
    assert "tokens/s" in next(v for v in lines.values() if "new tokens in" in v)
    assert "GiB" in lines["peak memory"]


def test_check_model_on_a_profiles_model(
    florence: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    overlay = tmp_path / "mine.yaml"
    spec = {"backend": "hf", "model": str(florence), "kind": "image-text-to-text"}
    overlay.write_text(yaml.safe_dump({"models": {"mine": spec}}), encoding="utf-8")
    argv = ["check-model", "--model", "mine", "--params", str(ROOT / "params.yaml"), str(overlay)]
    assert main([*argv, "--max-new-tokens", "2"]) == 0
    lines = _lines(capsys)
    assert "mine" in lines and "caption" in lines and "yes/no" in lines


def test_check_model_names_what_is_wrong_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-model", "--model", "nope", "--params", str(ROOT / "params.yaml")]) == 2
    err = capsys.readouterr().err.strip()
    assert "no model 'nope'" in err and "\n" not in err
