"""The ``halluscope`` command: hand-check tools for users, and ``halluscope stage NAME``, the one
entry point of every pipeline stage (the same in Snakemake rules, DVC stages and tests).

Every error caused by bad input is printed as one clear line (file, line or key, and what was
expected) with exit status 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from halluscope.commands._args import (
    FILES,
    JSON_FLAG,
    PATH_FLAG,
    SETTINGS,
    add,
    check_input_files,
    check_out_not_input,
)
from halluscope.io import InputError, input_error_exit

CACHE = ("--cache", {"type": Path, "default": None, "help": "response cache folder"})


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="halluscope",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="pipeline stages (run by the rules): halluscope stage NAME --help; "
        "halluscope stage --help lists them",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add(
        sub,
        "stage-data",
        "the items of a dataset (items.jsonl: ground-truth objects per image) and its images",
        _data,
        SETTINGS,
        ("--items", PATH_FLAG),
        ("--images", PATH_FLAG),
    )
    add(
        sub,
        "stage-generate",
        "captions of one model for one instruction",
        _generate,
        SETTINGS,
        ("--items", PATH_FLAG),
        ("--cache", PATH_FLAG),
        ("--out", PATH_FLAG),
    )
    add(
        sub,
        "stage-extract",
        "the ordered object list of each response (rule, lexicon or LLM extraction)",
        _extract,
        SETTINGS,
        ("--responses", PATH_FLAG),
        ("--out", PATH_FLAG),
        CACHE,
        ("--noun-tags", {"type": Path, "default": None, "help": "tags of stage extract nouns"}),
    )
    add(
        sub,
        "stage-extract-nouns",
        "the noun check's tags of many responses files, in one process (read by extract)",
        _extract_nouns,
        SETTINGS,
        ("--out", PATH_FLAG),
        ("responses", FILES),
    )
    add(
        sub,
        "stage-extract-report",
        "pooled extraction counts over object files",
        _extract_report,
        ("--out", PATH_FLAG),
        ("objects", FILES),
    )
    add(
        sub,
        "stage-oracle-decide",
        "presence decisions (in the image or not) for one objects file",
        _oracle_decide,
        SETTINGS,
        ("--objects", PATH_FLAG),
        ("--items", PATH_FLAG),
        ("--out", PATH_FLAG),
        ("--accuracy", {"type": Path, "default": None}),
        CACHE,
    )
    add(
        sub,
        "stage-oracle-pool",
        "oracle accuracy over many oracle files",
        _oracle_pool,
        ("--items", PATH_FLAG),
        ("--out", PATH_FLAG),
        ("oracle_files", FILES),
    )
    add(
        sub,
        "stage-embed",
        "one vector per object name CAOS compares, for one embedder",
        _embed,
        SETTINGS,
        ("--items", PATH_FLAG),
        ("--out", PATH_FLAG),
        ("--missing", PATH_FLAG),
        ("objects", {"type": Path, "nargs": "*"}),
    )
    add(
        sub,
        "stage-metrics",
        "metrics JSON from the CSV twins, and the headline numbers (one small JSON per model)",
        _report,
        ("--out", PATH_FLAG),
        ("--headline-dir", {"type": Path, "default": None, "help": "one JSON per model"}),
        ("tables", FILES),
    )
    add(
        sub,
        "stage-paper",
        "build the reproduction report with pdflatex",
        _report,
        ("--main", PATH_FLAG),
        ("--sections", JSON_FLAG),
        ("--out-sections", PATH_FLAG),
        ("--out", PATH_FLAG),
    )
    add(
        sub,
        "stage-assemble",
        "results/tables/<profile>/: every table with its CSV twin",
        _report,
        SETTINGS,
        ("--out-dir", PATH_FLAG),
        ("--report-root", PATH_FLAG),
        ("tables", FILES),
    )
    _add_command_modules(sub)
    # `halluscope --help` lists the user commands; the stage-* parsers stay reachable through
    # `halluscope stage NAME` (argparse has no public way to hide a sub-command from the list)
    sub._choices_actions = [a for a in sub._choices_actions if not a.dest.startswith("stage-")]
    return parser


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    """The sub-command action of the ``halluscope`` parser (its ``choices``: name -> parser)."""
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def stage_names() -> list[str]:
    """Every stage reachable through ``halluscope stage NAME`` (a stage with steps, such as
    ``oracle decide`` / ``oracle pool``, is listed once per step, as ``oracle-decide``...)."""
    from halluscope import stage_command

    sub = _subcommands(build_parser())
    old = [name.removeprefix("stage-") for name in sub.choices if name.startswith("stage-")]
    return sorted({*old, *stage_command.stage_names()})


def stage_help() -> str:
    """``halluscope stage --help``: one line per stage, its name and what it makes."""
    sub = _subcommands(build_parser())
    names = stage_names()
    width = max(map(len, names))
    from halluscope import stage_command

    new = stage_command.stages()

    def text(name: str) -> str:
        if name in new:
            return stage_command.summary(new[name])
        return sub.choices[f"stage-{name}"].description or ""

    lines = [f"  {name:<{width}}  {text(name)}".rstrip() for name in names]
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


def run_stage(argv: list[str]) -> int:
    """``halluscope stage NAME [STEP] ARGS``: the ``stage-NAME`` (or ``stage-NAME-STEP``, e.g.
    ``extract report``, ``oracle pool``) sub-command, the one entry point of every stage."""
    if not argv or argv[0] in ("-h", "--help"):
        print(stage_help())
        return 0 if argv else 2
    from halluscope import stage_command

    name, rest = argv[0], argv[1:]
    names = stage_names()
    new = stage_command.stage_names()
    if name in new or (rest and f"{name}-{rest[0]}" in new):
        return stage_command.run(argv)
    if rest and not rest[0].startswith("-") and f"{name}-{rest[0]}" in names:
        name, rest = f"{name}-{rest[0]}", rest[1:]
    if name not in names:
        print(f"halluscope stage: error: unknown stage {name!r}; stages: "
              + ", ".join(stage_names()), file=sys.stderr)  # fmt: skip
        return 2
    return main([f"stage-{name}", *rest])


def _add_command_modules(sub) -> None:
    """Subcommands contributed by ``halluscope.commands.*`` modules (``_``-prefixed ones are
    shared helpers, not commands; see that package) and by the packaged benchmarks' ``commands``
    modules (:mod:`halluscope.benchmarks`)."""
    import importlib
    import pkgutil

    import halluscope.commands as commands
    from halluscope.benchmarks import import_plugins

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"halluscope.commands.{info.name}").add_parser(sub)
    for module in [*import_plugins("commands"), *import_plugins("check")]:
        module.add_parser(sub)


def _data(args: argparse.Namespace) -> None:
    from halluscope.stages import data

    data.run(data.DataSettings.from_json(args.settings), args.items, args.images)


def _generate(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos.captions import generate
    from halluscope.stages.answering import AnswerSettings

    settings = generate.GenerateSettings.from_json(args.settings)
    answer = AnswerSettings(settings.llm, args.cache)
    stats = generate.run(
        args.items, answer, settings.instruction_id, settings.instruction, args.out
    )
    print(json.dumps(stats, sort_keys=True), file=sys.stderr)


def _extract(args: argparse.Namespace) -> None:
    """The extract stage; its counts go to stderr (the rule's log)."""
    from halluscope.benchmarks.caos.captions import extract

    settings = extract.ExtractSettings.from_json(args.settings)
    stats = extract.run(settings, args.responses, args.out, args.cache, args.noun_tags)
    print(json.dumps(stats, sort_keys=True), file=sys.stderr)


def _extract_nouns(args: argparse.Namespace) -> None:
    """Tags for the extract jobs of many responses files; counts on stderr (the rule's log)."""
    from halluscope.benchmarks.caos.captions import extract

    settings = extract.NounTagSettings.from_json(args.settings)
    stats = extract.tag_nouns(settings, args.responses, args.out)
    print(json.dumps(stats, sort_keys=True), file=sys.stderr)


def _extract_report(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos.captions import extract

    extract.report(args.objects, args.out)


def _oracle_decide(args: argparse.Namespace) -> None:
    """The oracle stage; its accuracy report goes to stderr (the rule's log)."""
    from halluscope.benchmarks.caos.captions import oracle

    settings = oracle.OracleSettings.from_json(args.settings)
    report = oracle.run(settings, args.objects, args.items, args.out, args.accuracy, args.cache)
    print(json.dumps(report, sort_keys=True), file=sys.stderr)


def _oracle_pool(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos.captions import oracle

    oracle.pool(args.oracle_files, args.items, args.out)


def _embed(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos.captions import embed

    settings = embed.EmbedSettings.from_json(args.settings)
    embed.run(settings, args.items, args.objects, args.out, args.missing)


def _report(args: argparse.Namespace) -> None:
    """``stage-figure``, ``stage-tables``, ``stage-assemble``: the same-named report function."""
    from halluscope.stages import report

    getattr(report, args.command.removeprefix("stage-").replace("-", "_"))(args)


def dispatch(args: argparse.Namespace) -> None:
    """Run the handler the subcommand registered (``func``)."""
    args.func(args)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["stage"]:
        return run_stage(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_input_files(args)
        if not args.command.startswith("stage-"):
            check_out_not_input(args, _subcommands(parser).choices[args.command]._actions)
        dispatch(args)
    except IsADirectoryError as err:
        return input_error_exit(_prog(args), InputError(_directory_message(args, err)))
    except (InputError, ValueError, KeyError, FileNotFoundError, RuntimeError, OSError) as err:
        return input_error_exit(_prog(args), err)
    return 0


def _prog(args: argparse.Namespace) -> str:
    return f"halluscope {args.command.replace('stage-', 'stage ', 1)}"


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
