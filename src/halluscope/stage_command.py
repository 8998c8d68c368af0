"""``halluscope stage NAME``: every pipeline stage run from its function's signature.

Why one runner: a stage is written in two places only, its rule (the files it reads and writes,
the settings it takes) and its function. The function declares its interface by its signature,
and this module turns that signature into the command line a rule calls, so no stage has an
argparse specification of its own:

- a parameter typed by a :class:`~halluscope.settings.StageSettings` class is ``--settings
  JSON`` (what the rule built with ``<Settings>.from_config``), read back into that class;
- a parameter ``name: Path`` is ``--name PATH`` (``name_x`` is ``--name-x``); with a default
  (``Path | None = None``) the flag may be left out;
- ``list[Path]`` / ``list[str]`` take one value or more (none, when the parameter has a
  default); a positional-only parameter (before ``/``) is the command's positional arguments;
- ``str``, ``int``, ``float`` are plain flags; a ``dict`` parameter takes JSON, its paths
  converted by the annotation.

The function's docstring's first line is its one-line help. A dict it returns (counts, an
accuracy report) is printed to stderr as one JSON line: the rule's log. Bad input is one line,
``halluscope stage NAME: error: ...``, with exit status 2, as for every ``halluscope`` command.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import json
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from halluscope.io import InputError

F = TypeVar("F", bound=Callable[..., Any])

STAGES: dict[str, Callable[..., Any]] = {}
"""Stage name -> function, filled by :func:`stage` as the stage modules are imported."""

#: The core stages, by name: their module of ``halluscope/stages/``, as a benchmark's ``PARTS``
#: declares its own (:class:`halluscope.benchmarks.Parts`). Relative names on purpose: a full
#: module name in a string is an import for :func:`halluscope.registry.module_imports`, and
#: every stage imports this module.
CORE_STAGES: dict[str, str] = {
    "data": "data",
    "explorer": "explorer",
    "metrics": "report",
    "paper": "report",
    "assemble": "report",
}


def stage(name: str) -> Callable[[F], F]:
    """Declare ``func`` the stage ``halluscope stage <name>``; its signature is its interface."""

    def register(func: F) -> F:
        STAGES[name] = func
        return func

    return register


@functools.cache
def stage_modules() -> dict[str, str]:
    """Stage name -> the module that declares it: :data:`CORE_STAGES` and every registered
    benchmark's ``stages`` declaration, in name order.

    Why declared names: a job imports only the module of its own stage, not every stage's
    dependencies (pandas, torch), so the name must be known before any stage module is
    imported; :func:`load` checks the module does define it."""
    from halluscope.benchmarks import BENCHMARKS

    found = {name: f"halluscope.stages.{module}" for name, module in CORE_STAGES.items()}
    for benchmark in BENCHMARKS:
        for name, module in benchmark.stage_modules().items():
            if name in found:
                raise TypeError(f"stage {name!r} declared twice: {found[name]}, {module}")
            found[name] = module
    return dict(sorted(found.items()))


def stage_names() -> list[str]:
    """Every name ``halluscope stage NAME`` accepts."""
    return list(stage_modules())


def load(name: str) -> Callable[..., Any]:
    """The function of stage ``name`` (importing its module alone)."""
    module = stage_modules()[name]
    importlib.import_module(module)
    if name not in STAGES:
        raise TypeError(f"stage {name!r} is declared in {module}, which has no @stage({name!r})")
    return STAGES[name]


def stages() -> dict[str, Callable[..., Any]]:
    """Every stage, by name (imports every stage module: for ``--help``)."""
    return {name: load(name) for name in stage_modules()}


def summary(func: Callable[..., Any]) -> str:
    """The first line of a stage function's docstring: its line in ``halluscope stage --help``."""
    return (inspect.getdoc(func) or "").partition("\n")[0].rstrip(".")


def stage_help() -> str:
    """``halluscope stage --help``: one line per stage, its name and what it makes."""
    found = stages()
    width = max(map(len, found))
    lines = [f"  {name:<{width}}  {summary(func)}".rstrip() for name, func in found.items()]
    return "\n".join(
        (
            "usage: halluscope stage NAME [STEP] [ARGS...]",
            "",
            "The one entry point of every pipeline stage (the rules call it); "
            "halluscope stage NAME --help gives a stage's flags.",
            "",
            "stages:",
            *lines,
        )
    )


def _settings_class(hint: Any) -> type | None:
    from halluscope.settings import StageSettings

    return hint if isinstance(hint, type) and issubclass(hint, StageSettings) else None


def _optional(hint: Any) -> Any:
    """``X`` of ``X | None``; ``hint`` itself otherwise."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(options) == 1:
            return options[0]
    return hint


def _argument(param: inspect.Parameter, hint: Any) -> tuple[list[str], dict[str, Any]]:
    """The ``add_argument`` names and keywords of one parameter of a stage function."""
    if _settings_class(hint):
        return ["--settings"], {
            "required": True,
            "metavar": "JSON",
            "help": "the stage's settings (built in the rule by <Settings>.from_config), as JSON",
        }
    hint = _optional(hint)
    has_default = param.default is not inspect.Parameter.empty
    positional = param.kind is inspect.Parameter.POSITIONAL_ONLY
    names = [param.name] if positional else [f"--{param.name.replace('_', '-')}"]
    kwargs: dict[str, Any] = {} if positional else {"dest": param.name}
    origin = typing.get_origin(hint)
    if origin in (list, tuple):
        item = typing.get_args(hint)[0]
        kwargs |= {"nargs": "*" if has_default else "+", "type": _scalar(item)}
    elif origin is dict or hint is dict:
        kwargs["type"] = json.loads
        kwargs["metavar"] = "JSON"
    else:
        kwargs["type"] = _scalar(hint)
    if has_default:
        kwargs["default"] = param.default
    elif not positional:
        kwargs["required"] = True
    return names, kwargs


def _scalar(hint: Any) -> Callable[[str], Any]:
    if hint in (Path, int, float, str):
        return hint
    raise TypeError(f"stage parameter type {hint!r}: expected Path, str, int, float, list, dict")


def _parameters(func: Callable[..., Any]) -> list[tuple[inspect.Parameter, Any]]:
    hints = typing.get_type_hints(func)
    return [(p, hints[p.name]) for p in inspect.signature(func).parameters.values()]


def build_parser(name: str, func: Callable[..., Any]) -> argparse.ArgumentParser:
    """The argument parser of stage ``name``, read from ``func``'s signature."""
    parser = argparse.ArgumentParser(
        prog=f"halluscope stage {name}", description=summary(func) or None
    )
    for param, hint in _parameters(func):
        names, kwargs = _argument(param, hint)
        parser.add_argument(*names, **kwargs)
    return parser


def call(func: Callable[..., Any], args: argparse.Namespace) -> Any:
    """``func`` called with the parsed ``args``: the settings read back into their class, the
    JSON of a ``dict`` parameter converted by its annotation."""
    from halluscope.settings import convert_value

    values = {}
    for param, hint in _parameters(func):
        value = getattr(args, param.name)
        if settings := _settings_class(hint):
            value = settings.from_json(value)
        elif typing.get_origin(_optional(hint)) is dict and value is not None:
            value = convert_value(_optional(hint), value, f"--{param.name.replace('_', '-')}")
        values[param.name] = value
    positional = [values.pop(p.name) for p, _ in _parameters(func) if p.kind is p.POSITIONAL_ONLY]
    return func(*positional, **values)


def paired(**columns: list[Any]) -> list[tuple[Any, ...]]:
    """The values of several list flags zipped by position (one tuple per entry).

    Why: a job that runs a stage for several models (instructions, figures) loads its heavy
    parts once; the i-th value of each flag belongs to the i-th entry, so the counts must agree.
    """
    flags = [f"--{name.replace('_', '-')}" for name in columns]
    if len({len(values) for values in columns.values()}) > 1:
        counts = ", ".join(
            f"{flag} {len(values)}" for flag, values in zip(flags, columns.values(), strict=True)
        )
        raise InputError(
            f"{', '.join(flags)} take as many values each, paired by position (one per entry); "
            f"got {counts}"
        )
    return list(zip(*columns.values(), strict=True))


def run(argv: list[str]) -> int:
    """``halluscope stage NAME [STEP] ARGS``: stage ``NAME`` (or ``NAME-STEP``: ``oracle pool``
    is ``oracle-pool``) with its arguments; 2 on bad input, with one line naming it."""
    from halluscope.io import input_error_exit

    if not argv or argv[0] in ("-h", "--help"):
        print(stage_help())
        return 0 if argv else 2
    found = stage_names()
    name, rest = argv[0], argv[1:]
    if rest and not rest[0].startswith("-") and f"{name}-{rest[0]}" in found:
        name, rest = f"{name}-{rest[0]}", rest[1:]
    if name not in found:
        print(f"halluscope stage: error: unknown stage {name!r}; stages: " + ", ".join(found),
              file=sys.stderr)  # fmt: skip
        return 2
    func = load(name)
    args = build_parser(name, func).parse_args(rest)
    try:
        result = call(func, args)
    except IsADirectoryError as err:
        return input_error_exit(f"halluscope stage {name}", _directory_error(args, err))
    except (InputError, ValueError, KeyError, FileNotFoundError, RuntimeError, OSError) as err:
        return input_error_exit(f"halluscope stage {name}", err)
    if isinstance(result, dict):
        print(json.dumps(result, sort_keys=True), file=sys.stderr)
    return 0


def _directory_error(args: argparse.Namespace, err: IsADirectoryError) -> InputError:
    """``--flag: PATH: is a directory; expected a file``, naming the flag given the folder."""
    filename = str(err.filename)
    for dest, value in vars(args).items():
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, Path) and str(v) == filename for v in values):
            return InputError(f"--{dest.replace('_', '-')}: {filename}: is a directory; "
                              "expected a file")  # fmt: skip
    return InputError(f"{filename}: is a directory; expected a file")
