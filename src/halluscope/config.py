"""Load and validate ``params.yaml`` against ``config/params.schema.json``.

Snakemake calls :func:`validate` while parsing the Snakefile, so a typo in a key fails before any
job runs, with a message naming the key. Cross-references (a model id in ``generate.models``
that has no spec, an unknown instruction or embedder id) are checked here too, with the valid ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "config" / "params.schema.json"


class ConfigError(ValueError):
    """``params.yaml`` is invalid; the message names the key and what was expected."""


def _key_path(path) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


def validate(
    config: Mapping[str, Any], schema_path: Path = SCHEMA_PATH, source: str = "params.yaml"
) -> None:
    """Raise :class:`ConfigError` naming the first offending key (schema, then references)."""
    import json

    import jsonschema

    schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(dict(config)), key=lambda e: list(map(str, e.path)))
    if errors:
        err = errors[0]
        if err.validator == "additionalProperties":
            extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
            where = _key_path([*err.path, extra[0]]) if extra else _key_path(err.path)
            raise ConfigError(
                f"{source}: unknown key '{where}' (allowed here: "
                f"{', '.join(sorted(err.schema.get('properties', {})))})"
            )
        raise ConfigError(f"{source}: key '{_key_path(err.path)}': {err.message}")
    _check_references(config, source)


def _check_references(config: Mapping[str, Any], source: str) -> None:
    gen = config["generate"]
    for model in gen["models"]:
        if model not in config["models"]:
            raise ConfigError(
                f"{source}: generate.models: unknown model id '{model}'; "
                f"valid ids: {', '.join(sorted(config['models']))}"
            )
    for key, ids in (
        ("generate.instructions", gen["instructions"]),
        ("tables.table1_instructions", config["tables"]["table1_instructions"]),
    ):
        for inst in ids:
            if inst not in config["instructions"]:
                raise ConfigError(
                    f"{source}: {key}: unknown instruction id '{inst}'; "
                    f"valid ids: {', '.join(sorted(config['instructions']))}"
                )
    for emb in config["embed"]["embedders"]:
        if emb not in config["embed"]["specs"]:
            raise ConfigError(
                f"{source}: embed.embedders: unknown embedder id '{emb}'; "
                f"valid ids: {', '.join(sorted(config['embed']['specs']))}"
            )
    _check_llm_and_oracle(config, source)
    if config["caos"]["k"] > config["caos"]["k_max"]:
        raise ConfigError(
            f"{source}: caos.k={config['caos']['k']} exceeds caos.k_max={config['caos']['k_max']}"
        )


def _check_llm_and_oracle(config: Mapping[str, Any], source: str) -> None:
    """The extractor LLM and the oracle members must be model ids; LLM instructions known."""
    models = config["models"]
    valid = ", ".join(sorted(models))
    extract = config["extract"]
    if "llm" in str(extract.get("method", "")).split("+"):
        llm = extract.get("llm")
        if not isinstance(llm, Mapping):
            raise ConfigError(
                f"{source}: extract.method={extract['method']!r} needs an 'extract.llm' section "
                "(model, max_new_tokens, temperature, seed, json_schema, batch_size, "
                "template_version, cache_mode)"
            )
        if llm["model"] not in models:
            raise ConfigError(
                f"{source}: extract.llm.model: unknown model id '{llm['model']}'; "
                f"valid ids: {valid}"
            )
        chosen = extract.get("llm_instructions", "all")
        for inst in [] if chosen == "all" else chosen:
            if inst not in config["instructions"]:
                raise ConfigError(
                    f"{source}: extract.llm_instructions: unknown instruction id '{inst}'; "
                    f"valid ids: {', '.join(sorted(config['instructions']))}"
                )
    oracle = config["oracle"]
    if oracle["method"] == "ensemble":
        members = oracle.get("members") or []
        if not members:
            raise ConfigError(f"{source}: oracle.method=ensemble needs oracle.members (model ids)")
        for member in members:
            if member not in models:
                raise ConfigError(
                    f"{source}: oracle.members: unknown model id '{member}'; valid ids: {valid}"
                )
        missing = [
            k
            for k in ("seed", "max_new_tokens", "temperature", "batch_size", "template_version",
                      "cache_mode")
            if k not in oracle
        ]  # fmt: skip
        if missing:
            raise ConfigError(f"{source}: oracle.method=ensemble needs oracle.{missing[0]}")


def load(path: str | Path = "params.yaml") -> dict[str, Any]:
    """Read a params file with ``yaml.safe_load`` and validate it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        line = path.read_bytes()[: err.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not valid UTF-8; expected a UTF-8 text file") from None
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(f"{where}: malformed YAML ({problem})") from None
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    validate(config, source=str(path))
    return config
