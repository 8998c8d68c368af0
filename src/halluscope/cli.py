"""The ``halluscope`` command: stage entry points for the Snakemake rules and hand-check tools.

Every error caused by bad input is printed as one clear line (file, line or key, and what was
expected) with exit status 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from halluscope.io import InputError


def _json(text: str):
    return json.loads(text)


def _add(sub, name: str, help_text: str, *args: tuple[str, dict]) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help_text)
    for flag, kwargs in args:
        parser.add_argument(flag, **kwargs)
    return parser


P = {"type": Path, "required": True}
S = {"required": True}
J = {"type": _json, "required": True}
I = {"type": int, "required": True}  # noqa: E741


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="halluscope", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    _add(
        sub,
        "caos",
        "CAOS for hand-made object lists (JSONL) and a word2vec text file",
        ("--objects", P),
        ("--vectors", P),
        ("--frequent", S),
        ("--k", I),
        ("--out", P),
        ("--k-max", {"type": int, "default": None}),
    )
    _add(
        sub,
        "stage-data",
        "data stage",
        ("--dataset", S),
        ("--annotations", P),
        ("--items", P),
        ("--images", P),
        ("--options", {"type": _json, "default": {}}),
    )
    _add(
        sub,
        "stage-generate",
        "generate stage",
        ("--items", P),
        ("--model-id", S),
        ("--model", J),
        ("--instruction-id", S),
        ("--instruction", J),
        ("--generation", J),
        ("--template-version", S),
        ("--cache-mode", S),
        ("--cache", P),
        ("--out", P),
    )
    _add(
        sub,
        "stage-extract",
        "extract stage",
        ("--responses", P),
        ("--synonyms", S),
        ("--variant", S),
        ("--lexicon", S),
        ("--out", P),
    )
    _add(
        sub,
        "stage-oracle",
        "oracle stage",
        ("--objects", P),
        ("--items", P),
        ("--method", S),
        ("--out", P),
    )
    _add(
        sub,
        "stage-embed",
        "embed stage",
        ("--embedder-id", S),
        ("--spec", J),
        ("--frequent", J),
        ("--items", P),
        ("--out", P),
        ("--missing", P),
        ("objects", {"type": Path, "nargs": "*"}),
    )
    _add(
        sub,
        "stage-score",
        "score stage",
        ("--objects", P),
        ("--oracle", P),
        ("--items", P),
        ("--vectors", P),
        ("--k", I),
        ("--k-max", I),
        ("--frequent", J),
        ("--model-id", S),
        ("--instruction-id", S),
        ("--embedder-id", S),
        ("--out-captions", P),
        ("--out-objects", P),
    )
    _add(
        sub,
        "stage-summarize",
        "pool score files",
        ("--table1", J),
        ("--k", I),
        ("--out-summary", P),
        ("--out-objects", P),
        ("--pope", {"type": Path, "nargs": "*", "default": []}),
        ("captions", {"type": Path, "nargs": "+"}),
    )
    _add(
        sub,
        "stage-pope-questions",
        "POPE questions",
        ("--items", P),
        ("--setting", S),
        ("--n", I),
        ("--seed", I),
        ("--typo", {"action": "store_true"}),
        ("--out", P),
    )
    _add(
        sub,
        "stage-pope-answers",
        "POPE answers",
        ("--items", P),
        ("--questions", P),
        ("--model-id", S),
        ("--model", J),
        ("--generation", J),
        ("--template-version", S),
        ("--cache-mode", S),
        ("--cache", P),
        ("--out", P),
    )
    _add(
        sub,
        "stage-pope-score",
        "POPE scores",
        ("--questions", P),
        ("--answers", P),
        ("--parser", S),
        ("--out", P),
    )
    _add(
        sub,
        "stage-figure",
        "one CAOS figure",
        ("--figure", S),
        ("--summary", P),
        ("--objects", P),
        ("--dpi", I),
        ("--exclude-top", I),
        ("--frequent", J),
        ("--k", I),
        ("--table1", J),
        ("--embedders", J),
        ("--out-stem", P),
    )
    _add(
        sub,
        "stage-tables",
        "CAOS LaTeX tables",
        ("--summary", P),
        ("--decimals", I),
        ("--k", I),
        ("--models", J),
        ("--instructions", J),
        ("--embedders", J),
        ("--out-dir", P),
        ("--published", {"action": "store_true"}),
        ("--setting", {"type": _json, "default": {}}),
    )
    _add(
        sub,
        "stage-assemble",
        "assemble results/tables",
        ("--out-dir", P),
        ("tables", {"type": Path, "nargs": "+"}),
    )
    _add_command_modules(sub)
    return parser


def _add_command_modules(sub) -> None:
    """Subcommands contributed by ``halluscope.commands.*`` modules (see that package)."""
    import importlib
    import pkgutil

    import halluscope.commands as commands

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        importlib.import_module(f"halluscope.commands.{info.name}").add_parser(sub)


def _caos_command(args: argparse.Namespace) -> None:
    """``halluscope caos``: CAOS on hand-written inputs, to check numbers by hand."""
    from gensim.models import KeyedVectors

    from halluscope.io import iter_jsonl, write_json
    from halluscope.metrics.caos import CAOSScorer, CaptionObject, VectorTable, aggregate

    try:
        kv = KeyedVectors.load_word2vec_format(str(args.vectors), binary=False)
    except (ValueError, UnicodeDecodeError) as err:
        raise InputError(f"{args.vectors}: not a word2vec text file ({err})") from None
    import numpy as np

    if not np.all(np.isfinite(kv.vectors)):
        row = int(np.where(~np.isfinite(kv.vectors).all(axis=1))[0][0])
        raise InputError(
            f"{args.vectors}: the vector of {kv.index_to_key[row]!r} contains NaN/inf; "
            "expected finite numbers"
        )
    frequent = [w.strip() for w in args.frequent.split(",") if w.strip()]
    k_max = args.k_max or len(frequent)
    scorer = CAOSScorer(VectorTable(list(kv.index_to_key), kv.vectors), frequent, args.k, k_max)
    captions = []
    for number, rec in enumerate(iter_jsonl(args.objects), start=1):
        try:
            objs = [
                CaptionObject(o["name"], bool(o["in_domain"]), o["present"], pos)
                for pos, o in enumerate(rec["objects"])
            ]
            result = scorer.score_caption(rec["gt"], objs)
        except (KeyError, TypeError) as err:
            raise InputError(
                f"{args.objects}:{number}: expected {{'id', 'gt': [names], 'objects': "
                f"[{{'name', 'in_domain', 'present'}}]}}; problem with {err}"
            ) from None
        captions.append({"id": rec.get("id"), **result.scores, "missing": result.missing})
    write_json(
        args.out,
        {"overall": aggregate(captions), "captions": captions, "k": args.k, "frequent": frequent},
    )


def dispatch(args: argparse.Namespace) -> None:
    cmd = args.command
    if getattr(args, "func", None) is not None:
        args.func(args)
    elif cmd == "caos":
        _caos_command(args)
    elif cmd == "stage-data":
        from halluscope.stages import data

        data.run(args.dataset, args.annotations, args.items, args.images, args.options)
    elif cmd == "stage-generate":
        from halluscope.stages import generate

        stats = generate.run(
            args.items,
            args.model_id,
            args.model,
            args.instruction_id,
            args.instruction,
            args.generation,
            args.template_version,
            args.cache,
            args.cache_mode,
            args.out,
        )
        print(json.dumps(stats, sort_keys=True), file=sys.stderr)
    elif cmd == "stage-extract":
        from halluscope.stages import extract

        extract.run(args.responses, args.synonyms, args.variant, args.lexicon, args.out)
    elif cmd == "stage-oracle":
        from halluscope.stages import oracle

        oracle.run(args.objects, args.items, args.method, args.out)
    elif cmd == "stage-embed":
        from halluscope.stages import embed

        embed.run(
            args.embedder_id,
            args.spec,
            args.frequent,
            args.items,
            args.objects,
            args.out,
            args.missing,
        )
    elif cmd == "stage-score":
        from halluscope.stages import score

        score.run(
            args.objects,
            args.oracle,
            args.items,
            args.vectors,
            args.k,
            args.k_max,
            args.frequent,
            args.model_id,
            args.instruction_id,
            args.embedder_id,
            args.out_captions,
            args.out_objects,
        )
    elif cmd == "stage-summarize":
        from halluscope.stages import summarize

        summarize.run(args.captions, args.table1, args.out_summary, args.out_objects, args.pope)
    elif cmd.startswith("stage-pope-"):
        from halluscope.stages import pope

        if cmd == "stage-pope-questions":
            pope.questions(args.items, args.setting, args.n, args.seed, args.typo, args.out)
        elif cmd == "stage-pope-answers":
            pope.answers(
                args.items,
                args.questions,
                args.model_id,
                args.model,
                args.generation,
                args.template_version,
                args.cache,
                args.cache_mode,
                args.out,
            )
        else:
            pope.score(args.questions, args.answers, args.parser, args.out)
    elif cmd in ("stage-figure", "stage-tables", "stage-assemble"):
        from halluscope.stages import report

        getattr(report, cmd.removeprefix("stage-"))(args)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        dispatch(args)
    except (InputError, ValueError, KeyError, FileNotFoundError, RuntimeError, OSError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"halluscope {args.command}: error: {message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
