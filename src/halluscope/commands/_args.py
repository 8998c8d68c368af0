"""Declarative argparse helpers shared by ``halluscope.cli`` and the stage command modules.

Why one module: every stage subcommand is a list of ``(flag, kind)`` pairs of the same few kinds
(its settings, a path, input files, JSON of paths), and every model-answering stage takes the
same settings, items, cache and output flags. Not a command module itself: the leading underscore
keeps it out of the discovery in :func:`halluscope.cli._add_command_modules`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from halluscope.io import InputError

PATH_FLAG = {"type": Path, "required": True}
JSON_FLAG = {"type": json.loads, "required": True}
FILES = {"type": Path, "nargs": "+"}
PATHS = {"type": Path, "nargs": "+", "required": True}
"""One path or more per flag, paired by position with the command's other PATHS flags
(:func:`paired`): one job runs a stage for every model (or instruction, figure), in one process."""
SETTINGS = (
    "--settings",
    {
        "required": True,
        "metavar": "JSON",
        "help": "the stage's settings (built in the rule by <Settings>.from_config), as JSON",
    },
)
"""The one params value of a stage (:class:`halluscope.settings.StageSettings`): every other flag
of a stage is an input, output or log path."""

ANSWER_ARGS: tuple[tuple[str, dict], ...] = (
    SETTINGS,
    ("--items", PATH_FLAG),
    ("--cache", PATH_FLAG),
    ("--out", PATH_FLAG),
)
"""The flags of every ``stage-*-answers`` command but its questions file: the settings
(:class:`~halluscope.stages.answering.AnswerSettings`), the items, the response cache, the
output."""


def add(
    sub: Any,
    name: str,
    help_text: str,
    func: Callable[[argparse.Namespace], None],
    *args: tuple[str, dict],
) -> None:
    """Add subcommand ``name`` with the ``(flag, kwargs)`` arguments; ``func`` handles it.
    ``help_text`` is its one-line description (``halluscope stage --help`` lists it)."""
    parser = sub.add_parser(name, help=help_text, description=help_text)
    for flag, kwargs in args:
        parser.add_argument(flag, **kwargs)
    parser.set_defaults(func=func)


def answer_settings(args: argparse.Namespace, settings: type | None = None) -> Any:
    """The answers stage's ``--settings`` (``settings``: an
    :class:`~halluscope.stages.answering.AnswerSettings` class, that class by default) with the
    response cache of ``--cache``."""
    import dataclasses

    from halluscope.stages.answering import AnswerSettings

    value = (settings or AnswerSettings).from_json(args.settings)
    return dataclasses.replace(value, cache_dir=args.cache)


def answer_inputs(args: argparse.Namespace, questions: Path, settings: type | None = None) -> tuple:
    """The leading arguments of every ``halluscope.stages.<benchmark>.answers``: the items, the
    questions file (``--questions`` or ``--prompts``) and the :func:`answer_settings`."""
    return args.items, questions, answer_settings(args, settings)


def paired(args: argparse.Namespace, *flags: str) -> list[tuple[Any, ...]]:
    """The values of the multi-value ``flags`` zipped by position (one tuple per entry).

    Why: a job that runs a stage for several models (instructions, figures) loads its heavy
    parts once; the i-th value of each flag belongs to the i-th entry, so the counts must agree.
    """
    lists = [getattr(args, flag.lstrip("-").replace("-", "_")) for flag in flags]
    if len({len(paths) for paths in lists}) > 1:
        counts = ", ".join(f"{flag} {len(paths)}" for flag, paths in zip(flags, lists, strict=True))
        raise InputError(
            f"{', '.join(flags)} take as many values each, paired by position (one per entry); "
            f"got {counts}"
        )
    return list(zip(*lists, strict=True))


def help_epilog(formats: Sequence[str], example: Sequence[str]) -> str:
    """A hand-check command's ``--help`` epilog: its input formats (one line each), an example."""
    return "\n".join(("input formats (one line each):", *formats, "", "example:", *example))


def check_input_files(args: argparse.Namespace) -> None:
    """Refuse a missing input file or a folder given as one, naming the flag and the path.

    Why up front: a folder otherwise fails deep in a reader as a bare ``[Errno 21]`` naming
    neither the flag nor what was expected. The flags are the ``input_flags`` a command
    declares with ``set_defaults`` (a hand-check command's file inputs).
    """
    for flag in getattr(args, "input_flags", ()):
        value = getattr(args, flag.lstrip("-").replace("-", "_"), None)
        for path in value if isinstance(value, list) else [value]:
            if path is None:
                continue
            if Path(path).is_dir():
                raise InputError(f"{flag}: {path}: is a directory; expected a file")
            if not Path(path).exists():
                raise InputError(f"{flag}: {path}: file not found")


def check_out_not_input(args: argparse.Namespace, actions: Sequence[argparse.Action]) -> None:
    """Refuse an output flag (``--out``, ``--out-*``) that names one of the command's inputs,
    naming both flags and paths.

    Why here, for every hand-check command: the atomic writer would replace the input with the
    result (``halluscope chair --captions c.jsonl --out c.jsonl`` loses the captions). Inputs are
    the command's other path arguments (``type=Path``) and any other argument whose value names
    an existing file (``halluscope objects --lexicon FILE``); two paths are the same file when
    they resolve to it (``./c.jsonl``, a symlink or a hard link to it).
    """
    import os

    def values(action: argparse.Action) -> list[Any]:
        value = getattr(args, action.dest, None)
        return list(value) if isinstance(value, list | tuple) else [value]

    def flag(action: argparse.Action) -> str:
        return action.option_strings[-1] if action.option_strings else action.dest.upper()

    outputs = [a for a in actions if a.dest == "out" or a.dest.startswith("out_")]
    inputs = [a for a in actions if a not in outputs and a.dest != "help"]
    for out_action in outputs:
        for out in values(out_action):
            if out is None or not Path(out).exists():
                continue
            for action in inputs:
                for path in values(action):
                    if not isinstance(path, str | Path) or (
                        action.type is not Path and not Path(path).is_file()
                    ):
                        continue
                    try:
                        same = os.path.samefile(out, path)
                    except OSError:
                        continue
                    if same:
                        raise InputError(
                            f"{flag(out_action)} {out} is the input {flag(action)} {path}: "
                            f"refusing to overwrite an input; give {flag(out_action)} another file"
                        )


def report(command: str, text: str, out: Path | None = None) -> None:
    """A hand-check command's one-line summary of its result on stderr (``-> OUT`` when it wrote
    a file): stdout stays free for what a shell captures."""
    import sys

    written = f" -> {out}" if out is not None else ""
    print(f"halluscope {command}: {text}{written}", file=sys.stderr)


def warn(command: str, text: str) -> None:
    """One warning line on stderr: the input is legal but the result is degenerate."""
    import sys

    print(f"halluscope {command}: warning: {text}", file=sys.stderr)


def score_text(value: float | None, digits: int = 3) -> str:
    """A score as a summary line shows it (``n/a`` for an undefined one)."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def write_result(path: Path, document: Any) -> None:
    """A hand-check command's JSON output (:func:`~halluscope.io.write_json`), never with a bare
    ``NaN`` or ``Infinity`` (not JSON): such a value is an error naming the file, not written."""
    from halluscope.io import write_json

    try:
        write_json(path, document, allow_nan=False)
    except ValueError as err:
        if isinstance(err, InputError):
            raise
        raise InputError(f"{path}: not written: the result holds NaN or infinity ({err})") from None


def no_records(flag: str, path: Path, what: str, expected: str) -> InputError:
    """The error for an input file without a single ``what`` (e.g. ``caption record``): named
    as empty, not as the first check the empty input happens to fail."""
    data = Path(path).read_bytes()
    reason = ""
    if not data.strip():
        reason = " (only blank lines)" if data else " (the file is empty)"
    return InputError(f"{flag}: {path}: no {what}{reason}; expected {expected}")
