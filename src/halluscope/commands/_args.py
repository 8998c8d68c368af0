"""Declarative argparse helpers shared by ``halluscope.cli`` and the stage command modules.

Why one module: every stage subcommand is a list of ``(flag, kind)`` pairs of the same few kinds
(a path, a string, JSON, an integer, input files), and every model-answering stage takes the
same model, generation and cache flags. Not a command module itself: the leading underscore
keeps it out of the discovery in :func:`halluscope.cli._add_command_modules`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from halluscope.io import InputError

P = {"type": Path, "required": True}
S = {"required": True}
J = {"type": json.loads, "required": True}
I = {"type": int, "required": True}  # noqa: E741
FILES = {"type": Path, "nargs": "+"}
PATHS = {"type": Path, "nargs": "+", "required": True}
"""One path or more per flag, paired by position with the command's other PATHS flags
(:func:`paired`): one job runs a stage for every model (or instruction, figure), in one process."""
DATASET = {"default": "demo", "help": "the dataset the table's captions describe"}

ANSWER_ARGS: tuple[tuple[str, dict], ...] = (
    ("--items", P),
    ("--model-id", S),
    ("--model", J),
    ("--generation", J),
    ("--template-version", S),
    ("--cache-mode", S),
    ("--cache", P),
    ("--out", P),
)
"""The flags of every ``stage-*-answers`` command but its questions file (and its own extras)."""


def add(
    sub: Any,
    name: str,
    help_text: str,
    func: Callable[[argparse.Namespace], None],
    *args: tuple[str, dict],
) -> None:
    """Add subcommand ``name`` with the ``(flag, kwargs)`` arguments; ``func`` handles it."""
    parser = sub.add_parser(name, help=help_text)
    for flag, kwargs in args:
        parser.add_argument(flag, **kwargs)
    parser.set_defaults(func=func)


def answer_settings(args: argparse.Namespace) -> Any:
    """The typed :class:`~halluscope.stages.answering.AnswerSettings` (model, generation params,
    response cache) built from the shared flags of the model-calling stages."""
    from halluscope.stages.answering import AnswerSettings

    return AnswerSettings(
        args.model_id, args.model, args.generation, args.template_version, args.cache,
        args.cache_mode,
    )  # fmt: skip


def answer_inputs(args: argparse.Namespace, questions: Path) -> tuple:
    """The leading arguments of every ``halluscope.stages.<benchmark>.answers``: the items, the
    questions file (``--questions`` or ``--prompts``) and the :func:`answer_settings`."""
    return args.items, questions, answer_settings(args)


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
