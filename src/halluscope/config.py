"""Load and validate ``params.yaml`` against ``config/params.schema.json``.

Snakemake calls :func:`validate` while parsing the Snakefile, so a typo in a key fails before any
job runs, with a message naming the key. Cross-references (a model id in ``generate.models``
that has no spec) are checked here too, with the valid ids, and so are each benchmark's own
(``benchmarks/<name>/params_check.py``: CAOS's instruction and embedder ids, ``caos.k``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from halluscope.strict_yaml import StrictYAMLError, strict_load

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "config" / "params.schema.json"


#: A profile, model, instruction or embedder name: it becomes a path component
#: (``results/<area>/<profile>/<model>/...``), so no separator and no leading dot (never ``..``).
#: The schema's ``pattern`` of every such setting says the same.
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


class ConfigError(ValueError):
    """``params.yaml`` is invalid; the message names the key and what was expected (``key``:
    the dotted key, when one key is at fault)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


def _key_path(path) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


def validate(
    config: Mapping[str, Any], schema_path: Path = SCHEMA_PATH, source: str = "params.yaml"
) -> None:
    """Raise :class:`ConfigError` naming the first offending key (schema, then references).

    When the rejected value is an uncommitted change of ``./params.yaml`` (``dvc exp run -S``
    writes its value there before any stage runs, and leaves it when the stage fails), the
    message also says how to restore it (:func:`restore_hint`); nothing is written here.
    """
    try:
        _validate(config, schema_path, source)
    except ConfigError as err:
        hint = restore_hint(err.key, config)
        if hint is None:
            raise
        raise ConfigError(f"{err}\n{hint}", key=err.key) from None


def _validate(config: Mapping[str, Any], schema_path: Path, source: str) -> None:
    import json

    import jsonschema

    check_no_secrets(config, source)
    _check_finite(config, source)
    schema = with_benchmark_fragments(json.loads(Path(schema_path).read_text(encoding="utf-8")))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(dict(config)), key=lambda e: list(map(str, e.path)))
    if errors:
        err = errors[0]
        if err.validator in ("additionalProperties", "unevaluatedProperties"):
            allowed = _allowed_keys(err.schema, schema)
            extra = sorted(set(err.instance) - allowed)
            where = _key_path([*err.path, extra[0]]) if extra else _key_path(err.path)
            raise ConfigError(
                f"{source}: unknown key '{where}' (allowed here: {', '.join(sorted(allowed))})",
                key=where,
            )
        where = _key_path(err.path)
        if err.validator == "not" and err.validator_value == {}:  # a key this stage never reads
            raise ConfigError(f"{source}: key '{where}' is not read here; remove it", key=where)
        raise ConfigError(f"{source}: key '{where}': {err.message}", key=where)
    _check_references(config, source)


#: A key that holds a credential (``api_key``, ``token``, ``password``, ``*secret*``, ...):
#: ``api_key_env``, the name of the variable that holds one, is not.
_SECRET_KEY = re.compile(
    r"(api[_-]?key|key|token|.*secret.*|.*passw(or)?d.*|authori[sz]ation|bearer|"
    r"(access|auth|api|bearer|hf|openai)[_-]?token|credentials?)",
    re.IGNORECASE,
)
#: A value that carries a credential: a URL with a user part (``https://user:pw@host``) or a
#: token of a known provider's shape (OpenAI ``sk-...``, Hugging Face ``hf_...``).
_SECRET_VALUE = re.compile(
    r"[a-z][a-z0-9+.-]*://[^/?#\s]*@|\bsk-[A-Za-z0-9_-]{16,}|\bhf_[A-Za-z0-9]{20,}",
    re.IGNORECASE,
)


def check_no_secrets(node: Any, source: str, path: tuple[str, ...] = ()) -> None:
    """Refuse a credential anywhere in the settings, naming its dotted key, never its value.

    Why first, before the schema: a schema message quotes the rejected value, Snakemake writes
    its messages to ``.snakemake/log/``, and a job's params reach ``.snakemake/metadata/`` and
    ``logs/``. Secrets come from the environment only (``api_key_env`` names the variable).
    """
    if isinstance(node, Mapping):
        for key, value in node.items():
            where = _key_path([*path, key])
            if _SECRET_KEY.fullmatch(str(key)) and value not in (None, ""):
                raise ConfigError(
                    f"{source}: key '{where}' holds a credential; secrets never go in a settings "
                    "file: export it in an environment variable and name that variable with "
                    "'api_key_env'"
                )
            check_no_secrets(value, source, (*path, str(key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            check_no_secrets(value, source, (*path, str(index)))
    elif isinstance(node, str) and _SECRET_VALUE.search(node):
        raise ConfigError(
            f"{source}: key '{_key_path(path)}' holds a credential (a URL with a user part or an "
            "API token); secrets never go in a settings file: give the URL without it and the "
            "key through the environment ('api_key_env')"
        )


def _check_finite(node: Any, source: str, path: tuple[str, ...] = ()) -> None:
    """Refuse a NaN or infinite number anywhere, naming its dotted key.

    Why before the schema: YAML reads ``.nan`` and ``.inf`` as floats, and every JSON-schema
    bound compares false against NaN, so ``temperature: .nan`` would pass ``minimum: 0`` and
    reach the jobs (and their cache keys).
    """
    import math

    if isinstance(node, float) and not math.isfinite(node):
        where = _key_path(path)
        raise ConfigError(
            f"{source}: key '{where}': {node} is not a finite number; expected a finite number",
            key=where,
        )
    if isinstance(node, Mapping):
        items: Iterable[tuple[Any, Any]] = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return
    for key, value in items:
        _check_finite(value, source, (*path, str(key)))


def _allowed_keys(node: Mapping[str, Any], root: Mapping[str, Any]) -> set[str]:
    """The keys a schema object allows, its ``$ref`` chain included (``$defs`` blocks), less
    those it refuses (``{"not": {}}``: an LLM block's reply option its stage never reads)."""
    forbidden = {k for k, v in node.get("properties", {}).items() if v == {"not": {}}}
    allowed = set(node.get("properties", {})) - forbidden
    ref = node.get("$ref", "")
    if ref.startswith("#/$defs/"):
        allowed |= _allowed_keys(root["$defs"][ref.removeprefix("#/$defs/")], root)
    return allowed - forbidden


_MISSING = object()


def _lookup(node: Any, path: list[str]) -> Any:
    for part in path:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


def _changed_keys(now: Any, before: Any, prefix: str = "") -> list[str]:
    """Dotted keys whose values differ between two parsed YAML mappings."""
    if isinstance(now, Mapping) and isinstance(before, Mapping):
        keys = sorted(set(now) | set(before), key=str)
        return [
            k
            for key in keys
            for k in _changed_keys(
                now.get(key, _MISSING), before.get(key, _MISSING), f"{prefix}{key}."
            )
        ]
    return [] if now == before else [prefix.rstrip(".")]


def _key_line(text: str, path: list[str]) -> int | None:
    """The 1-based line of ``path``'s key in a YAML text (None when it is not a plain key)."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line = None
    for part in path:
        if not isinstance(node, yaml.MappingNode):
            return line
        match = [(k, v) for k, v in node.value if getattr(k, "value", None) == part]
        if not match:
            return line
        line = match[0][0].start_mark.line + 1
        node = match[0][1]
    return line


def restore_hint(
    key: str | None, config: Mapping[str, Any], params: Path = Path("params.yaml")
) -> str | None:
    """How to restore ``params`` when its rejected value of ``key`` is an uncommitted change.

    None when the value did not come from ``params`` (a ``--configfile`` overlay, ``--config``),
    when ``params`` holds the committed value, or outside a git work tree. Restoring the file
    from git HEAD is offered only when ``key`` is its one uncommitted change (it keeps the
    layout DVC writes); otherwise the key's committed value is named, to set back by hand.
    """
    import json
    import subprocess

    if key is None or not params.is_file():
        return None
    path = key.split(".")
    try:
        text = params.read_text(encoding="utf-8")
        now = _lookup(yaml.safe_load(text), path)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if now is _MISSING or now != _lookup(config, path):
        return None
    try:
        head_text = subprocess.run(
            ["git", "show", f"HEAD:./{params.name}"],
            cwd=params.parent,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        head = yaml.safe_load(head_text)
    except (OSError, subprocess.SubprocessError, yaml.YAMLError):
        return None
    before = _lookup(head, path)
    if before == now:
        return None
    line = _key_line(text, path)
    where = f"{params}:{line}" if line else str(params)
    was = "absent" if before is _MISSING else json.dumps(before)
    said = f"{where} sets {key}: {json.dumps(now)} (at git HEAD: {was})"
    others = [
        k
        for k in _changed_keys(yaml.safe_load(text), head)
        if not (k == key or k.startswith(f"{key}.") or key.startswith(f"{k}."))
    ]
    if not others:
        return f"{said}; restore it with: git checkout HEAD -- {params}"
    listed = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
    return (
        f"{said}; set it back by hand: {params} has other uncommitted changes ({listed}) that "
        f"`git checkout HEAD -- {params}` would discard"
    )


def with_benchmark_fragments(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema plus each packaged benchmark's fragment (:mod:`halluscope.benchmarks`): its
    ``params.yaml`` section (optional: absent means disabled) and its dataset names."""
    from halluscope.benchmarks import BENCHMARKS

    properties = schema["properties"]
    for benchmark in BENCHMARKS:
        fragment = benchmark.schema()
        properties[benchmark.name] = fragment["section"]
        dataset = properties["data"]["properties"]["dataset"]
        dataset["enum"] += [d for d in fragment.get("datasets", [])]
    return schema


def _check_references(config: Mapping[str, Any], source: str) -> None:
    """Ids that must name an entry elsewhere in the params: the models of ``generate.models``;
    then each model spec and every benchmark's own checks (its folder's ``params_check.py``,
    e.g. CAOS's instructions, embedders, extractor LLM, oracle and ``caos.k``)."""
    from halluscope.benchmarks import import_plugins

    for model in config["generate"]["models"]:
        if model not in config["models"]:
            raise ConfigError(
                f"{source}: generate.models: unknown model id '{model}'; "
                f"valid ids: {', '.join(sorted(config['models']))}",
                key="generate.models",
            )
    _check_model_specs(config, source)
    for module in import_plugins("params_check"):
        module.check(config, source)


def _check_model_specs(config: Mapping[str, Any], source: str) -> None:
    """Each ``models:`` spec checked by its own backend (:func:`halluscope.models.base.
    check_spec`), so a typo such as ``preset: sim-precize`` fails before any job runs."""
    from halluscope.models.base import check_spec

    for model_id, spec in config["models"].items():
        try:
            check_spec(spec, model_id)
        except ValueError as err:
            raise ConfigError(f"{source}: {err}") from None


def yaml_syntax_error(path: str | Path, err: yaml.YAMLError) -> ConfigError:
    """A :class:`ConfigError` ``FILE:LINE:COLUMN: malformed YAML (problem)`` for a YAML error.

    Line and column are 1-based; the error's ``context`` (e.g. "while parsing a block mapping")
    and where that started are added when PyYAML gives them.
    """
    mark = getattr(err, "problem_mark", None)
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    if isinstance(err, StrictYAMLError):
        return ConfigError(f"{where}: {err.problem}")
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    context = getattr(err, "context", None)
    context_mark = getattr(err, "context_mark", None)
    if context and context_mark is not None:
        problem += f", {context} at line {context_mark.line + 1}, column {context_mark.column + 1}"
    elif context:
        problem += f", {context}"
    return ConfigError(f"{where}: malformed YAML ({problem})")


def check_yaml_syntax(paths: Iterable[str | Path]) -> None:
    """Parse each YAML file; raise :class:`ConfigError` with file, line and column on the first
    syntax error (Snakemake's own ``configfile`` message gives neither line nor column)."""
    for path in paths:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # Snakemake reports unreadable files itself
        try:
            strict_load(text)
        except yaml.YAMLError as err:
            raise yaml_syntax_error(path, err) from None


def read_yaml_mapping(path: str | Path) -> dict[str, Any]:
    """A YAML file's top-level mapping; :class:`ConfigError` with ``FILE:LINE`` (and column) for
    bytes that are not UTF-8, malformed YAML, or a top level that is not a mapping."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        line = path.read_bytes()[: err.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not valid UTF-8; expected a UTF-8 text file") from None
    except OSError as err:
        raise ConfigError(f"{path}: cannot read ({err.strerror or err})") from None
    try:
        config = strict_load(text)
    except yaml.YAMLError as err:
        raise yaml_syntax_error(path, err) from None
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return config


def load(path: str | Path = "params.yaml") -> dict[str, Any]:
    """Read a params file with :func:`strict_load` and validate it."""
    config = read_yaml_mapping(path)
    validate(config, source=str(path))
    return config


def load_with_overlays(path: str | Path, overlays: Iterable[str | Path]) -> dict[str, Any]:
    """``path`` overlaid by each ``--configfile`` file in turn, validated as Snakemake will see
    it (what ``halluscope check-params`` checks before a run)."""
    overlays = list(overlays)
    config = read_yaml_mapping(path)
    config = overlay(config, *(read_yaml_mapping(o) for o in overlays))
    validate(config, source=" + ".join(map(str, [path, *overlays])))
    return config


def overlay(base: dict[str, Any], *overs: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` updated in place by each of ``overs`` in turn, nested mappings merged key by key
    and any other value replaced: how Snakemake merges ``--configfile`` files over
    ``configfile:``, so a script or test sees the config a profile run sees."""
    for over in overs:
        for key, value in over.items():
            if isinstance(value, Mapping) and isinstance(base.get(key), dict):
                overlay(base[key], value)
            else:
                base[key] = value
    return base
