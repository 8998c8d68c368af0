"""The LLM block: one schema definition with its defaults, one typed LLMSettings, and old keys
named by ``halluscope check-params``."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from halluscope.cli import main
from halluscope.config import SCHEMA_PATH, ConfigError, validate, with_benchmark_fragments
from halluscope.io import InputError
from halluscope.settings import from_plain, to_plain
from halluscope.stages.llm import LLMSettings, defaults

ROOT = Path(__file__).resolve().parents[1]
JUDGE_LLM = {
    "model": "smollm2",
    "max_new_tokens": 8,
    "temperature": 0.0,
    "seed": 0,
    "json_schema": True,
}
"""A judge LLM block with a reply option the judge never reads."""


def params() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))


def schema() -> dict[str, Any]:
    return with_benchmark_fragments(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


def _walk(node: Any, path: tuple[str, ...] = ()):
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _walk(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, (*path, str(index)))


def test_the_llm_block_is_defined_once_and_used_under_one_name() -> None:
    """Only ``$defs/generation`` declares the generation keys; every use of ``$defs/llm`` is a
    key named ``llm`` (extract.llm, hallusionbench.llm, nope.llm, trihe.extractor.llm,
    trihe.judge.llm)."""
    full = schema()
    declaring = [p for p, n in _walk(full) if "max_new_tokens" in n.get("properties", {})]
    assert declaring == [("$defs", "generation")]
    uses = sorted(".".join(p[1::2]) for p, n in _walk(full) if n.get("$ref") == "#/$defs/llm")
    assert uses == [
        "extract.llm",
        "hallusionbench.llm",
        "nope.llm",
        "trihe.extractor.llm",
        "trihe.judge.llm",
    ]
    generation = sorted(p for p, n in _walk(full) if n.get("$ref") == "#/$defs/generation")
    assert generation == [("$defs", "llm"), ("properties", "generate"), ("properties", "oracle")]


def test_defaults_come_from_the_schema() -> None:
    from halluscope.stages import llm

    assert llm.SCHEMA_PATH == SCHEMA_PATH
    assert defaults() == {
        "batch_size": 8,
        "template_version": "v1",
        "cache_mode": "live",
        "json_schema": True,
        "stop_rule": "none",
        "grammar": "schema",
        "reply_rule": "released",
    }
    config = params()
    block = {"model": "smollm2", "max_new_tokens": 16, "temperature": 0.0, "seed": 3}
    settings = LLMSettings.from_block(config, block, "x.llm")
    assert settings.batch_size == 8 and settings.template_version == "v1"
    assert settings.cache_mode == "live" and settings.json_schema is True
    assert settings.grammar == "schema" and settings.reply_rule == "released"
    # stop_rule none stays out of the request params (and so out of the cache key)
    assert settings.params == {"max_new_tokens": 16, "temperature": 0.0, "seed": 3}
    assert settings.spec == config["models"]["smollm2"]
    ruled = LLMSettings.from_block(config, {**block, "stop_rule": "count"}, "x.llm")
    assert ruled.params["stop_rule"] == "count"


def test_the_demo_blocks_keep_their_request_params() -> None:
    """The request params (cache keys) of the demo's LLM stages, as before the shared type."""
    from halluscope.benchmarks.caos.captions.extract import instruction_llm
    from halluscope.benchmarks.nope.stages import NopeGeneratorSettings
    from halluscope.benchmarks.trihe.stages import TripletSettings

    config = params()
    extract = instruction_llm(config, "i01")
    assert extract is not None and extract.batch_size == 4 and extract.grammar != "schema"
    assert extract.params == {
        "max_new_tokens": 64,
        "temperature": 0.0,
        "seed": 0,
        "stop_rule": "object-list-vocab",
    }
    trihe = TripletSettings.from_config(config).llm
    assert trihe is not None and trihe.batch_size == 4
    assert trihe.params == {
        "max_new_tokens": 48,
        "temperature": 0.0,
        "seed": 0,
        "stop_rule": "json-value",
    }
    nope = NopeGeneratorSettings.from_config(config)
    assert nope.llm.batch_size == 1 and nope.seed == 0
    assert nope.llm.params == {
        "max_new_tokens": 64,
        "temperature": 0.0,
        "seed": 0,
        "stop_rule": "count-repeat",
    }


def test_generation_blocks_split_the_batch_size_from_the_request_params() -> None:
    """``generate`` and ``oracle`` pass their block with ``batch_size``: never a request param."""
    block = {"seed": 0, "max_new_tokens": 8, "temperature": 0.0, "batch_size": 16}
    settings = LLMSettings.from_generation("m", {"backend": "sim"}, block)
    assert settings.batch_size == 16 and "batch_size" not in settings.params
    assert from_plain(LLMSettings, to_plain(settings), "llm") == settings


def test_unknown_model_and_bad_json_are_named() -> None:
    config = params()
    with pytest.raises(ValueError, match=r"nope\.llm\.model: unknown model id 'gpt-9'.*smollm2"):
        LLMSettings.from_block(config, {"model": "gpt-9"}, "nope.llm")
    good = to_plain(LLMSettings.from_block(config, config["extract"]["llm"], "extract.llm"))
    with pytest.raises(InputError, match=r"--llm: unknown key\(s\) \['bogus'\]"):
        from_plain(LLMSettings, {**good, "bogus": 1}, "--llm")
    with pytest.raises(InputError, match=r"missing key\(s\) \['spec'\]"):
        from_plain(LLMSettings, {k: v for k, v in good.items() if k != "spec"}, "--llm")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda c: c["nope"]["llm"].update(grammar="object-list"),
            "'nope.llm.grammar' is not read",
        ),
        (lambda c: c["trihe"]["judge"].update(llm=JUDGE_LLM), "judge.llm.json_schema' is not"),
        (lambda c: c["extract"]["llm"].update(stop_rule="count"), "extract.llm.stop_rule"),
        (lambda c: c["generate"].update(batch_size=0), "generate.batch_size"),
        (lambda c: c["oracle"].update(bogus=1), r"unknown key 'oracle\.bogus'.*batch_size"),
        (lambda c: c["nope"]["llm"].pop("model"), "'model' is a required property"),
    ],
)
def test_the_schema_checks_every_llm_block(edit, message: str) -> None:
    config = copy.deepcopy(params())
    edit(config)
    with pytest.raises(ConfigError, match=message):
        validate(config)


def _old_layout(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with NOPE's and Tri-HE's extractor LLM keys flat, as params.yaml had them."""
    old = copy.deepcopy(config)
    nope_llm = old["nope"].pop("llm")
    nope_llm.pop("seed")
    old["nope"].update(nope_llm)
    old["trihe"]["extractor"].update(old["trihe"]["extractor"].pop("llm"))
    return old


def test_an_old_params_file_fails_naming_a_key_the_llm_block_now_holds(
    tmp_path: Path, capsys
) -> None:
    """NOPE's and Tri-HE's LLM keys live in their `llm` blocks: an old flat file is refused by
    the schema, naming the key and what is allowed there (`llm` among them)."""
    old = _old_layout(params())
    with pytest.raises(ConfigError, match=r"unknown key 'nope\.\w+' \(allowed here: .*\bllm\b"):
        validate(old)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(old), encoding="utf-8")
    assert main(["check-params", "--params", str(path)]) == 2
    said = capsys.readouterr().err
    assert "unknown key 'nope." in said and str(path) in said


def test_an_old_overlay_fails_naming_its_key(tmp_path: Path, capsys) -> None:
    overlay = tmp_path / "old.yaml"
    overlay.write_text("nope:\n  stop_rule: count\n", encoding="utf-8")
    assert main(["check-params", "--params", str(ROOT / "params.yaml"), str(overlay)]) == 2
    assert "unknown key 'nope.stop_rule'" in capsys.readouterr().err
