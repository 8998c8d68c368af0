"""``halluscope caos``: CAOS of hand-written object lists, to check numbers by hand.

Names get vectors by the pipeline's own rule, with the pipeline's own code
(:func:`halluscope.embeddings.load_keyed_vectors`, :class:`~halluscope.embeddings.
KeyedVectorsEmbedder` and :func:`~halluscope.embeddings.embed_names`): a multi-word name uses the
vector of the whole phrase when the file has it (``dining_table``, ``dining-table``), else the
mean of its words' vectors; a name with a word that has no vector gets no vector (listed in
``missing``, never a zero vector). Only the names the input uses (GT, objects, frequent) are
embedded, so the similarities are the ones the score stage would compute from the same file.

Input is checked strictly (types, unique caption ids); every error names the file, the line and
what was expected. The output JSON never holds NaN or Infinity.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.hand_check import add_command
from halluscope.io import InputError

DESCRIPTION = """\
CAOS (context-aware object similarities) of hand-written captions, scored with the same
name-to-vector rule as the pipeline: a multi-word name uses its whole phrase (dining_table,
dining-table) when the vector file has it, else the mean of its words' vectors; a name with a
word that has no vector gets none and is listed in "missing" (never a zero vector)."""

FORMATS = (
    '  --objects   JSONL, one caption per line: {"id": "c1", "gt": ["cat"], "objects": '
    '[{"name": "dog", "in_domain": true, "present": false}]} (id: unique string or integer; '
    "objects in caption order; present: true, false = hallucinated, null = unknown)",
    '  --vectors   word2vec text file: a "<count> <dim>" header line, then one '
    '"<word> <x1> ... <xdim>" line per word (a .bin file is read as binary word2vec)',
    "  --frequent  comma-separated object names, most frequent first (the K list; CAOS_K uses "
    "the first k)",
    '  --out       JSON written: {"overall": {...}, "captions": [{"id", "CAOS_T", ..., '
    '"missing"}, ...], "k", "frequent"}',
)
"""The input and output formats, one ``--help`` line each (long lines are not wrapped)."""

_OBJECT_FORMAT = '{"name": str, "in_domain": bool, "present": true|false|null}'


def add_parser(sub) -> None:
    parser = add_command(
        sub,
        "caos",
        run,
        help_text="CAOS for hand-made object lists (JSONL) and a word2vec text file",
        description=DESCRIPTION,
        formats=FORMATS,
        example=(
            "  halluscope caos --objects captions.jsonl --vectors vectors.txt \\",
            '      --frequent "person,dining table,car,chair" --k 3 --out caos.json',
        ),
        inputs={
            "--objects": "captions with their objects (JSONL)",
            "--vectors": "word2vec vector file",
        },
    )
    parser.add_argument(
        "--frequent", required=True, help="comma-separated names, most frequent first"
    )
    parser.add_argument("--k", type=int, required=True, help="CAOS_K uses the first k frequent")
    parser.add_argument(
        "--k-max",
        type=int,
        default=None,
        help="keep only the first K_MAX frequent names (default: all of them)",
    )
    parser.add_argument("--out", type=Path, required=True, help="output JSON file")


@dataclass(frozen=True)
class Caption:
    """One validated input line: its line number, id, GT names and (name, in_domain, present)."""

    line: int
    id: str | int
    gt: list[str]
    objects: list[tuple[str, bool, bool | None]]


def _describe(value: Any) -> str:
    """A JSON value as an error message shows it (``the string 'false'``, ``null``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {json.dumps(value)}"
    if isinstance(value, str):
        return f"the string {json.dumps(value, ensure_ascii=False)}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def parse_caption(rec: dict[str, Any], where: str) -> Caption:
    """Check one JSONL record (``where`` = ``file:line``); return it as a :class:`Caption`."""
    for key in ("id", "gt", "objects"):
        if key not in rec:
            raise InputError(
                f"{where}: missing key {key!r}; expected "
                f'{{"id": ..., "gt": [names], "objects": [{_OBJECT_FORMAT}, ...]}}'
            )
    cid = rec["id"]
    if isinstance(cid, bool) or not isinstance(cid, str | int):
        raise InputError(f"{where}: 'id' must be a string or an integer, got {_describe(cid)}")
    gt = rec["gt"]
    if not isinstance(gt, list):
        raise InputError(f"{where}: 'gt' must be a list of object names, got {_describe(gt)}")
    for i, name in enumerate(gt):
        if not _is_name(name):
            raise InputError(
                f"{where}: gt[{i}] must be a non-empty string (an object name), "
                f"got {_describe(name)}"
            )
    objects = rec["objects"]
    if not isinstance(objects, list):
        raise InputError(
            f"{where}: 'objects' must be a list of {_OBJECT_FORMAT}, got {_describe(objects)}"
        )
    out = []
    for i, obj in enumerate(objects):
        if not isinstance(obj, dict):
            raise InputError(
                f"{where}: objects[{i}] must be {_OBJECT_FORMAT}, got {_describe(obj)}"
            )
        for key in ("name", "in_domain", "present"):
            if key not in obj:
                raise InputError(f"{where}: objects[{i}] has no {key!r}; expected {_OBJECT_FORMAT}")
        name, in_domain, present = obj["name"], obj["in_domain"], obj["present"]
        if not _is_name(name):
            raise InputError(
                f"{where}: objects[{i}].name must be a non-empty string, got {_describe(name)}"
            )
        if not isinstance(in_domain, bool):
            raise InputError(
                f"{where}: objects[{i}].in_domain must be true or false, got {_describe(in_domain)}"
            )
        if present is not None and not isinstance(present, bool):
            raise InputError(
                f"{where}: objects[{i}].present must be true, false or null, "
                f"got {_describe(present)}"
            )
        out.append((name, in_domain, present))
    return Caption(0, cid, list(gt), out)


def read_captions(path: Path) -> list[Caption]:
    """The validated captions of a JSONL file, with their true line numbers (blank lines kept in
    the count); caption ids must be unique."""
    from halluscope.io import iter_jsonl_numbered

    captions: list[Caption] = []
    first_line: dict[str, int] = {}
    # UTF-8 and JSON syntax errors name the file and line
    for number, rec in iter_jsonl_numbered(path):
        caption = parse_caption(rec, f"{path}:{number}")
        key = json.dumps(caption.id)  # 1 and "1" are different ids
        if key in first_line:
            raise InputError(
                f"{path}:{number}: duplicate caption id {key} (first on line {first_line[key]}); "
                "expected unique ids"
            )
        first_line[key] = number
        captions.append(Caption(number, caption.id, caption.gt, caption.objects))
    if not captions:
        raise InputError(f"{path}: no captions; expected one JSON object per line")
    return captions


def parse_frequent(text: str, k: int, k_max: int | None) -> tuple[list[str], int]:
    """The --frequent names and the effective k_max, with errors naming the flag at fault."""
    frequent = [w.strip() for w in text.split(",") if w.strip()]
    if not frequent:
        raise InputError(
            "--frequent: expected a comma-separated list of at least k names, got an empty list"
        )
    if k < 1:
        raise InputError(f"--k: expected a positive integer, got {k}")
    if len(frequent) < k:
        raise InputError(
            f"--frequent: expected a comma-separated list of at least k={k} names, "
            f"got {len(frequent)}: {', '.join(frequent)}"
        )
    if k_max is None:
        return frequent, len(frequent)
    if not k <= k_max <= len(frequent):
        raise InputError(
            f"--k-max: expected an integer from k={k} to the number of --frequent names "
            f"({len(frequent)}), got {k_max}"
        )
    return frequent, k_max


def check_vector_rows(path: Path) -> None:
    """Every row of a text word2vec file has the header's number of values, and the header's
    count of rows.

    Why here: gensim assigns each row into a preallocated matrix, so a row of one number is
    broadcast over the whole vector (silently wrong similarities) and a row of some other wrong
    length fails without its line. A ``.bin`` file has no rows to check.
    """
    if path.suffix == ".bin":
        return
    with open(path, "rb") as handle:
        header = handle.readline().split()
        if len(header) != 2 or not all(part.isdigit() for part in header):
            raise InputError(
                f"--vectors: {path}:1: expected a '<count> <dim>' header line (word2vec text), "
                f"got {b' '.join(header).decode('utf-8', 'replace')[:60]!r}"
            )
        count, dim = int(header[0]), int(header[1])
        rows = 0
        for number, line in enumerate(handle, start=2):
            parts = line.rstrip().split(b" ")  # as gensim splits a row
            if len(parts) == 1 and not parts[0]:
                continue
            rows += 1
            if len(parts) - 1 != dim:
                word = parts[0].decode("utf-8", "replace")
                raise InputError(
                    f"--vectors: {path}:{number}: the vector of {word!r} has {len(parts) - 1} "
                    f"value(s); expected {dim} (the header's dimension)"
                )
    if rows != count:
        raise InputError(
            f"--vectors: {path}: the header announces {count} vectors, the file has {rows} rows; "
            "expected one row per vector"
        )


def _check_finite(values: dict[str, Any], where: str) -> None:
    for key, value in values.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{where}: {key} is {value}; expected a finite number or null")


def _hallucinated_without_vector(captions: list[Caption], found: set[str]) -> list[str]:
    """The hallucinated objects (``present: false`` at a caption's first mention of the name, as
    the scorer reads it) that have no vector, each once, in input order: the scorer skips them,
    so a caption with only those has no CAOS value."""
    out: dict[str, None] = {}
    for caption in captions:
        first: dict[str, bool | None] = {}
        for name, _, present in caption.objects:
            first.setdefault(name, present)
        out.update((n, None) for n, present in first.items() if present is False and n not in found)
    return list(out)


def run(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.caos.metric import CAOSScorer, CaptionObject, VectorTable, aggregate
    from halluscope.embeddings import KeyedVectorsEmbedder, embed_names, load_keyed_vectors
    from halluscope.hand_check import report, score_text, warn
    from halluscope.io import atomic_write_text

    frequent, k_max = parse_frequent(args.frequent, args.k, args.k_max)
    captions = read_captions(args.objects)
    check_vector_rows(args.vectors)
    try:
        kv = load_keyed_vectors(args.vectors, "word2vec", "--vectors")
    except EOFError as err:  # gensim: fewer vectors than the header's count
        raise InputError(
            f"--vectors: cannot read {args.vectors} as word2vec vectors: {err}"
        ) from None
    names = set(frequent[:k_max])
    for caption in captions:
        names.update(caption.gt)
        names.update(name for name, _, _ in caption.objects)
    words, matrix, _ = embed_names(KeyedVectorsEmbedder(str(args.vectors), kv), sorted(names))
    found = set(words)
    without = [name for name in frequent[:k_max] if name not in found]
    if without:
        raise InputError(
            f"--frequent: no vector in {args.vectors} for {without}; every frequent name needs one "
            "(its whole phrase, or a vector for each of its words)"
        )
    scorer = CAOSScorer(VectorTable(words, matrix), frequent, args.k, k_max)
    scores = []
    rows = []
    for caption in captions:
        objects = [
            CaptionObject(name, in_domain, present, position)
            for position, (name, in_domain, present) in enumerate(caption.objects)
        ]
        result = scorer.score_caption(caption.gt, objects)
        _check_finite(result.scores, f"{args.objects}:{caption.line}: caption {caption.id!r}")
        scores.append(dict(result.scores))
        rows.append({"id": caption.id, **result.scores, "missing": list(result.missing)})
    overall = aggregate(scores)
    _check_finite(overall, f"{args.objects}: overall")
    document = {"overall": overall, "captions": rows, "k": args.k, "frequent": frequent}
    # as halluscope.io.write_json, but NaN/Infinity can never reach the file
    atomic_write_text(
        args.out,
        json.dumps(document, sort_keys=True, ensure_ascii=False, indent=2, allow_nan=False) + "\n",
    )
    unscored = _hallucinated_without_vector(captions, found)
    if unscored:
        names = ", ".join(repr(name) for name in unscored)
        what = "object has" if len(unscored) == 1 else "objects have"
        scored = ""
        if overall["n_no_hallucination"] == len(captions):
            scored = "; no caption has a scored one: every CAOS score is undefined (null)"
        warn(
            "caos",
            f"{len(unscored)} hallucinated {what} no vector in {args.vectors} and no score "
            f"(listed under 'missing'): {names}{scored}",
        )
    elif overall["n_no_hallucination"] == len(captions):
        warn("caos", "no caption has a hallucinated object: every CAOS score is undefined (null)")
    with_one = "with a scored hallucination" if unscored else "with a hallucination"
    report(
        "caos",
        f"{len(captions)} captions "
        f"({len(captions) - overall['n_no_hallucination']} {with_one}), "
        f"CAOS_T {score_text(overall['CAOS_T'])}, CAOS_X {score_text(overall['CAOS_X'])}, "
        f"CAOS_K {score_text(overall['CAOS_K'])}, CAOS_avg {score_text(overall['CAOS_avg'])}",
        args.out,
    )
