"""Loader for the Tri-HE benchmark file ``tri-he.json`` (Wu et al. 2024, arXiv:2410.23114).

The released file (wujunjie1998/Tri-HE, ``data/tri-he.json``) is one JSON object keyed by GQA
image id. Each value holds ``instance`` (questions, each with ``question``, ``answer`` and the
reference ``triplet`` strings that support the answer), ``triplets`` (the image's scene graph
enriched with the question triplets, as strings ``"(subj, rel, obj)"``), ``all_object`` and
``object``. Questions have no id in the file: here ``question_id`` is the 0-based position of
the question in its image's ``instance`` list, in file order.

Triplet strings are parsed into :class:`Triplet`. Six strings of the release are not of the
form ``"(a, b, c)"``; each occurs in a scene graph and again in one question. The parser
repairs what it can, with these rules (each repair is recorded in :attr:`TriheData.repaired`
with the names of the rules it used):

* ``spacing``: a separating comma is not followed by a space (``"(bus, is,stopped)"``,
  ``"(People, riding ,elephant)"``), so splitting on ``", "`` as the released LLM judge does
  gives two fields: fields are split on ``,`` instead.
* ``concatenated``: a ``(`` after the first character starts another triplet
  (``"(snow on the ground, covers, mountains, (people, wearing, winter clothing)"``): the
  string is split before every inner ``(`` and each piece is parsed on its own.
* ``trailing-separator``: a piece ends with ``,`` or ``;`` left over from the concatenation
  (``"cold weather,;"``): trailing commas/semicolons are dropped (never an inner empty field).
* ``missing-parenthesis``: a piece lacks its ``(`` or ``)``: accepted.

Every field is stripped of surrounding whitespace, which is not counted as a repair (the
release has a few harmless double spaces, e.g. ``"(woman, on,  bed)"``). A piece that still
does not have exactly three non-empty fields (the four-field
``"(Woman, reason for attention, Curiosity/Distraction, photographer)"``) cannot be split
without guessing: it is reported in :attr:`TriheData.malformed` (image id, location, raw
string, reason) and left out of the parsed triplets, never silently dropped. The raw strings
are kept unchanged as well (``raw_scene_graph``), because the released similarity judge works
on raw strings (it deletes parentheses and commas), so it also uses the unparseable ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.io import InputError, read_json

REPAIR_RULES = ("spacing", "concatenated", "trailing-separator", "missing-parenthesis")


class TripletParseError(ValueError):
    """A triplet string that cannot be read as ``(subject, relation, object)`` without guessing."""


@dataclass(frozen=True)
class Triplet:
    """One ``(subject, relation, object)`` triplet."""

    subject: str
    relation: str
    object: str

    def text(self) -> str:
        """The triplet joined by spaces, ``"subj rel obj"`` (how Tri-HE's judge embeds claims)."""
        return f"{self.subject} {self.relation} {self.object}"


@dataclass(frozen=True)
class TripletRepair:
    """A malformed string that was parsed: where it was, which rules, what came out."""

    image_id: str
    where: str
    raw: str
    rules: tuple[str, ...]
    triplets: tuple[Triplet, ...]


@dataclass(frozen=True)
class MalformedTriplet:
    """A string that could not be parsed; reported so that no triplet disappears unnoticed."""

    image_id: str
    where: str
    raw: str
    reason: str


@dataclass(frozen=True)
class TriheQuestion:
    """A question with its ground-truth answer and its reference triplets."""

    image_id: str
    question_id: int
    question: str
    answer: str
    triplets: tuple[Triplet, ...]
    raw_triplets: tuple[str, ...]


@dataclass(frozen=True)
class TriheImage:
    """One GQA image: its questions, its scene-graph triplets and its object lists."""

    image_id: str
    questions: tuple[TriheQuestion, ...]
    scene_graph: tuple[Triplet, ...]
    raw_scene_graph: tuple[str, ...]
    all_objects: tuple[str, ...]
    objects: tuple[str, ...]


@dataclass(frozen=True)
class TriheData:
    """The whole benchmark plus the report of every non-canonical triplet string."""

    images: tuple[TriheImage, ...]
    repaired: tuple[TripletRepair, ...]
    malformed: tuple[MalformedTriplet, ...]

    @property
    def n_questions(self) -> int:
        return sum(len(image.questions) for image in self.images)

    def image(self, image_id: str) -> TriheImage:
        for image in self.images:
            if image.image_id == image_id:
                return image
        raise KeyError(f"Tri-HE has no image {image_id!r}")


_TRAILING = re.compile(r"[\s,;]+$")


def _parse_piece(piece: str, rules: set[str]) -> Triplet:
    text = piece.strip()
    stripped = _TRAILING.sub("", text)
    if stripped != text:
        rules.add("trailing-separator")
        text = stripped
    if not (text.startswith("(") and text.endswith(")")):
        rules.add("missing-parenthesis")
    inner = text.removeprefix("(").removesuffix(")")
    fields = [f.strip() for f in inner.split(",")]
    if len(fields) != 3 or not all(fields):
        raise TripletParseError(
            f"{len(fields)} comma-separated fields ({fields!r}); expected 3 non-empty fields"
        )
    if len(inner.split(", ")) != len(fields):
        rules.add("spacing")
    return Triplet(*fields)


def parse_triplet(raw: str) -> tuple[tuple[Triplet, ...], tuple[str, ...]]:
    """Parse ``"(subj, rel, obj)"``; returns the triplets and the repair rules used (sorted).

    A well-formed string gives one triplet and no rule. Raises :class:`TripletParseError` when
    a piece cannot be read without guessing.
    """
    if not isinstance(raw, str) or not raw.strip():
        raise TripletParseError(f"expected a non-empty string, got {raw!r}")
    text = raw.strip()
    starts = [0] + [m.start() for m in re.finditer(r"\(", text) if m.start() > 0]
    rules: set[str] = set()
    if len(starts) > 1:
        rules.add("concatenated")
    pieces = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)], strict=True)]
    triplets = tuple(_parse_piece(piece, rules) for piece in pieces)
    return triplets, tuple(sorted(rules))


def _str_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where}: expected a list of strings, got {type(value).__name__}")
    return value


def load_trihe(path: str | Path) -> TriheData:
    """Read ``tri-he.json``; errors name the file and the image id (and question) at fault."""
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object keyed by image id")
    images: list[TriheImage] = []
    repaired: list[TripletRepair] = []
    malformed: list[MalformedTriplet] = []

    def parse_all(image_id: str, raws: list[str], where: str) -> tuple[Triplet, ...]:
        out: list[Triplet] = []
        for index, raw in enumerate(raws):
            loc = f"{where}[{index}]"
            try:
                triplets, rules = parse_triplet(raw)
            except TripletParseError as err:
                malformed.append(MalformedTriplet(image_id, loc, raw, str(err)))
                continue
            if rules:
                repaired.append(TripletRepair(image_id, loc, raw, rules, triplets))
            out.extend(triplets)
        return tuple(out)

    for image_id, entry in data.items():
        where = f"{path}: image {image_id!r}"
        if not isinstance(entry, dict):
            raise InputError(f"{where}: expected an object, got {type(entry).__name__}")
        missing = [k for k in ("instance", "triplets") if k not in entry]
        if missing:
            raise InputError(f"{where}: missing key(s) {missing}")
        if not isinstance(entry["instance"], list):
            raise InputError(f"{where}: 'instance' must be a list of questions")
        questions: list[TriheQuestion] = []
        for qid, inst in enumerate(entry["instance"]):
            qwhere = f"{where}, instance[{qid}]"
            if not isinstance(inst, dict) or not all(
                k in inst for k in ("question", "answer", "triplet")
            ):
                raise InputError(f"{qwhere}: expected {{'question', 'answer', 'triplet'}}")
            raws = _str_list(inst["triplet"], f"{qwhere}.triplet")
            questions.append(
                TriheQuestion(
                    image_id=image_id,
                    question_id=qid,
                    question=str(inst["question"]),
                    answer=str(inst["answer"]),
                    triplets=parse_all(image_id, raws, f"instance[{qid}].triplet"),
                    raw_triplets=tuple(raws),
                )
            )
        raw_sg = _str_list(entry["triplets"], f"{where}.triplets")
        images.append(
            TriheImage(
                image_id=image_id,
                questions=tuple(questions),
                scene_graph=parse_all(image_id, raw_sg, "triplets"),
                raw_scene_graph=tuple(raw_sg),
                all_objects=tuple(_str_list(entry.get("all_object", []), f"{where}.all_object")),
                objects=tuple(_str_list(entry.get("object", []), f"{where}.object")),
            )
        )
    return TriheData(tuple(images), tuple(repaired), tuple(malformed))


def items(options: dict[str, Any]) -> list[dict]:
    """Items of dataset ``trihe-gqa``: Tri-HE's 300 GQA images (``trihe/tri-he.json``), in file
    order; ``relations`` = the image's scene-graph triplets (the judges' references),
    ``other_objects`` = its object list. Images from ``data.images`` (``<image_id>.jpg``) when
    given, else ``image: null``."""
    from halluscope.data.fetch import resolve
    from halluscope.stages.data import image_file, image_item, limit_records

    data = load_trihe(resolve(options.get("image_list", "trihe/tri-he.json")))
    out = []
    for image in limit_records(list(data.images), options):
        relations = [[t.subject, t.relation, t.object] for t in image.scene_graph]
        out.append(
            image_item(
                image.image_id,
                image_file(options, f"{image.image_id}.jpg", image.image_id),
                {"dataset": "Tri-HE (GQA)", "n_questions": len(image.questions)},
                list(dict.fromkeys(image.all_objects + image.objects)),
                [list(t) for t in dict.fromkeys(tuple(t) for t in relations)],
            )
        )
    return out


def load_trihe_questions(
    path: str | Path, items: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The demo's questions (``data/demo/trihe_questions.yaml``) in file order: ``{"question_id",
    "image_id", "question", "answer", "triplets"}``.

    Every reference triplet must be one of the image's ``relations`` (same strings): the file is
    the demo's answer key, so a typo stops the stage (file, question, what was expected).
    """
    from halluscope.data.demo_benchmarks import item_at, read_yaml_list, text_at

    path = Path(path)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, rec in enumerate(read_yaml_list(path, "questions")):
        where = f"{path}: questions[{index}]"
        if not isinstance(rec, dict):
            raise InputError(f"{where}: expected a mapping")
        unknown = sorted(set(rec) - {"id", "image", "question", "answer", "triplets"})
        if unknown:
            raise InputError(f"{where}: unknown key(s) {unknown}")
        qid = text_at(rec, "id", where)
        where = f"{path}: question {qid!r}"
        if qid in seen:
            raise InputError(f"{where}: the id is used twice")
        seen.add(qid)
        item = item_at(items, rec.get("image"), where)
        relations = [[str(x) for x in t] for t in item.get("relations", [])]
        triplets = rec.get("triplets")
        if not isinstance(triplets, list) or not triplets:
            raise InputError(f"{where}: 'triplets' must be a non-empty list of [s, r, o]")
        for triplet in triplets:
            if not isinstance(triplet, list) or len(triplet) != 3:
                raise InputError(f"{where}: triplet {triplet!r} is not [subject, relation, object]")
            if [str(x) for x in triplet] not in relations:
                raise InputError(
                    f"{where}: triplet {triplet!r} is not a relation of image "
                    f"{item['image_id']!r} (its relations: {relations})"
                )
        out.append(
            {
                "question_id": qid,
                "image_id": str(item["image_id"]),
                "question": text_at(rec, "question", where),
                "answer": text_at(rec, "answer", where),
                "triplets": [[str(x) for x in t] for t in triplets],
            }
        )
    if not out:
        raise InputError(f"{path}: no question")
    return out
