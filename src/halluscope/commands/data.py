"""``halluscope fetch`` and ``halluscope coco-gt``: raw inputs and the MSCOCO CHAIR ground truth.

``fetch`` prints one verified local path per requested file on stdout (progress and notes go to
stderr), so rules and shells can use ``$(halluscope fetch chair/synonyms.txt)``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from halluscope.hand_check import add_command, report, warn
from halluscope.io import InputError

FETCH_FORMATS = (
    "  FILE        a registered path relative to the mirror, e.g. chair/synonyms.txt (halluscope "
    "fetch --list shows them), or 'all'",
    "  --mirror    a folder with the registered files at the same relative paths (default "
    "../shared/data or $HALLUSCOPE_DATA_MIRROR)",
    '  --lock      JSON checksum lock file {"files": {path: {"size", "md5", "sha256", "url"}}, '
    '"about", "version"} (default data/checksums.lock.json or $HALLUSCOPE_CHECKSUM_LOCK)',
    "  stdout      one verified local path per FILE, in the order given",
)
"""``halluscope fetch`` input and output formats, one ``--help`` line each."""

COCO_GT_FORMATS = (
    '  --instances MSCOCO instances_*.json ({"images", "annotations": [{"image_id", '
    '"category_id"}], "categories": [{"id", "name"}]})',
    '  --captions  MSCOCO captions_*.json ({"annotations": [{"image_id", "caption"}]})',
    "  --zip       annotations_trainval2014.zip (its train and val 2014 instances and captions "
    "are read, instead of --instances / --captions)",
    "  --synonyms  CHAIR synonyms.txt: one line per MSCOCO class, entries separated by "
    '", ", the class name first (optional; default: halluscope\'s own table)',
    '  --out       JSON written: {"imid_to_objects": {image_id: [class names]}, "description", '
    '"inputs", "synonyms", "variant"} (the --gt of halluscope chair)',
)
"""``halluscope coco-gt`` input and output formats, one ``--help`` line each."""


def add_parser(sub) -> None:
    fetch = add_command(
        sub,
        "fetch",
        run_fetch,
        help_text="verified local path of raw input files (mirror, cache or download)",
        description=(
            "Resolve registered raw inputs: the local mirror (default ../shared/data), else the "
            "download cache, else a resumable, checksum-verified download. Prints one path per "
            "file. FILE is a path relative to the mirror (see --list) or 'all'."
        ),
        formats=FETCH_FORMATS,
        example=("  halluscope fetch --no-download chair/synonyms.txt",),
    )
    fetch.add_argument("files", metavar="FILE", nargs="*", help="relative path, or 'all'")
    fetch.add_argument("--mirror", type=Path, default=None, help="mirror folder (same layout)")
    fetch.add_argument("--no-mirror", action="store_true", help="ignore the default mirror")
    fetch.add_argument("--cache", type=Path, default=None, help="download cache folder")
    fetch.add_argument("--no-download", action="store_true", help="never use the network")
    fetch.add_argument(
        "--lock",
        type=Path,
        default=None,
        help="checksum lock file (default data/checksums.lock.json)",
    )
    fetch.add_argument("--quiet", action="store_true", help="no progress bar")
    fetch.add_argument("--list", action="store_true", help="list the registered files and exit")

    gt = add_command(
        sub,
        "coco-gt",
        run_coco_gt,
        help_text="CHAIR ground truth per MSCOCO image (instances united with caption objects)",
        description="CHAIR ground truth per MSCOCO image: the instance categories united with "
        "the objects parsed from the human captions, mapped to the 80 class names.",
        formats=COCO_GT_FORMATS,
        example=(
            "  halluscope coco-gt --zip annotations_trainval2014.zip --variant pattern "
            "--out chair_gt.json",
        ),
        optional_inputs=("--instances", "--captions", "--zip", "--synonyms"),
    )
    gt.add_argument(
        "--instances", type=Path, nargs="+", action="extend", default=[], help="instances_*.json"
    )
    gt.add_argument(
        "--captions", type=Path, nargs="+", action="extend", default=[], help="captions_*.json"
    )
    gt.add_argument(
        "--zip",
        type=Path,
        default=None,
        help="annotations_trainval2014.zip: read train+val instances and captions from it",
    )
    gt.add_argument("--variant", choices=("pattern", "lemmatizer"), required=True)
    gt.add_argument(
        "--synonyms", type=Path, default=None, help="CHAIR synonyms.txt (default: builtin table)"
    )
    gt.add_argument("--out", type=Path, required=True)


def run_fetch(args: argparse.Namespace) -> None:
    from halluscope.data.fetch import resolve_many
    from halluscope.data.sources import SOURCES

    if args.list:
        for source in SOURCES.values():
            size = "?" if source.size is None else str(source.size)
            print(f"{source.path}\t{size}\t{source.url or '(mirror only)'}")
        return
    if not args.files:
        raise InputError("fetch: name at least one FILE (or 'all'; --list shows them)")
    if args.lock is not None:
        check_lock(args.lock)
    files = list(SOURCES) if "all" in args.files else list(dict.fromkeys(args.files))
    paths = resolve_many(
        files,
        args.mirror,
        args.cache,
        allow_download=not args.no_download,
        lock_path=args.lock,
        use_default_mirror=not args.no_mirror,
        progress=not args.quiet,
    )
    for path in paths:
        print(path)
    report("fetch", f"{len(paths)} file(s) verified against their checksums (paths on stdout)")


def check_lock(path: Path) -> None:
    """An explicit ``--lock`` must be a readable checksum lock file: a missing or malformed one
    is an error naming it, never skipped (a typo would verify nothing, or start a new lock)."""
    from halluscope.data.fetch import ChecksumLock, DataError

    hint = "leave --lock out to use data/checksums.lock.json"
    if path.is_dir():
        raise InputError(f"--lock: {path}: is a directory; expected a checksum lock file ({hint})")
    if not path.exists():
        raise InputError(
            f"--lock: {path}: file not found; expected an existing checksum lock file ({hint}, "
            'or start one containing {"files": {}})'
        )
    lock = ChecksumLock(path)
    try:
        for relative_path in lock.entries():
            lock.get(relative_path)  # every entry has its size, md5 and sha256
    except DataError as err:
        raise InputError(f"--lock: {err}") from None


def run_coco_gt(args: argparse.Namespace) -> None:
    from halluscope.data.coco import (
        COCO_ZIP_CAPTIONS,
        COCO_ZIP_INSTANCES,
        build_chair_gt_document,
        write_gt,
    )

    instances: list = list(args.instances)
    captions: list = list(args.captions)
    if args.zip is not None:
        instances += [(args.zip, member) for member in COCO_ZIP_INSTANCES]
        captions += [(args.zip, member) for member in COCO_ZIP_CAPTIONS]
    if not instances or not captions:
        raise InputError("coco-gt: give --instances and --captions files, or --zip")
    document = build_chair_gt_document(instances, captions, args.variant, args.synonyms)
    write_gt(args.out, document)
    images = document["imid_to_objects"]
    objects = sum(len(names) for names in images.values())
    if not objects:
        warn("coco-gt", f"{len(images)} images and not one object: the ground truth is empty")
    mean = f"{objects / len(images):.2f}" if images else "n/a"
    report(
        "coco-gt",
        f"{len(images)} images, {objects} objects ({mean} per image), variant {args.variant}",
        args.out,
    )
