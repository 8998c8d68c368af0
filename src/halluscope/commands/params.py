"""``halluscope check-params``: params.yaml and ``--configfile`` overlays checked before a run.

Why: Snakemake parses ``--configfile`` files itself, before any workflow code runs, and its
message for malformed YAML names neither the line nor the column. This command gives
``FILE:LINE:COLUMN`` for a syntax error and the offending key for a schema error, for the same
merge Snakemake makes (each overlay over params.yaml, nested keys merged).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from halluscope.hand_check import help_epilog

FORMATS = (
    "  OVERLAY     YAML mapping merged over --params key by key, as `snakemake --configfile` "
    "merges it (e.g. config/profiles/pope-captions.yaml)",
)


def add_parser(sub) -> None:
    parser = sub.add_parser(
        "check-params",
        help="check params.yaml and --configfile overlays (YAML syntax with line and column, "
        "schema, references) before a run",
        description=__doc__.split("\n\n")[0],
        epilog=help_epilog(
            FORMATS,
            ("  halluscope check-params config/profiles/pope-captions.yaml my-overlay.yaml",),
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("overlays", metavar="OVERLAY", type=Path, nargs="*")
    parser.add_argument("--params", type=Path, default=Path("params.yaml"))
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from halluscope.config import load_with_overlays

    config = load_with_overlays(args.params, args.overlays)
    files = " + ".join(map(str, [args.params, *args.overlays]))
    print(f"{files}: valid (profile {config.get('profile', 'demo')!r})")
