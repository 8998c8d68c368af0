"""A stage's settings: one typed, frozen dataclass per stage, read from ``params.yaml`` in one step.

Why one object: a setting reaches the code that uses it by one name. A rule builds the settings
of its job with ``<Settings>.from_config(config, **wildcards)`` and passes them as one JSON value
(``halluscope stage NAME --settings JSON``, :meth:`StageSettings.to_json`); the stage command
reads them back with :meth:`StageSettings.from_json` and hands the object to the stage function.
Snakemake tracks that JSON as the rule's ``params:``, so a change of a key reruns exactly the jobs
whose settings read it.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

Key = tuple[str, ...]
MISSING: Any = dataclasses.MISSING

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "config" / "params.schema.json"
"""The params schema (:data:`halluscope.config.SCHEMA_PATH`; named here so that a stage reading
its defaults does not import the whole config check, and its code digest stays small)."""


def param(key: str, default: Any = MISSING) -> Any:
    """A settings field that holds the params value of the dotted ``key`` (``figures.dpi``; a
    number picks a list item: ``trihe.judges.0``). Where the key is absent: the schema's
    ``default`` of it (:func:`schema_default`), else ``default`` (a key the schema gives no
    default; a default is written in one of the two places, never both)."""
    return dataclasses.field(default=default, metadata={"key": key})


def derived(via: Callable[[Mapping[str, Any]], Any], **field_options: Any) -> Any:
    """A settings field computed from the params by ``via(config)`` (several keys, as the
    embedders' display names are): the keys it reads are recorded as a :func:`param`'s are."""
    return dataclasses.field(**field_options, metadata={"via": via})


@functools.cache
def params_schema() -> dict[str, Any]:
    """The params schema, parsed once per process (callers only read it)."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@functools.cache
def _section_schema(name: str) -> Mapping[str, Any] | None:
    """The schema of the top-level params key ``name``: a benchmark's own section
    (``benchmarks/<name>/schema.json``), else the params schema's."""
    own = Path(__file__).resolve().parent / "benchmarks" / name / "schema.json"
    if own.is_file():
        return json.loads(own.read_text(encoding="utf-8"))["section"]
    return params_schema()["properties"].get(name)


def _chain(node: Mapping[str, Any] | None) -> Iterator[Mapping[str, Any]]:
    """A schema node and the ``$defs`` blocks its ``$ref`` chain names, most specific first."""
    defs = params_schema()["$defs"]
    while node is not None:
        yield node
        ref = node.get("$ref", "")
        node = defs.get(ref.removeprefix("#/$defs/")) if ref.startswith("#/$defs/") else None


def schema_default(key: str) -> Any:
    """The ``default`` the schema declares for the dotted ``key``, the most specific one along
    its ``$ref`` blocks, or :data:`MISSING`: the one place a settings value's default is
    written."""
    first, *rest = key.split(".")
    nodes = [node for node in [_section_schema(first)] if node is not None]
    for part in rest:
        nodes = [n["properties"][part] for node in nodes for n in _chain(node)
                 if part in n.get("properties", {})]  # fmt: skip
    for node in nodes:
        for n in _chain(node):
            if "default" in n:
                return copy.deepcopy(n["default"])
    return MISSING


def read(config: Mapping[str, Any], key: str, default: Any = MISSING) -> Any:
    """The params value of the dotted ``key`` as plain data (see :func:`param`)."""
    node: Any = config
    for part in key.split("."):
        if isinstance(node, list):
            node = node[int(part)]
        elif part in node:
            node = node[part]
        elif (fallback := schema_default(key)) is not MISSING:
            return fallback
        elif default is not MISSING:
            return default
        else:
            raise KeyError(f"params: no key {key}")
    return plain(node)


def keyed_values(cls: type, config: Mapping[str, Any]) -> dict[str, Any]:
    """The values of the fields of ``cls`` declared with their key (:func:`param`) or computed
    from the params (:func:`derived`)."""
    values = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if "key" in f.metadata:
            values[f.name] = read(config, f.metadata["key"], f.default)
        elif "via" in f.metadata:
            values[f.name] = f.metadata["via"](config)
    return values


class StageSettings:
    """Base of every stage's settings dataclass (``@dataclass(frozen=True)`` subclasses)."""

    @classmethod
    def from_config(cls, config: Mapping[str, Any], **wildcards: str) -> Self:
        """The settings of one job: ``config`` is the params (``params.yaml`` and overlays),
        ``wildcards`` the job's wildcards its settings depend on (a model, an instruction).

        This one reads every field from the key it is declared with (:func:`param`) or computes
        it (:func:`derived`); a class whose values depend on a wildcard defines its own."""
        fields = dataclasses.fields(cls)  # type: ignore[arg-type]
        unkeyed = [f.name for f in fields if not {"key", "via"} & set(f.metadata)]
        if wildcards or unkeyed:
            raise TypeError(f"{cls.__name__}: fields {unkeyed} need a from_config of the class")
        return cls(**keyed_values(cls, config))

    @classmethod
    def jobs(cls, config: Mapping[str, Any]) -> Iterable[dict[str, str]]:
        """The wildcards of every job of the rules that use these settings (one ``{}`` when the
        settings depend on none): the tests build the settings of each."""
        return [{}]

    def to_json(self) -> str:
        """The canonical JSON of the settings (sorted keys, compact): a rule's ``params:``."""
        return json.dumps(to_plain(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str, what: str = "--settings") -> Self:
        """The settings of :meth:`to_json`; an error names ``what`` and the offending key."""
        from halluscope.io import InputError

        try:
            value = json.loads(text)
        except json.JSONDecodeError as err:
            raise InputError(f"{what}: not JSON ({err})") from None
        return from_plain(cls, value, what)


@dataclass(frozen=True)
class TableSettings(StageSettings):
    """What a benchmark's table reads: the models (its rows), the decimals and the profile
    (its labels); a benchmark's own table settings add their fields."""

    models: list[str] = param("generate.models")
    decimals: int = param("tables.decimals")
    run: str = param("profile")


@dataclass(frozen=True)
class IntervalParams(StageSettings):
    """What a stage computing intervals reads: params.yaml's ``intervals`` (docs/statistics.md);
    a stage's own settings add their fields."""

    level: float = param("intervals.level")
    resamples: int = param("intervals.resamples")
    seed: int = param("intervals.seed")

    def interval_settings(self) -> Any:
        """The :class:`~halluscope.metrics.intervals.IntervalSettings` of these values."""
        from halluscope.metrics.intervals import IntervalSettings

        return IntervalSettings(level=self.level, resamples=self.resamples, seed=self.seed)


@dataclass(frozen=True)
class FigureSettings(StageSettings):
    """What a benchmark's figure reads: the models and the PNG resolution."""

    models: list[str] = param("generate.models")
    dpi: int = param("figures.dpi")


def to_plain(value: Any) -> Any:
    """A settings value as JSON values: dataclasses as objects, paths as strings, tuples as
    lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def from_plain(cls: type, value: Any, what: str) -> Any:
    """``cls`` from the JSON value of :func:`to_plain`: each field converted by its annotation
    (a nested settings dataclass, a path, a tuple), unknown or missing keys named."""
    from halluscope.io import dataclass_from_mapping

    hints = typing.get_type_hints(cls)
    if isinstance(value, Mapping):
        value = {
            k: convert_value(hints[k], v, f"{what}: {k}") if k in hints else v
            for k, v in value.items()
        }
    return dataclass_from_mapping(cls, value, what)


def convert_value(hint: Any, value: Any, what: str) -> Any:
    """``value`` (JSON data) as the annotation ``hint`` says: a settings dataclass, a path, a
    tuple, or a dict or list of those; ``what`` names it in an error."""
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return convert_value(options[0], value, what) if len(options) == 1 else value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return from_plain(hint, value, what)
    if hint is Path:
        return Path(value)
    if origin is tuple and isinstance(value, list):
        args = typing.get_args(hint)
        item = args[0] if len(args) == 2 and args[1] is Ellipsis else Any
        return tuple(convert_value(item, v, what) for v in value)
    if origin is dict and isinstance(value, Mapping):
        key, item = typing.get_args(hint) or (Any, Any)
        return {k: convert_value(item, v, what) for k, v in value.items()}
    if origin is list and isinstance(value, list):
        (item,) = typing.get_args(hint) or (Any,)
        return [convert_value(item, v, what) for v in value]
    return value


def plain(value: Any) -> Any:
    """A params value as plain data (dicts and lists), for a settings field."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
