"""``halluscope check-params``: params.yaml and ``--configfile`` overlays checked before a run.

Why: Snakemake parses ``--configfile`` files itself, before any workflow code runs, and its
message for malformed YAML names neither the line nor the column. This command gives
``FILE:LINE:COLUMN`` for a syntax error and the offending key for a schema error, for the same
merge Snakemake makes (each overlay over params.yaml, nested keys merged).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

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
    check_inputs(config, files)
    print(f"{files}: valid (profile {config.get('profile', 'demo')!r})")


#: The datasets whose items are MSCOCO images named by ``data.image_list`` (CHAIR's GT).
COCO_DATASETS = ("pope-captions", "coco")


def check_inputs(config: dict[str, Any], source: str) -> None:
    """The files the first jobs read, checked before any job: the ``data.images`` folder, and
    for the MSCOCO datasets every image id of the image list and of the replayed caption files
    has ground truth (else the data or score job fails after others ran).

    Not in the Snakefile's parse: a profile whose images live on another machine (``paper``)
    must still plan there; this command is the check before a run here.
    """
    from halluscope.config import ConfigError

    data = config["data"]
    images = data.get("images")
    if images and not Path(images).is_dir():
        raise ConfigError(
            f"{source}: data.images: folder {images} not found; expected the folder of the "
            "dataset's images (or remove the key to run without images)"
        )
    if data["dataset"] in COCO_DATASETS:
        check_coco_ids(config, source)


def check_coco_ids(config: dict[str, Any], source: str) -> None:
    """Every image id of ``data.image_list`` and of each replay model's caption files (the
    user's own files: registered ones are the paper's, pinned by checksum) is in the MSCOCO
    ground truth the data stage reads."""
    from halluscope.data.sources import SOURCES

    data = config["data"]
    # file -> the records' answer field (None: the default ones)
    files: dict[str, str | None] = {
        data.get("image_list", "pope/captions/Instruction1_llava.json"): None
    }
    for model in config["generate"]["models"]:
        spec = config["models"][model]
        # a recording keyed by key_fields (HallusionBench's five ids) names no image ids
        if spec.get("backend") == "replay" and not spec.get("key_fields"):
            paths = [spec["path"]] if spec.get("path") else list((spec.get("paths") or {}).values())
            files.update((path, spec.get("answer_field")) for path in paths)
    from halluscope.models.replay import ReplayBackend

    own = {
        Path(f): ReplayBackend(Path(f), answer_field=field).image_ids
        for f, field in files.items()
        if f not in SOURCES
    }
    check_ids_have_gt(own, data.get("gt_variant", "pattern"), source)


def check_ids_have_gt(ids_by_file: Mapping[Path, Sequence[str]], variant: str, source: str) -> None:
    """Raise :class:`~halluscope.config.ConfigError` naming the first caption file with an image
    id outside CHAIR's MSCOCO ground truth (skipped when that file is not on this machine yet:
    the data job fetches it and checks again). The ids are the caller's, already read."""
    from halluscope.config import ConfigError
    from halluscope.data.coco import load_gt
    from halluscope.data.fetch import DataError, resolve

    if not ids_by_file:
        return
    try:
        gt = load_gt(resolve(f"coco/chair_gt_objects_{variant}.json", allow_download=False))
    except DataError:
        return
    for path, ids in ids_by_file.items():
        missing = [i for i in ids if i not in gt]
        if missing:
            raise ConfigError(
                f"{source}: {path}: {len(missing)} image ids have no MSCOCO ground truth "
                f"(first: {missing[0]}); expected MSCOCO 2014 val image ids"
            )
