"""The ``halluscope`` command: hand-check tools for users, and ``halluscope stage NAME``, the one
entry point of every pipeline stage (the same in Snakemake rules, DVC stages and tests).

Every error caused by bad input is printed as one clear line (file, line or key, and what was
expected) with exit status 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from halluscope.hand_check import check_input_files, check_out_not_input
from halluscope.io import InputError, input_error_exit


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="halluscope",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="pipeline stages (run by the rules): halluscope stage NAME --help; "
        "halluscope stage --help lists them",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_command_modules(sub)
    return parser


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    """The sub-command action of the ``halluscope`` parser (its ``choices``: name -> parser)."""
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def _add_command_modules(sub) -> None:
    """Subcommands contributed by ``halluscope.commands.*`` modules (``_``-prefixed ones are
    shared helpers, not commands; see that package) and by the packaged benchmarks' ``check``
    modules (their hand-checks, :mod:`halluscope.benchmarks`)."""
    import importlib
    import pkgutil

    import halluscope.commands as commands
    from halluscope.benchmarks import import_plugins

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"halluscope.commands.{info.name}").add_parser(sub)
    for module in import_plugins("check"):
        module.add_parser(sub)


def dispatch(args: argparse.Namespace) -> None:
    """Run the handler the subcommand registered (``func``)."""
    args.func(args)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["stage"]:
        from halluscope import stage_command

        return stage_command.run(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_input_files(args)
        check_out_not_input(args, _subcommands(parser).choices[args.command]._actions)
        dispatch(args)
    except IsADirectoryError as err:
        return input_error_exit(_prog(args), InputError(_directory_message(args, err)))
    except (InputError, ValueError, KeyError, FileNotFoundError, RuntimeError, OSError) as err:
        return input_error_exit(_prog(args), err)
    return 0


def _prog(args: argparse.Namespace) -> str:
    return f"halluscope {args.command}"


def _directory_message(args: argparse.Namespace, err: IsADirectoryError) -> str:
    """``--flag: PATH: is a directory; expected a file``, naming the flag (or positional argument)
    whose value, or one of whose values, is the folder a reader was given."""
    filename = str(err.filename)
    sub = _subcommands(build_parser())
    for action in sub.choices[args.command]._actions:
        value = getattr(args, action.dest, None)
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, Path) and str(v) == filename for v in values):
            flag = action.option_strings[-1] if action.option_strings else action.dest.upper()
            return f"{flag}: {filename}: is a directory; expected a file"
    return f"{filename}: is a directory; expected a file"


if __name__ == "__main__":
    sys.exit(main())
