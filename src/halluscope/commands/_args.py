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

P = {"type": Path, "required": True}
S = {"required": True}
J = {"type": json.loads, "required": True}
I = {"type": int, "required": True}  # noqa: E741
FILES = {"type": Path, "nargs": "+"}
PATHS = {"type": Path, "nargs": "+", "required": True}  # one per entry of a multi-entry job
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


def paired(command: str, **columns: Sequence[Any]) -> list[tuple]:
    """The entries of a job that handles several of a rule's former jobs in one process: the
    values of ``columns`` (flag name -> its values) position by position. Different counts are
    a usage error naming every flag and its count (a rule or a hand-written call lost a path)."""
    counts = {name: len(values) for name, values in columns.items()}
    if len(set(counts.values())) > 1:
        listed = ", ".join(f"--{name.replace('_', '-')}: {n}" for name, n in counts.items())
        raise SystemExit(f"{command}: these flags take one value per entry, in order; got {listed}")
    return list(zip(*columns.values(), strict=True))


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


def help_epilog(formats: Sequence[str], example: Sequence[str]) -> str:
    """A hand-check command's ``--help`` epilog: its input formats (one line each), an example."""
    return "\n".join(("input formats (one line each):", *formats, "", "example:", *example))
