"""What every hand-check command shares: its parser and help epilog, input checks, one-line
summary and warnings on stderr, and its JSON result.

The hand-check commands are ``halluscope.commands.*`` and each benchmark's ``check.py``.
Pipeline stages need none of this: their command line is their function's signature
(:mod:`halluscope.stage_command`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from halluscope.io import InputError


def help_epilog(formats: Sequence[str], example: Sequence[str]) -> str:
    """A hand-check command's ``--help`` epilog: its input formats (one line each), an example."""
    return "\n".join(("input formats (one line each):", *formats, "", "example:", *example))


def add_command(
    subparsers: Any,
    name: str,
    run: Callable[[argparse.Namespace], None],
    *,
    help_text: str,
    description: str,
    formats: Sequence[str],
    example: Sequence[str],
    inputs: Mapping[str, str] | None = None,
    optional_inputs: Sequence[str] = (),
) -> argparse.ArgumentParser:
    """Add hand-check command ``name``, run by ``run``; return its parser for its other flags.

    Why one helper: every hand-check command has the same ``--help`` layout (``help_text`` in
    ``halluscope --help``, ``description``, then the unwrapped :func:`help_epilog`), and names
    each input file once. ``inputs`` (``{flag: help}``) are its required input files, added
    first as ``type=Path`` flags; ``optional_inputs`` are the input-file flags the caller adds.
    Both are checked before ``run`` (:func:`check_input_files`).
    """
    parser = subparsers.add_parser(
        name,
        help=help_text,
        description=description,
        epilog=help_epilog(formats, example),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    inputs = inputs or {}
    for flag, text in inputs.items():
        parser.add_argument(flag, type=Path, required=True, help=text)
    parser.set_defaults(func=run, input_flags=(*inputs, *optional_inputs))
    return parser


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
