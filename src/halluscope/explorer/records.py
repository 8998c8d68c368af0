"""What a benchmark contributes to the explorer page: captions with marked objects, and answers.

Why one small vocabulary: the page renders any benchmark's entries without knowing the
benchmark, so a benchmark's ``explorer.py`` says everything in these records, and every number in
them is a value its own result files hold (the files its tables read), never computed again.

A benchmark's ``explorer.py`` exposes:

- ``TITLE``: its label on the page;
- ``options(config) -> dict``: the params its entries depend on, as plain JSON (they become part
  of the explorer's settings, so a change reruns the page);
- ``files(options, profile) -> list[str]``: the result files it reads (the rule's inputs);
- ``contribution(options, profile, items) -> Contribution``: its entries, read from those files
  (``items``: the profile's items by image id, read only; items of its own go in
  ``Contribution.items``).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from halluscope.io import InputError

#: The kinds of an object mentioned in a caption: (key, label, counted as a hallucination).
#: In-domain objects are judged by the ground truth, out-of-domain ones by the oracle.
KINDS: tuple[tuple[str, str, bool], ...] = (
    ("grounded", "grounded (in-domain, in the ground truth)", False),
    ("hallucinated", "hallucinated (in-domain, not in the ground truth)", True),
    ("ood-kept", "out-of-domain, kept by the oracle", False),
    ("ood-rejected", "out-of-domain, rejected by the oracle (a hallucination)", True),
    ("unverified", "out-of-domain, unverified (no oracle decided)", False),
)
KIND_KEYS: tuple[str, ...] = tuple(k for k, _, _ in KINDS)


def object_kind(in_domain: bool, present: bool | None) -> str:
    """The kind of an object from its domain and its presence (ground truth or oracle)."""
    if in_domain:
        return "grounded" if present else "hallucinated"
    return {True: "ood-kept", False: "ood-rejected", None: "unverified"}[present]


@dataclass(frozen=True)
class Mark:
    """One object mention in a caption's text: characters ``start:end``, the object's name and
    kind, and its numbers (one per ``Contribution.mark_values`` name; None: no value)."""

    start: int
    end: int
    name: str
    kind: str
    values: tuple[float | None, ...] = ()


@dataclass(frozen=True)
class Caption:
    """One model's caption of one image for one instruction, with every extracted object marked
    and its counts and numbers as the score files hold them (one value per
    ``Contribution.caption_values`` name)."""

    image_id: str
    model: str
    instruction: str
    text: str
    marks: tuple[Mark, ...]
    n_hallucinated: int
    values: tuple[float | None, ...] = ()


@dataclass(frozen=True)
class Answer:
    """One model's answer to one question about an image: the question's ``label`` (a POPE
    setting, a mode and task), the answer, the truth it is judged against, the judge's reading
    and whether the judge counts it wrong (None: not judged)."""

    image_id: str
    model: str
    label: str
    question: str
    answer: str
    truth: str
    judge: str
    wrong: bool | None


@dataclass(frozen=True)
class Contribution:
    """One benchmark's part of the page: its captions or answers, the names of their numbers,
    its instructions (id -> text, for captions), a note on where the numbers come from, and the
    items of its own it shows answers under, by image id (HallusionBench's figures, which are
    not the profile's images; the page adds those it does not have)."""

    title: str
    captions: list[Caption] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    mark_values: tuple[str, ...] = ()
    caption_values: tuple[str, ...] = ()
    instructions: Mapping[str, str] = field(default_factory=dict)
    note: str = ""
    items: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def need(record: Mapping[str, Any], key: str, where: str) -> Any:
    """``record[key]``, or an error naming ``where`` (``FILE:LINE``) and the missing field."""
    try:
        return record[key]
    except (KeyError, TypeError):
        raise InputError(f"{where}: missing field {key!r}") from None


def csv_rows(path: str | Path) -> Iterator[tuple[int, dict[str, str]]]:
    """The rows of a CSV file with their line numbers (the header is line 1)."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            for row in reader:
                if None in row or None in row.values():
                    raise InputError(
                        f"{path}:{reader.line_num}: {len(reader.fieldnames or [])} columns "
                        "expected, as in the header"
                    )
                yield reader.line_num, row
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None


def number(row: Mapping[str, str], key: str, where: str) -> float | None:
    """A CSV cell as a float (an empty cell: None); an error names ``where`` and the column."""
    cell = need(row, key, where)
    if cell == "":
        return None
    try:
        return float(cell)
    except ValueError:
        raise InputError(f"{where}: column {key!r}: expected a number, got {cell!r}") from None


def integer(row: Mapping[str, str], key: str, where: str) -> int:
    """A CSV cell as an int; an error names ``where`` and the column."""
    cell = need(row, key, where)
    try:
        return int(cell)
    except ValueError:
        raise InputError(f"{where}: column {key!r}: expected an integer, got {cell!r}") from None
