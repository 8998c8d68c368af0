"""One typed settings object per stage: a rule passes ``--settings`` (its class's
``from_config``) and nothing else read from params.yaml; the keys a settings class reads (the
tests' recorder, tests/rule_settings.py)."""

from __future__ import annotations

import dataclasses
import inspect
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from rule_settings import (
    RULE,
    SECTION,
    KeyRecorder,
    params_keys,
    read_keys,
    resolve,
    rule_files,
    rules,
)

from halluscope.config import load
from halluscope.settings import MISSING, StageSettings, derived, param, plain, schema_default

ROOT = Path(__file__).resolve().parents[1]
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))


def rule_sections() -> dict[str, dict[str, str]]:
    """Rule name -> its sections (``params``, ``shell``, ...) as text."""
    out = {}
    for path in rule_files(ROOT):
        for name, body in RULE.findall(path.read_text(encoding="utf-8")):
            out[name] = dict(SECTION.findall(body))
    return out


def param_names(text: str) -> list[str]:
    return re.findall(r"^        (\w+)=", text, re.M)


def test_a_rule_passes_its_settings_as_one_value_and_params_yaml_nowhere_else() -> None:
    """Every params value of a rule is its settings, the code digest or a value made of its
    input or output paths; a rule with settings passes them once, as ``--settings``; no shell
    command reads the config."""
    sections = rule_sections()
    assert {"score", "extract", "pope_answers", "tables"} <= set(sections)
    with_settings = 0
    for name, parts in sections.items():
        params, shell = parts.get("params", ""), parts.get("shell", "")
        assert "config" not in shell, name
        for key in param_names(params):
            if key in ("settings", "code"):
                continue
            value = params.split(f"{key}=", 1)[1].split("\n        ")[0]
            assert re.match(r"lambda wc(ildcards)?, (input|output):", value), (name, key)
            assert "config" not in value or "input." in value, (name, key)
        used = re.findall(r"\{params\.(\w+)(?::q)?\}", shell)
        if "settings" in param_names(params):
            with_settings += 1
            assert shell.count("--settings {params.settings:q}") == 1, name
            assert used.count("settings") == 1, name
        else:
            assert "--settings" not in shell, name
    assert with_settings >= 35


def test_every_settings_class_round_trips_on_every_job() -> None:
    """``from_json(to_json())`` gives the same object, for each job of each rule's settings, and
    a class's wildcards are the ones its rule passes."""
    config = load(ROOT / "params.yaml")
    texts = {p: p.read_text(encoding="utf-8") for p in rule_files(ROOT)}
    seen = set()
    for rule in rules(ROOT):
        if rule.settings is None:
            continue
        cls = resolve(rule.settings, ROOT)
        assert issubclass(cls, StageSettings), rule.name
        passed = next(
            re.findall(rf"settings_arg\({re.escape(rule.settings)}((?:, \"\w+\")*)\)", text)
            for text in texts.values()
            if f"settings_arg({rule.settings}" in text
        )[0]
        named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        parameters = inspect.signature(cls.from_config).parameters.values()
        wanted = [p.name for p in parameters if p.kind in named][1:]
        assert re.findall(r"\"(\w+)\"", passed) == wanted, rule.name
        if cls in seen:
            continue
        seen.add(cls)
        for wildcards in cls.jobs(config):
            settings = cls.from_config(config, **wildcards)
            text = settings.to_json()
            assert cls.from_json(text) == settings, (cls.__name__, wildcards)
            assert cls.from_json(text).to_json() == text


def test_the_recorder_records_leaves_and_whole_blocks() -> None:
    data = {"a": {"b": 1, "c": {"d": 2}, "e": [1, 2]}, "f": 3}
    recorder = KeyRecorder(data)
    assert recorder["a"]["b"] == 1 and recorder["a"]["e"] == [1, 2]
    assert "c" in recorder["a"] and recorder.get("zz") is None
    assert (recorder.get("g") or {}) == {} and bool(recorder["a"])
    assert recorder.keys_read == {("a", "b"), ("a", "e")}
    assert plain(recorder["a"]["c"]) == {"d": 2}  # the block, and each key in it
    assert recorder.keys_read == {("a", "b"), ("a", "e"), ("a", "c"), ("a", "c", "d")}
    assert params_keys(recorder.keys_read, data) == ["a"]  # every key of a: the block
    assert params_keys({("a", "b"), ("f",), ("x", "y")}, data) == ["a.b", "f"]
    assert params_keys({("a", "c", "d"), ("a",)}, data) == ["a"]


def test_a_field_declared_with_its_key_is_read_by_name() -> None:
    @dataclass(frozen=True)
    class Declared(StageSettings):
        dpi: int = param("figures.dpi")
        judge: str = param("trihe.judges.0")
        other: tuple[str, ...] = param("caos.nowhere", ("a",))

    assert Declared.from_config(PARAMS) == Declared(
        PARAMS["figures"]["dpi"], PARAMS["trihe"]["judges"][0], ("a",)
    )
    keys = read_keys([Declared], PARAMS)
    assert keys == {("figures", "dpi"), ("trihe", "judges")}

    @dataclass(frozen=True)
    class Undeclared(StageSettings):
        dpi: int

    with pytest.raises(TypeError, match=r"Undeclared: fields \['dpi'\] need a from_config"):
        Undeclared.from_config(PARAMS)


def test_an_absent_key_takes_the_schemas_default_the_most_specific_one() -> None:
    """A key params.yaml leaves out is read as the schema's ``default``: the params schema's,
    a benchmark's own section's (``benchmarks/<name>/schema.json``), or along a ``$ref`` block,
    where a section's own declaration of the key wins over the block's."""
    assert schema_default("tables.chair_counts") == "with-rejected-ood"
    assert schema_default("caos.sensitivity")[0] == "coco-instances"  # CAOS's schema.json
    assert schema_default("extract.llm.batch_size") == 8  # $defs/generation, through $defs/llm
    assert schema_default("nope.llm.stop_rule") == "none"  # NOPE's enum; the default: $defs/llm
    assert schema_default("caos.k") is MISSING  # required: no default
    assert schema_default("nope.nowhere.x") is MISSING

    @dataclass(frozen=True)
    class Defaulted(StageSettings):
        counts: str = param("tables.chair_counts")
        k: int = param("caos.k")
        labels: dict = derived(lambda config: {m: m.upper() for m in config["generate"]["models"]})

    config = {
        **PARAMS,
        "tables": {k: v for k, v in PARAMS["tables"].items() if k != "chair_counts"},
    }
    settings = Defaulted.from_config(config)
    assert settings.counts == "with-rejected-ood" and settings.k == PARAMS["caos"]["k"]
    assert list(settings.labels) == PARAMS["generate"]["models"]
    assert read_keys([Defaulted], config) == {("caos", "k"), ("generate", "models")}
    with pytest.raises(KeyError, match="params: no key caos.k"):
        Defaulted.from_config({**config, "caos": {}})


def test_each_default_is_written_once() -> None:
    """A settings field declared with a key gives a default of its own only where the schema
    gives none (issue 36: the schema or the class, never both), and no class other than those
    whose jobs depend on a wildcard writes its own ``from_config``."""
    from rule_settings import resolve as resolve_settings

    classes = {resolve_settings(rule.settings, ROOT) for rule in rules(ROOT) if rule.settings}
    assert len(classes) > 25
    for cls in classes:
        for f in dataclasses.fields(cls):
            if "key" in f.metadata and f.default is not MISSING:
                key = f.metadata["key"]
                assert schema_default(key) is MISSING, (cls.__name__, key)
        own = "from_config" in vars(cls)
        parameters = inspect.signature(cls.from_config).parameters.values()
        wildcards = [p.name for p in parameters if p.kind == p.POSITIONAL_OR_KEYWORD][1:]
        assert own == bool(wildcards), (cls.__name__, wildcards)


def test_read_keys_follow_from_config_and_the_jobs() -> None:
    @dataclass(frozen=True)
    class Example(StageSettings):
        k: int

        @classmethod
        def from_config(cls, config, model: str) -> Example:
            return cls(config["caos"]["k"] + len(plain(config["models"][model])))

        @classmethod
        def jobs(cls, config):
            return [{"model": m} for m in config["generate"]["models"]]

    keys = read_keys([Example], PARAMS)
    models = {("models", m) for m in PARAMS["generate"]["models"]}
    assert {("caos", "k"), ("generate", "models"), *models} <= keys
    assert {k[:2] for k in keys if k[0] == "models"} == models  # a block and its keys
