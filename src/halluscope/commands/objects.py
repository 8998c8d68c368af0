"""``halluscope objects``: the objects the pipeline extracts from captions, for reading by hand.

The same code as the extract stage's ``rule+lexicon`` method
(:func:`halluscope.benchmarks.caos.captions.extract.extract_texts`): MSCOCO mentions of the
CHAIR-style parser (in-domain) and the out-of-domain lexicon's matches that the noun check
keeps, each with its surface form, token position, character span and source; the matches the
noun check drops are listed with the reason. With ``--gt``, each in-domain object says whether
the image's ground truth holds it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from halluscope.hand_check import add_command
from halluscope.io import InputError

FORMATS = (
    '  --captions  JSONL (or concatenated JSON objects), one per caption: {"image_id": ..., '
    '"caption": str} ("text" is read when there is no "caption"), e.g. the pipeline\'s '
    "results/responses/<profile>/<model>/<instruction>.jsonl",
    '  --gt        JSON {"imid_to_objects": {image_id: [MSCOCO class names]}} (CHAIR\'s export, '
    "or halluscope coco-gt) or a plain {image_id: [names]} (optional; names are read as caption "
    "words, Person, people -> person; a name outside the vocabulary is an error)",
    "  --synonyms  CHAIR synonyms.txt (optional; default: halluscope's own table, as the pipeline)",
    "  --lexicon   builtin, or a text file with one out-of-domain noun per line (# comments)",
    '  --out       JSON written: {"settings", "counts", "captions": [{"image_id", "line", '
    '"caption", "in_domain": [{"name", "surface", "position", "start", "end", "source", '
    '"in_gt"}], "out_of_domain": [...], "rejected": [{..., "reason"}]}]}',
)
"""The input and output formats, one ``--help`` line each."""


def add_parser(sub) -> None:
    parser = add_command(
        sub,
        "objects",
        run,
        help_text="the in-domain and out-of-domain objects the pipeline extracts from captions",
        description="Per caption, the objects of the pipeline's rule+lexicon extraction: MSCOCO "
        "mentions (in-domain) and out-of-domain lexicon nouns kept by the noun check, with "
        "surface form, token position, character span and source, and the lexicon matches the "
        "noun check dropped (with the reason).",
        formats=FORMATS,
        example=(
            "  halluscope objects --captions results/responses/demo/sim-precise/i01.jsonl \\",
            "      --gt chair_gt.json --out objects.json",
        ),
        inputs={"--captions": "captions with image_id"},
        optional_inputs=("--gt", "--synonyms"),
    )
    parser.add_argument("--gt", type=Path, default=None, help="ground-truth objects per image")
    parser.add_argument(
        "--synonyms", type=Path, default=None, help="CHAIR synonyms.txt (default: builtin)"
    )
    parser.add_argument("--variant", choices=("pattern", "lemmatizer"), default="pattern")
    parser.add_argument("--lexicon", default="builtin", help="builtin or a noun-per-line file")
    parser.add_argument("--out", type=Path, required=True)


def read_captions(path: Path) -> list[tuple[str, str, int]]:
    """(image id, caption, line of the record) in input order, from JSONL or concatenated JSON
    objects; errors name the file, the line and the field."""
    from halluscope.io import caption_text, read_text

    text = read_text(path)
    decoder = json.JSONDecoder()
    out: list[tuple[str, str, int]] = []
    index = number = 0
    while True:
        while index < len(text) and text[index].isspace():
            index += 1
        if index >= len(text):
            return out
        line = text.count("\n", 0, index) + 1
        try:
            record, index = decoder.raw_decode(text, index)
        except json.JSONDecodeError as err:
            bad = text.count("\n", 0, err.pos) + 1
            raise InputError(
                f"{path}:{line}: record {number + 1}: malformed JSON ({err.msg}, line {bad})"
            ) from None
        number += 1
        where = f"{path}:{line}: record {number}"
        if not isinstance(record, dict):
            raise InputError(f"{where}: expected a JSON object, got {type(record).__name__}")
        if "image_id" not in record:
            raise InputError(f"{where}: no 'image_id' field")
        caption = caption_text(record)
        if not isinstance(caption, str):
            field = "caption" if "caption" in record else "text"
            got = "missing" if field not in record else f"a {type(caption).__name__}"
            raise InputError(f"{where}: field '{field}': expected a string, got {got}")
        out.append((str(record["image_id"]), caption, line))


def _lexicon(value: str) -> str:
    """``builtin`` or the path of an existing lexicon file (as the pipeline reads it)."""
    if value != "builtin":
        path = Path(value)
        if path.is_dir():
            raise InputError(f"--lexicon: {path}: is a directory; expected a file")
        if not path.is_file():
            raise InputError(f"--lexicon: {path}: file not found")
    return value


def _with_spans(caption: str, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from halluscope.objects.parser import tokenize

    tokens = tokenize(caption)
    out = []
    for obj in objects:
        start = tokens[obj["position"]].start
        out.append({**obj, "start": start, "end": start + len(obj["surface"])})
    return out


def run(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos.captions.extract import extract_texts
    from halluscope.hand_check import no_records, report, write_result
    from halluscope.objects.nouns import REASONS

    captions = read_captions(args.captions)
    if not captions:
        expected = 'one {"image_id", "caption"} object per line'
        raise no_records("--captions", args.captions, "caption record", expected)
    synonyms = "builtin"
    table = None  # the builtin table
    if args.synonyms is not None:
        from halluscope.commands.chair import read_synonyms

        table = read_synonyms(args.synonyms)  # the errors of a bad file name it
        synonyms = str(args.synonyms)
    gt = None
    if args.gt is not None:
        from halluscope.data.coco import load_gt
        from halluscope.objects.parser import ObjectParser

        gt = load_gt(args.gt, ObjectParser(table, variant=args.variant))  # names as captions'
        missing = [(i, line) for i, _, line in captions if i not in gt]
        if missing:
            raise InputError(
                f"{args.gt}: no ground truth for image id {missing[0][0]!r} "
                f"({args.captions}:{missing[0][1]}; {len(missing)} captions without GT)"
            )
    lexicon = _lexicon(args.lexicon)
    records = extract_texts(
        [c for _, c, _ in captions], synonyms, args.variant, lexicon, audit=True
    )
    counts: dict[str, Any] = {
        "captions": len(captions),
        "in_domain": 0,
        "out_of_domain": 0,
        "rejected": dict.fromkeys(REASONS, 0),
    }
    rows = []
    for (image_id, caption, line), record in zip(captions, records, strict=True):
        objects = _with_spans(caption, record["objects"])
        inside = [o for o in objects if o["in_domain"]]
        if gt is not None:
            inside = [{**o, "in_gt": o["name"] in gt[image_id]} for o in inside]
        outside = [o for o in objects if not o["in_domain"]]
        dropped = _with_spans(caption, record["lexicon_rejected"])
        counts["in_domain"] += len(inside)
        counts["out_of_domain"] += len(outside)
        for o in dropped:
            counts["rejected"][o["reason"]] += 1
        rows.append(
            {
                "image_id": image_id,
                "line": line,
                "caption": caption,
                "in_domain": inside,
                "out_of_domain": outside,
                "rejected": dropped,
            }
        )
    settings = {
        "method": "rule+lexicon",
        "synonyms": synonyms,
        "variant": args.variant,
        "lexicon": lexicon,
        "noun_check": "spaCy en_core_web_sm tagger (halluscope.objects.nouns)",
        "gt": str(args.gt) if args.gt is not None else None,
    }
    write_result(args.out, {"settings": settings, "counts": counts, "captions": rows})
    dropped_total = sum(counts["rejected"].values())
    report(
        "objects",
        f"{len(captions)} captions, {counts['in_domain']} in-domain and "
        f"{counts['out_of_domain']} out-of-domain objects ({dropped_total} lexicon matches "
        "dropped by the noun check)",
        args.out,
    )
