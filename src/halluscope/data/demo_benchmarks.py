"""Loaders of the demo's Tri-HE and PhD question files (``data/demo/{trihe,phd}_questions.yaml``).

Why strict: these files are the answer keys of the demo benchmarks. A typo (an image id that does
not exist, a reference triplet that is not among the image's relations, a PhD record without its
icc context) would silently change what the metrics measure, so every such error stops the stage
with the file, the record and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from halluscope.benchmarks.phd.data import PhdRecord
from halluscope.io import InputError

#: PhD's five tasks (upstream README "Mode and Task"), as the ``task`` values of the records.
PHD_TASKS: tuple[str, ...] = (
    "object_recognition",
    "attribute_recognition",
    "sentiment_understanding",
    "positional_reasoning",
    "counting",
)


def _read_yaml(path: Path, key: str) -> list[Any]:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except yaml.YAMLError as err:
        raise InputError(f"{path}: not valid YAML ({err})") from None
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        raise InputError(f"{path}: expected a mapping with a list under '{key}'")
    return data[key]


def _text(rec: Mapping[str, Any], key: str, where: str) -> str:
    value = rec.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: '{key}' must be a non-empty string, got {value!r}")
    return value.strip()


def _item(items: Mapping[str, Mapping[str, Any]], image_id: Any, where: str) -> Mapping[str, Any]:
    if str(image_id) not in items:
        raise InputError(
            f"{where}: unknown image {image_id!r}; the dataset's images: {', '.join(sorted(items))}"
        )
    return items[str(image_id)]


def load_trihe_questions(
    path: str | Path, items: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Questions in file order: ``{"question_id", "image_id", "question", "answer", "triplets"}``.

    Every reference triplet must be one of the image's ``relations`` (same strings).
    """
    path = Path(path)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, rec in enumerate(_read_yaml(path, "questions")):
        where = f"{path}: questions[{index}]"
        if not isinstance(rec, dict):
            raise InputError(f"{where}: expected a mapping")
        unknown = sorted(set(rec) - {"id", "image", "question", "answer", "triplets"})
        if unknown:
            raise InputError(f"{where}: unknown key(s) {unknown}")
        qid = _text(rec, "id", where)
        where = f"{path}: question {qid!r}"
        if qid in seen:
            raise InputError(f"{where}: the id is used twice")
        seen.add(qid)
        item = _item(items, rec.get("image"), where)
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
                "question": _text(rec, "question", where),
                "answer": _text(rec, "answer", where),
                "triplets": [[str(x) for x in t] for t in triplets],
            }
        )
    if not out:
        raise InputError(f"{path}: no question")
    return out


def load_phd_records(path: str | Path, items: Mapping[str, Mapping[str, Any]]) -> list[PhdRecord]:
    """PhD records in file order (``index`` = position in the file), checked against the items.

    A record without ``ccs_description`` needs ``context: {iac, icc}``; every task must be one of
    :data:`PHD_TASKS`.
    """
    path = Path(path)
    allowed = {"image_id", "task", "yes_question", "no_question", "hitem", "gt", "subject"}
    out: list[PhdRecord] = []
    for index, rec in enumerate(_read_yaml(path, "records")):
        where = f"{path}: records[{index}]"
        if not isinstance(rec, dict):
            raise InputError(f"{where}: expected a mapping")
        ccs = rec.get("ccs_description")
        keys = allowed | ({"ccs_description"} if ccs is not None else {"context"})
        unknown = sorted(set(rec) - keys)
        if unknown:
            raise InputError(f"{where}: unknown key(s) {unknown} (ccs records have no context)")
        item = _item(items, rec.get("image_id"), where)
        task = rec.get("task")
        if task not in PHD_TASKS:
            raise InputError(f"{where}: task {task!r} is not one of {', '.join(PHD_TASKS)}")
        context = None
        if ccs is None:
            context = rec.get("context")
            if not isinstance(context, dict) or set(context) != {"iac", "icc"}:
                raise InputError(f"{where}: 'context' must be {{iac: text, icc: text}}")
            context = {mode: _text(context, mode, f"{where}.context") for mode in ("iac", "icc")}
        out.append(
            PhdRecord(
                index=index,
                image_id=str(item["image_id"]),
                task=str(task),
                yes_question=_text(rec, "yes_question", where),
                no_question=_text(rec, "no_question", where),
                context=context,
                hitem=rec.get("hitem"),
                gt=rec.get("gt"),
                subject=rec.get("subject"),
                ccs_description=_text(rec, "ccs_description", where) if ccs is not None else None,
                image_path=item.get("image"),
            )
        )
    if not out:
        raise InputError(f"{path}: no record")
    return out
