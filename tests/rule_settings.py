"""Test helpers: each rule's settings class and outputs, read from the rules files, and the
params keys a settings class reads (:class:`KeyRecorder`).

Why in the tests: the checks that a rule passes its settings as one value, that a key reruns
only the jobs whose settings read it, and that each model-calling rule declares its resources
read the rules as text; nothing of the workflow does (``dvc.yaml`` is written by hand).
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.settings import StageSettings

Key = tuple[str, ...]

RULE = re.compile(r"^rule (\w+):\n(.*?)(?=^\S|\Z)", re.M | re.S)
SECTION = re.compile(r"^    (\w+):(.*?)(?=^    \w+:|\Z)", re.M | re.S)
SETTINGS = re.compile(r"settings=settings_arg\(\s*([\w.]+)")
IMPORT = re.compile(r"^from ([\w.]+) import (\w+)(?: as (\w+))?$", re.M)
PATH = re.compile(r"\"((?:results|metrics)/[^\"]*)\"")


@dataclass(frozen=True)
class Rule:
    """A rule of the rules files: its name, the settings class it passes (the expression in its
    rules file, ``None`` when it reads no params) and its output path patterns."""

    name: str
    settings: str | None
    outputs: tuple[str, ...]


def rule_files(root: Path) -> list[Path]:
    """The core rules files and every packaged benchmark's."""
    benchmarks = root / "src" / "halluscope" / "benchmarks"
    return sorted((root / "rules").glob("*.smk")) + sorted(benchmarks.glob("*/*.smk"))


@functools.cache
def rules(root: Path) -> tuple[Rule, ...]:
    """Every rule of :func:`rule_files` (``{{x}}`` in an ``expand`` pattern read as ``{x}``)."""
    found = []
    for path in rule_files(root):
        for name, body in RULE.findall(path.read_text(encoding="utf-8")):
            sections = dict(SECTION.findall(body))
            settings = SETTINGS.search(sections.get("params", ""))
            outputs = PATH.findall(sections.get("output", ""))
            outputs = [o.replace("{{", "{").replace("}}", "}") for o in outputs]
            found.append(Rule(name, settings[1] if settings else None, tuple(outputs)))
    return tuple(found)


@functools.cache
def _imports(root: Path) -> dict[str, tuple[str, str]]:
    """Name -> (module, attribute) of every ``from M import A [as N]`` of the rules files (they
    share one namespace, the Snakefile's)."""
    names = {}
    for path in rule_files(root):
        for module, attr, alias in IMPORT.findall(path.read_text(encoding="utf-8")):
            names[alias or attr] = (module, attr)
    return names


def resolve(expression: str, root: Path) -> Any:
    """The object a rules file names by ``expression`` (``trihe_stages.TriheQuestionSettings``)."""
    first, *attrs = expression.split(".")
    if first not in _imports(root):
        raise ValueError(f"rules files: {expression!r}: {first!r} is not imported by a rules file")
    module, attr = _imports(root)[first]
    value = getattr(importlib.import_module(module), attr, None)
    if value is None:  # ``from package import module``
        value = importlib.import_module(f"{module}.{attr}")
    for name in attrs:
        value = getattr(value, name)
    return value


def _pattern(path: str, profile: str) -> re.Pattern[str]:
    """An output path pattern as a regex: ``{profile}`` (``{RUN}``) the profile, any other
    wildcard one path part."""
    parts = re.split(r"(\{\w+\})", path)
    regex = "".join(
        re.escape(profile)
        if p in ("{profile}", "{RUN}")
        else "[^/]+"
        if p[:1] == "{"
        else re.escape(p)
        for p in parts
    )
    return re.compile(regex)


def builds(output: str, files: list[str], profile: str) -> bool:
    """Whether ``output`` is among ``files`` (a file, or a folder prefix ending in ``/``)."""
    pattern = _pattern(output, profile)
    return any(
        f"{output}/".startswith(f) if f.endswith("/") else pattern.fullmatch(f) is not None
        for f in files
    )


def stage_settings(stage: Any, built: list[str] | None, profile: str, root: Path) -> list[type]:
    """The settings classes of the rules of a registry stage: rules whose outputs lie in its
    outs (and, with ``built``, are among the files its target builds), in rules-file order."""
    prefixes = [
        *(f"{out}/" for out in stage.outs),
        *(f.split("{")[0] for f in stage.files),
        *(f"{m}/" for m in stage.metrics),
    ]
    classes: list[type] = []
    for rule in rules(root):
        if rule.settings is None:
            continue
        mine = [o for o in rule.outputs if any(f"{o}/".startswith(p) for p in prefixes)]
        if not mine or (built is not None and not any(builds(o, built, profile) for o in mine)):
            continue
        cls = resolve(rule.settings, root)
        if cls not in classes:
            classes.append(cls)
    return classes


class KeyRecorder(Mapping):
    """A read-only view of the params that records the dotted keys read through it.

    Reading a value that is not a mapping records its key (``caos.k``); a mapping comes back as
    another view, and iterating it, taking its length or :func:`plain` of it records the
    mapping's key (the whole block is read). A membership test alone records nothing.
    """

    def __init__(self, data: Mapping[str, Any], keys: set[Key] | None = None, path: Key = ()):
        self._data = data
        self._path = path
        self.keys_read: set[Key] = set() if keys is None else keys

    def __getitem__(self, key: str) -> Any:
        value = self._data[key]
        path = (*self._path, str(key))
        if isinstance(value, Mapping):
            return KeyRecorder(value, self.keys_read, path)
        self.keys_read.add(path)
        return value

    def __iter__(self) -> Iterator[str]:
        self.keys_read.add(self._path)
        return iter(self._data)

    def __len__(self) -> int:
        self.keys_read.add(self._path)
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __bool__(self) -> bool:  # ``section or {}`` reads nothing
        return bool(self._data)

    def __repr__(self) -> str:
        return f"KeyRecorder({'.'.join(self._path) or '<top level>'})"


def read_keys(classes: Iterable[type[StageSettings]], config: Mapping[str, Any]) -> set[Key]:
    """Every key the ``from_config`` of ``classes`` reads, over all their jobs (:meth:`jobs`;
    reading the job list counts too: it decides which jobs exist)."""
    recorder = KeyRecorder(config)
    for cls in classes:
        for wildcards in cls.jobs(recorder):
            cls.from_config(recorder, **wildcards)
    return recorder.keys_read


def params_keys(keys: Iterable[Key], params: Mapping[str, Any]) -> list[str]:
    """The recorded ``keys`` as DVC ``params:`` of a ``params.yaml`` (``params``): keys the file
    does not hold left out (a schema default), a key under a recorded block dropped, and a block
    every key of which is recorded listed as the block; dotted, sorted."""
    wanted = set(keys)

    def walk(node: Any, path: Key) -> list[Key] | None:
        """The keys under ``path`` to list; None: the whole of ``path``."""
        if path in wanted:
            return None
        if not isinstance(node, Mapping) or not node:
            return []
        parts = {k: walk(v, (*path, str(k))) for k, v in node.items()}
        if path and all(p is None for p in parts.values()):
            return None
        found: list[Key] = []
        for k, part in parts.items():
            found.extend([(*path, str(k))] if part is None else part)
        return found

    found = walk(params, ())
    if found is None:  # the whole of the params read
        found = [(str(k),) for k in params]
    return sorted(".".join(key) for key in found)
