"""``halluscope chair``: CHAIR of a caption file against per-image ground truth.

The output names the word-normalisation variant and the synonym list used, because both change
the numbers (see ``halluscope.metrics.chair`` and ``halluscope.objects.normalize``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from halluscope.hand_check import add_command
from halluscope.hand_check_intervals import add_interval_options
from halluscope.io import InputError

if TYPE_CHECKING:
    from halluscope.metrics.intervals import IntervalSettings

FORMATS = (
    '  --captions  JSONL (or concatenated JSON objects), one per caption: {"image_id": ..., '
    '"caption": str} ("text" is read when there is no "caption"), e.g. the pipeline\'s '
    "results/responses/<profile>/<model>/<instruction>.jsonl",
    '  --gt        JSON {"imid_to_objects": {image_id: [MSCOCO class names]}} (CHAIR\'s export, '
    "or halluscope coco-gt) or a plain {image_id: [names]}; names are read as caption words "
    "(Person, people -> person), a name outside the vocabulary is an error",
    "  --synonyms  CHAIR synonyms.txt: one line per MSCOCO class, entries separated by "
    '", ", the class name first (optional; default: halluscope\'s own table)',
    '  --out       JSON written: {"overall": {"CHAIRs", "CHAIRi", "recall", "n_captions"}, '
    '"details", "variant", "synonyms", "captions": [{"image_id", "mentions", "hallucinated", '
    '"CHAIRs", "CHAIRi"}, ...], "intervals": {"overall": {"CHAIRs", "CHAIRi", "recall": {"lo", '
    '"hi", "level", "method", "unit", "n_units"}}}, "interval_settings"} (intervals: images '
    "resampled; CHAIRs Wilson, the others the cluster bootstrap; --no-intervals leaves them out)",
)
"""The input and output formats, one ``--help`` line each (long lines are not wrapped)."""


def add_parser(sub) -> None:
    parser = add_command(
        sub,
        "chair",
        run,
        help_text="CHAIR_S / CHAIR_I of captions against GT objects",
        description="CHAIR_S (share of captions with a hallucinated MSCOCO object) and CHAIR_I "
        "(share of hallucinated object mentions) of captions against per-image ground truth, "
        "with the pipeline's CHAIR-style object parser.",
        formats=FORMATS,
        example=(
            "  halluscope chair --captions results/responses/demo/sim-precise/i01.jsonl \\",
            "      --gt chair_gt.json --variant pattern --out chair.json",
        ),
        inputs={
            "--captions": "JSONL or concatenated JSON objects with image_id and caption/text",
            "--gt": '{"imid_to_objects": {...}} or a plain {image_id: [objects]} file',
        },
        optional_inputs=("--synonyms",),
    )
    parser.add_argument(
        "--synonyms",
        type=Path,
        default=None,
        help="CHAIR synonyms.txt (default: halluscope's own table)",
    )
    parser.add_argument("--variant", choices=("pattern", "lemmatizer"), default="pattern")
    parser.add_argument("--out", type=Path, required=True)
    add_interval_options(parser)


def read_captions(path: Path) -> list[tuple[str, str]]:
    """(image id, caption) pairs in input order; errors name the file and line.

    Read as the pipeline reads a caption file (:func:`halluscope.models.replay.read_recording`,
    :func:`halluscope.io.caption_text`): the same line numbers, ``caption`` before ``text``, and
    a second caption of one image refused, so that both score the same captions.
    """
    from halluscope.io import caption_text
    from halluscope.models.replay import read_recording

    out, first_line = [], {}
    for line, rec in read_recording(path):
        if not isinstance(rec, dict) or "image_id" not in rec:
            raise InputError(f"{path}:{line}: expected an object with 'image_id'")
        text = caption_text(rec)
        if not isinstance(text, str):
            raise InputError(f"{path}:{line}: expected a string 'caption' or 'text' field")
        image = str(rec["image_id"])
        if image in first_line:
            raise InputError(
                f"{path}:{line}: duplicate caption for image {image!r} (first at line "
                f"{first_line[image]}); a caption file holds one caption per image"
            )
        first_line[image] = line
        out.append((image, text))
    return out


def read_synonyms(path: Path) -> dict[str, str]:
    """:func:`~halluscope.objects.coco.load_synonyms` of ``path``; errors name the file.

    A file that is not UTF-8 is reported with its line and byte offset (the decoder's own message
    names neither the file nor the line).
    """
    from halluscope.objects.coco import load_synonyms

    try:
        return load_synonyms(path)
    except FileNotFoundError:
        raise InputError(f"{path}: synonyms file not found") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory; expected a synonyms.txt file") from None


def chair_intervals(
    captions: list[tuple[str, str]], scored: list[dict[str, Any]], settings: IntervalSettings
) -> dict[str, Any]:
    """The intervals of ``overall``'s CHAIRs, CHAIRi and recall, the image resampled (one
    caption per image): CHAIRs, a share of captions, by Wilson's interval; CHAIRi and recall,
    ratios of sums, by the cluster bootstrap (0 where nothing is mentioned, as the metric)."""
    from halluscope.hand_check_intervals import bootstrapped, proportion, share

    images = [image_id for image_id, _ in captions]
    columns = {
        key: [c[key] for c in scored]
        for key in ("n_hallucinated", "n_mentions", "n_gt_mentioned", "n_gt")
    }
    statistics = {
        "CHAIRi": share("n_hallucinated", "n_mentions"),
        "recall": share("n_gt_mentioned", "n_gt"),
    }
    return {
        "CHAIRs": proportion(images, [c["CHAIRs"] for c in scored], settings),
        **bootstrapped(images, columns, statistics, settings),
    }


def run(args: argparse.Namespace) -> None:
    from halluscope.data.coco import load_gt
    from halluscope.hand_check import no_records, report, score_text, warn, write_result
    from halluscope.hand_check_intervals import attach, bracket, interval_settings
    from halluscope.metrics.chair import chair_scores
    from halluscope.objects.parser import ObjectParser

    captions = read_captions(args.captions)
    if not captions:
        expected = 'one {"image_id", "caption"} object per line'
        raise no_records("--captions", args.captions, "caption record", expected)
    synonyms = read_synonyms(args.synonyms) if args.synonyms else None  # None: builtin table
    parser = ObjectParser(synonyms, variant=args.variant)
    gt = load_gt(args.gt, parser)  # GT names read as the captions' objects are
    missing = [image_id for image_id, _ in captions if image_id not in gt]
    if missing:
        raise InputError(
            f"{args.gt}: no ground truth for image id {missing[0]!r} "
            f"({len(missing)} captions without GT)"
        )
    result = chair_scores(((i, c, gt[i]) for i, c in captions), parser)
    overall = result["overall"]
    doc = {
        "overall": {k: overall[k] for k in ("CHAIRs", "CHAIRi", "recall", "n_captions")},
        "details": overall,
        "variant": args.variant,
        "synonyms": str(args.synonyms) if args.synonyms else "builtin (halluscope)",
        "captions": [
            {
                "image_id": image_id,
                "mentions": c["mentions"],
                "hallucinated": c["hallucinated"],
                "CHAIRs": c["CHAIRs"],
                "CHAIRi": c["CHAIRi"],
            }
            for (image_id, _), c in zip(captions, result["captions"], strict=True)
        ],
    }
    settings = interval_settings(args, "image")
    if settings is not None:
        attach(doc, {"overall": chair_intervals(captions, result["captions"], settings)}, settings)
    write_result(args.out, doc)
    if not overall["n_mentions"]:
        warn("chair", "no caption mentions an MSCOCO object: CHAIR_I is 0 by convention")
    report(
        "chair",
        f"{len(captions)} captions, CHAIR_S {score_text(overall['CHAIRs'])}"
        f"{bracket(doc.get('intervals', {}).get('overall', {}).get('CHAIRs'))}, "
        f"CHAIR_I {score_text(overall['CHAIRi'])}",
        args.out,
    )
