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
    for inst in [*gen["instructions"], *config["tables"]["table1_instructions"]]:
        if inst not in config["instructions"]:
            raise ConfigError(
                f"{source}: unknown instruction id '{inst}'; "
                f"valid ids: {', '.join(sorted(config['instructions']))}"
            )
    for emb in config["embed"]["embedders"]:
        if emb not in config["embed"]["specs"]:
            raise ConfigError(
                f"{source}: embed.embedders: unknown embedder id '{emb}'; "
                f"valid ids: {', '.join(sorted(config['embed']['specs']))}"
            )
    if config["caos"]["k"] > config["caos"]["k_max"]:
        raise ConfigError(
            f"{source}: caos.k={config['caos']['k']} exceeds caos.k_max={config['caos']['k_max']}"
        )


def load(path: str | Path = "params.yaml") -> dict[str, Any]:
    """Read a params file with ``yaml.safe_load`` and validate it."""
    path = Path(path)
    with open(path, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    validate(config, source=str(path))
    return config
