"""HallusionBench's question file and answer files, read and checked.

Why here, not in the metric: the metric trusts its records; every malformed record is refused
at the door with an :class:`~halluscope.io.InputError` naming the file, the record (its number
and its five ids) and what was expected.

A question is keyed by ``(category, subcategory, set_id, figure_id, question_id)``, the fields
the reference's ``utils.py`` joins its names from; ids are read as strings (``0`` and ``"0"``
are the same id), as the reference's ``str(...)`` reads them. An answer record (the upstream
``HallusionBench_result_sample.json`` format: the question's fields plus ``model_prediction``)
is joined to its question on that key; every other field of the question (``visual_input``,
``gt_answer``, ``gt_answer_details``) is the question file's, never the answer file's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.io import InputError

#: The question count of HallusionBench.json at the pinned commit (text-only questions included).
N_QUESTIONS = 1129

KEY_FIELDS = ("category", "subcategory", "set_id", "figure_id", "question_id")
CATEGORIES = ("VD", "VS")  # visual dependent, visual supplement
VISUAL_INPUTS = ("0", "1", "2")  # text only, original figure, edited figure
GT_ANSWERS = ("0", "1")  # no, yes

Key = tuple[str, str, str, str, str]


@dataclass(frozen=True)
class Question:
    """One HallusionBench question, its fields as strings (as the upstream file writes them)."""

    category: str
    subcategory: str
    set_id: str
    figure_id: str
    question_id: str
    visual_input: str
    question: str
    gt_answer: str
    gt_answer_details: str
    filename: str | None = None

    @property
    def key(self) -> Key:
        return (self.category, self.subcategory, self.set_id, self.figure_id, self.question_id)

    @property
    def pair(self) -> tuple[str, str, str, str]:
        """The question pair: this question across the figures of its set."""
        return (self.category, self.subcategory, self.set_id, self.question_id)


@dataclass(frozen=True)
class Answer:
    """A model's free-text answer to one question, joined to the question."""

    question: Question
    prediction: str
    # the answer record's own visual_input where it differs from the question file's (the
    # public sample predates visual_input 2: it is read, never used, and only counted)
    stale_visual_input: str | None = None


def key_text(key: Sequence[str]) -> str:
    """A key as the reference names it (``VD_illusion_0_1_0``)."""
    return "_".join(key)


def _id(value: Any, name: str, where: str) -> str:
    """An id field as a string: a JSON string or integer (never a bool, float or null)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(f"{where}: {name} must be a string or an integer, got {value!r}")
    text = str(value).strip()
    if not text:
        raise InputError(f"{where}: {name} is empty")
    return text


def _key_of(record: dict[str, Any], where: str, expected: str) -> Key:
    missing = [k for k in KEY_FIELDS if k not in record]
    if missing:
        raise InputError(f"{where}: missing {', '.join(missing)}; {expected}")
    category, subcategory, set_id, figure_id, question_id = (
        _id(record[k], k, where) for k in KEY_FIELDS
    )
    if category not in CATEGORIES:
        raise InputError(f"{where}: category {category!r}; expected VD or VS")
    return (category, subcategory, set_id, figure_id, question_id)


def _records(path: Path, flag: str, what: str, expected: str) -> list[dict[str, Any]]:
    from halluscope.hand_check import no_records
    from halluscope.io import read_json_records

    records = read_json_records(path)
    if len(records) == 1 and isinstance(records[0], list):  # one JSON array
        records = records[0]
    if not records:
        raise no_records(flag, path, what, expected)
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise InputError(f"{path}: record {number}: not a JSON object; {expected}")
    return records


_QUESTION = (
    'expected a JSON array of {"category": "VD"|"VS", "subcategory", "set_id", "figure_id", '
    '"question_id", "visual_input": "0"|"1"|"2", "question", "gt_answer": "0"|"1", '
    '"gt_answer_details"} (HallusionBench.json)'
)


def load_questions(path: Path) -> dict[Key, Question]:
    """Every question of ``path`` (HallusionBench.json) by key, in file order."""
    out: dict[Key, Question] = {}
    records = _records(Path(path), "--questions", "question record", _QUESTION)
    for number, rec in enumerate(records, start=1):
        where = f"{path}: record {number}"
        key = _key_of(rec, where, _QUESTION)
        where = f"{where} ({key_text(key)})"
        if key in out:
            raise InputError(f"{where}: the same five ids as an earlier record")
        fields = {}
        for name, allowed in (("visual_input", VISUAL_INPUTS), ("gt_answer", GT_ANSWERS)):
            if name not in rec:
                raise InputError(f"{where}: missing {name}; {_QUESTION}")
            fields[name] = _id(rec[name], name, where)
            if fields[name] not in allowed:
                raise InputError(f"{where}: {name} {fields[name]!r}; expected {'|'.join(allowed)}")
        for name in ("question", "gt_answer_details"):
            if not isinstance(rec.get(name), str):
                raise InputError(f"{where}: {name} must be a string; {_QUESTION}")
        filename = rec.get("filename")
        if fields["visual_input"] != "0" and key[0] == "VS" and key[3] == "0":
            raise InputError(f"{where}: a VS question of figure 0 must be text-only")
        out[key] = Question(
            *key,
            visual_input=fields["visual_input"],
            question=rec["question"],
            gt_answer=fields["gt_answer"],
            gt_answer_details=rec["gt_answer_details"],
            filename=filename if isinstance(filename, str) else None,
        )
    return out


_ANSWER = (
    'expected a JSON array (or JSON lines) of {"category", "subcategory", "set_id", '
    '"figure_id", "question_id", "model_prediction": "<the model\'s answer>"} '
    "(the format of HallusionBench_result_sample.json)"
)


def load_answers(path: Path, questions: dict[Key, Question]) -> list[Answer]:
    """The answers of ``path`` joined to ``questions``, in the answer file's order; each
    question answered at most once, every answer a known question."""
    out: list[Answer] = []
    seen: dict[Key, int] = {}
    records = _records(Path(path), "--answers", "answer record", _ANSWER)
    for number, rec in enumerate(records, start=1):
        where = f"{path}: record {number}"
        key = _key_of(rec, where, _ANSWER)
        where = f"{where} ({key_text(key)})"
        if key not in questions:
            raise InputError(f"{where}: no such question in HallusionBench.json")
        if key in seen:
            raise InputError(f"{where}: this question is already answered in record {seen[key]}")
        seen[key] = number
        if "model_prediction" not in rec:
            raise InputError(f"{where}: missing model_prediction; {_ANSWER}")
        prediction = rec["model_prediction"]
        if not isinstance(prediction, str):
            raise InputError(
                f"{where}: model_prediction must be a string (the model's answer), "
                f"got {type(prediction).__name__}"
            )
        question = questions[key]
        own = rec.get("visual_input")
        stale = None
        if own is not None and str(own).strip() != question.visual_input:
            stale = str(own).strip()
        out.append(Answer(question, prediction, stale))
    return out
