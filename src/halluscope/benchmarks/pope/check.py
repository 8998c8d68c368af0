"""``halluscope pope`` (score answers) and ``halluscope pope-build`` (make a question file).

``pope`` reads the POPE question JSONL (``question_id``, ``text``, ``label``) and the answers,
either JSONL/JSON records with ``question_id`` + ``text`` (matched by id, compared as strings so
``1`` and ``"1"`` agree) or a JSON list of ``{"question", "answer"}`` aligned 1:1 with the
questions (the HALC answer files). Every question needs exactly one answer; a missing, extra or
misaligned answer is an error naming the first bad record, never silently dropped.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from halluscope.hand_check import add_command
from halluscope.hand_check_intervals import add_interval_options

__all__ = ["add_parser", "align_answers", "check_unique_ids", "load_gt", "run", "run_build"]

POPE_FORMATS = (
    '  --questions JSONL, one question per line: {"question_id", "text", "label": "yes"|"no", '
    "\"image\"}, e.g. halluscope pope-build's output or the pipeline's "
    "results/pope/<profile>/questions/<setting>.jsonl",
    '  --answers   JSONL (or JSON) records {"question_id", "text"} matched to the questions by id, '
    "e.g. the pipeline's results/pope/<profile>/<model>/<setting>.answers.jsonl; or a JSON list "
    'of {"question", "answer"} aligned 1:1 with the questions (the HALC answer files)',
    '  --out       JSON written: {"accuracy", "precision", "recall", "f1", "yes_ratio", "n", '
    '"unparsed", "parser", "intervals": {"accuracy", ...: {"lo", "hi", "level", "method", '
    '"unit", "n_units"}}, "interval_settings", "by_image": {"columns", "counts": {IMAGE: '
    '[tp, said_yes, positives]}}} (the questions\' "image" resampled: accuracy and yes '
    "ratio by Wilson's interval, at the effective n with several questions per image, the "
    "others by the cluster bootstrap; by_image: the counts the CAOS summary's POPE-F1 interval "
    "resamples; --no-intervals leaves these out)",
)
"""``halluscope pope`` input and output formats, one ``--help`` line each."""

BUILD_FORMATS = (
    '  --gt        JSON {image: [objects]} (or CHAIR\'s {"imid_to_objects": {...}}), or JSONL '
    'items {"image_id", "gt_objects": [...]}, e.g. the pipeline\'s '
    "results/data/<profile>/items.jsonl",
    '  --out       JSONL written, one question per line: {"question_id", "image", "text", '
    '"label": "yes"|"no"} (the --questions of halluscope pope)',
)
"""``halluscope pope-build`` input and output formats, one ``--help`` line each."""


def add_parser(subparsers: Any) -> None:
    """Register ``pope`` and ``pope-build``."""
    from halluscope.benchmarks.pope.metric import PARSERS, SETTINGS

    score = add_command(
        subparsers,
        "pope",
        run,
        help_text="POPE scores of yes/no answers",
        description="POPE accuracy, precision, recall, F1 and yes ratio of yes/no answers, "
        "parsed by --parser (original: the released POPE evaluation).",
        formats=POPE_FORMATS,
        example=(
            "  halluscope pope --questions results/pope/demo/questions/adversarial.jsonl \\",
            "      --answers results/pope/demo/sim-precise/adversarial.answers.jsonl "
            "--parser original --out pope.json",
        ),
        inputs={
            "--questions": "POPE question JSONL",
            "--answers": "JSONL of {question_id, text} or a JSON list of {question, answer} "
            "aligned 1:1",
        },
    )
    score.add_argument("--parser", choices=list(PARSERS), default="original")
    score.add_argument("--out", type=Path, required=True, help="scores JSON")
    add_interval_options(score)

    build = add_command(
        subparsers,
        "pope-build",
        run_build,
        help_text="POPE questions from per-image GT objects",
        description="POPE questions (random, popular or adversarial negatives) from the ground-"
        "truth objects of each image, seeded.",
        formats=BUILD_FORMATS,
        example=(
            "  halluscope pope-build --gt results/data/demo/items.jsonl --setting adversarial "
            "--seed 0 --n 1 --out questions.jsonl",
        ),
        inputs={
            "--gt": "JSON {image: [objects]} (or CHAIR's {imid_to_objects: ...}) or items JSONL"
        },
    )
    build.add_argument("--setting", choices=list(SETTINGS), required=True)
    build.add_argument("--seed", type=int, default=0)
    build.add_argument("--n", type=int, default=3, help="positive (and negative) questions/image")
    build.add_argument(
        "--images",
        type=int,
        default=None,
        help="sample this many images (seeded); frequencies are then counted over the sample",
    )
    build.add_argument(
        "--image-template",
        default="{id}",
        help="format of the 'image' field, e.g. 'COCO_val2014_{id:0>12}.jpg'",
    )
    build.add_argument("--typo", action="store_true", help="reproduce POPE's 'imange' typo")
    build.add_argument("--out", type=Path, required=True, help="question JSONL")


# ------------------------------------------------------------------------------------ scoring


def check_unique_ids(
    questions: Sequence[Mapping[str, Any]], qpath: Path, lines: Sequence[int] | None = None
) -> None:
    """Raise ``InputError`` naming the first question id that occurs twice and both places.

    ``lines`` are the questions' line numbers in ``qpath`` (else records are counted). Ids are
    compared as strings, like answers are matched (``1`` and ``"1"`` are the same id).
    """
    from halluscope.io import InputError

    where = "lines" if lines is not None else "records"
    numbers = list(lines) if lines is not None else list(range(1, len(questions) + 1))
    first: dict[str, int] = {}
    for q, number in zip(questions, numbers, strict=True):
        if "question_id" not in q:
            continue
        key = str(q["question_id"])
        if key in first:
            raise InputError(
                f"{qpath}: duplicate question id {key} at {where} {first[key]} and {number}; "
                "every question needs its own question_id"
            )
        first[key] = number


def align_answers(
    questions: list[dict[str, Any]],
    answers: list[Any],
    qpath: Path,
    apath: Path,
    lines: Sequence[int] | None = None,
) -> list[str]:
    """Answer texts in question order; raise ``InputError`` on the first mismatch.

    ``lines``: the questions' line numbers in ``qpath``, for the duplicate-id error.
    """
    from halluscope.hand_check import no_records
    from halluscope.io import InputError

    for i, q in enumerate(questions, start=1):
        if not isinstance(q.get("text"), str) or q.get("label") not in ("yes", "no"):
            where = f"line {lines[i - 1]}" if lines is not None else f"record {i}"
            raise InputError(
                f"{qpath}: {where}: expected {{'question_id', 'text', 'label': 'yes'|'no'}}"
            )
    check_unique_ids(questions, qpath, lines)
    if not questions:
        expected = 'one {"question_id", "text", "label"} object per line'
        raise no_records("--questions", qpath, "question record", expected)
    if not answers:
        expected = '{"question_id", "text"} records or a JSON list of {"question", "answer"}'
        raise no_records("--answers", apath, "answer record", expected)
    for i, a in enumerate(answers, start=1):
        if not isinstance(a, dict):
            raise InputError(f"{apath}: record {i}: expected a JSON object")
    if "question_id" in answers[0]:
        return _by_id(questions, answers, qpath, apath)
    if len(answers) != len(questions):
        raise InputError(
            f"{apath}: {len(answers)} answers but {qpath} has {len(questions)} questions; "
            "a list of {question, answer} must align 1:1 with the questions"
        )
    texts = []
    for i, (q, a) in enumerate(zip(questions, answers, strict=True), start=1):
        if not isinstance(a.get("answer"), str) or not isinstance(a.get("question"), str):
            raise InputError(
                f"{apath}: record {i}: expected {{'question', 'answer'}} or {{'question_id', "
                "'text'}}"
            )
        if a["question"].strip() != q["text"].strip():
            raise InputError(
                f"{apath}: record {i}: question {a['question']!r} does not match {qpath} "
                f"record {i} (question_id {q.get('question_id')}) {q['text']!r}"
            )
        texts.append(a["answer"])
    return texts


def _by_id(
    questions: list[dict[str, Any]], answers: list[dict[str, Any]], qpath: Path, apath: Path
) -> list[str]:
    from halluscope.io import InputError

    by_id: dict[str, dict[str, Any]] = {}
    for i, a in enumerate(answers, start=1):
        if "question_id" not in a or not isinstance(a.get("text"), str):
            raise InputError(f"{apath}: record {i}: expected {{'question_id', 'text'}}")
        key = str(a["question_id"])
        if key in by_id:
            raise InputError(f"{apath}: record {i}: second answer to question_id {key}")
        by_id[key] = a
    texts = []
    for i, q in enumerate(questions, start=1):
        key = str(q.get("question_id"))
        a = by_id.pop(key, None)
        if a is None:
            raise InputError(f"{apath}: no answer to {qpath} record {i} (question_id {key})")
        asked = a.get("question", a.get("prompt"))
        if isinstance(asked, str) and q["text"].strip() not in asked:
            raise InputError(
                f"{apath}: answer to question_id {key}: question {asked!r} does not contain "
                f"{qpath} record {i} text {q['text']!r}"
            )
        texts.append(a["text"])
    if by_id:
        extra = next(iter(by_id))
        raise InputError(f"{apath}: question_id {extra} is not in {qpath}")
    return texts


def run(args: argparse.Namespace) -> None:
    """``halluscope pope``: parse answers, score, write the scores JSON."""
    from halluscope.benchmarks.pope.intervals import score_document
    from halluscope.benchmarks.pope.metric import parse_answer
    from halluscope.hand_check import report, score_text, warn, write_result
    from halluscope.hand_check_intervals import bracket, interval_settings
    from halluscope.io import iter_jsonl_numbered, read_json_records

    settings = interval_settings(args, "image")
    numbered = list(iter_jsonl_numbered(args.questions))
    questions = [q for _, q in numbered]
    texts = align_answers(
        questions,
        read_json_records(args.answers),
        args.questions,
        args.answers,
        lines=[n for n, _ in numbered],
    )
    preds = [parse_answer(t, args.parser) for t in texts]
    doc = score_document(questions, preds, args.parser, settings)
    write_result(args.out, doc)
    empty = sum(1 for t, p in zip(texts, preds, strict=True) if not t.strip() and p == "yes")
    if empty:
        warn(
            "pope",
            f"{empty} of {len(texts)} answers are empty: the {args.parser} parser reads them "
            'as "yes", as the reference evaluation does',
        )
    labels = sorted({q["label"] for q in questions})
    if len(labels) == 1:
        warn("pope", f"every question of {args.questions} has label {labels[0]!r}: "
                     "precision, recall and F1 describe one class only")  # fmt: skip
    report(
        "pope",
        f"{len(questions)} answers ({doc['unparsed']} unparsed), accuracy "
        f"{score_text(doc['accuracy'])}{bracket(doc.get('intervals', {}).get('accuracy'))}, "
        f"F1 {score_text(doc['f1'])}, yes ratio {score_text(doc['yes_ratio'])}",
        args.out,
    )


# ----------------------------------------------------------------------------------- building


def load_gt(path: Path) -> dict[str, list[str]]:
    """Per-image GT objects from a JSON mapping, CHAIR's export or an items JSONL.

    A file that is not one JSON document is read as JSONL one line at a time, so an error names
    the line at fault (a decoder reading on across lines would name a later one).
    """
    import json

    from halluscope.io import InputError, iter_jsonl_numbered, read_json_records

    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        read_json_records(path)  # raises the reader's error (file not found, file:line)
        raise
    if not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and "gt_objects" not in doc:
        mapping = doc.get("imid_to_objects", doc)
        if not isinstance(mapping, dict):
            raise InputError(f"--gt: {path}: 'imid_to_objects' must be an object {{image: [...]}}")
        items = [(image, objects, f"{path}: image {image!r}") for image, objects in mapping.items()]
    else:
        where = "line"
        if isinstance(doc, list):
            numbered, where = list(enumerate(doc, start=1)), "record"
        elif doc is not None:
            numbered = [(1, doc)]
        elif _first_line_is_json(text):
            numbered = list(iter_jsonl_numbered(path))
        else:  # concatenated multi-line JSON documents
            numbered, where = list(enumerate(read_json_records(path), start=1)), "record"
        items = []
        for number, rec in numbered:
            if not isinstance(rec, dict) or "image_id" not in rec or "gt_objects" not in rec:
                raise InputError(
                    f"--gt: {path}: {where} {number}: expected {{'image_id', 'gt_objects'}}"
                )
            items.append((rec["image_id"], rec["gt_objects"], f"{path}: {where} {number}"))
    gt: dict[str, list[str]] = {}
    for image, objects, where in items:
        if not isinstance(objects, list) or not all(isinstance(o, str) for o in objects):
            raise InputError(f"--gt: {where}: image {image!r}: expected a list of object names")
        gt[str(image)] = objects
    return gt


def _first_line_is_json(text: str) -> bool:
    """Whether the first non-blank line is a JSON value by itself (a JSONL file)."""
    import json

    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        json.loads(first)
    except json.JSONDecodeError:
        return False
    return True


def run_build(args: argparse.Namespace) -> None:
    """``halluscope pope-build``: write a POPE question JSONL."""
    import random

    from halluscope.benchmarks.pope.metric import build_questions
    from halluscope.hand_check import no_records, report, warn
    from halluscope.io import InputError, write_jsonl

    for flag, value in (("--n", args.n), ("--images", args.images)):
        if value is not None and value < 1:
            raise InputError(f"{flag}: expected a positive integer, got {value}")
    gt = load_gt(args.gt)
    if not gt:
        expected = "a JSON {image: [objects]} mapping or JSONL {'image_id', 'gt_objects'} items"
        raise no_records("--gt", args.gt, "image", expected)
    eligible = [image for image, objects in gt.items() if len(set(objects)) >= args.n]
    if not eligible:
        most = max(len(set(objects)) for objects in gt.values())
        raise InputError(
            f"--n {args.n}: no image of {args.gt} has {args.n} distinct objects (the most is "
            f"{most}), so there would be no question; expected --n of at most {most}"
        )
    if args.images is not None:
        # Same seed, separate stream: the image sample does not shift the question draws.
        if args.images > len(eligible):
            raise InputError(
                f"--images {args.images}: only {len(eligible)} images of {args.gt} have "
                f"at least {args.n} objects"
            )
        chosen = set(random.Random(f"images:{args.seed}").sample(eligible, args.images))
        gt = {image: objects for image, objects in gt.items() if image in chosen}
    elif len(eligible) < len(gt):
        warn(
            "pope-build",
            f"{len(gt) - len(eligible)} of {len(gt)} images of {args.gt} have fewer than --n "
            f"{args.n} distinct objects and get no question",
        )
    try:
        named = {args.image_template.format(id=image): objects for image, objects in gt.items()}
    except (KeyError, IndexError, ValueError) as err:
        raise ValueError(f"--image-template {args.image_template!r}: {err}") from None
    if len(named) != len(gt):
        raise ValueError(f"--image-template {args.image_template!r} gives two images one name")
    questions = build_questions(named, args.setting, n=args.n, seed=args.seed, typo=args.typo)
    write_jsonl(args.out, questions)
    images = len({q["image"] for q in questions})
    report(
        "pope-build",
        f"{len(questions)} {args.setting} questions, {args.n} yes + {args.n} no per image, "
        f"{images} image(s)",
        args.out,
    )
