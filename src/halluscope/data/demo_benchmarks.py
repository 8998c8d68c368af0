"""Loader of the demo's PhD records (``data/demo/phd_questions.yaml``) and the checks every demo
question file shares (Tri-HE's loader:
:func:`halluscope.benchmarks.trihe.data.load_trihe_questions`).

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


def read_yaml_list(path: Path, key: str) -> list[Any]:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except yaml.YAMLError as err:
        raise InputError(f"{path}: not valid YAML ({err})") from None
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        raise InputError(f"{path}: expected a mapping with a list under '{key}'")
    return data[key]


def text_at(rec: Mapping[str, Any], key: str, where: str) -> str:
    value = rec.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: '{key}' must be a non-empty string, got {value!r}")
    return value.strip()


def item_at(items: Mapping[str, Mapping[str, Any]], image_id: Any, where: str) -> Mapping[str, Any]:
    if str(image_id) not in items:
        raise InputError(
            f"{where}: unknown image {image_id!r}; the dataset's images: {', '.join(sorted(items))}"
        )
    return items[str(image_id)]


def load_phd_records(path: str | Path, items: Mapping[str, Mapping[str, Any]]) -> list[PhdRecord]:
    """PhD records in file order (``index`` = position in the file), checked against the items.

    A record without ``ccs_description`` needs ``context: {iac, icc}``; every task must be one of
    :data:`PHD_TASKS`.
    """
    path = Path(path)
    allowed = {"image_id", "task", "yes_question", "no_question", "hitem", "gt", "subject"}
    out: list[PhdRecord] = []
    for index, rec in enumerate(read_yaml_list(path, "records")):
        where = f"{path}: records[{index}]"
        if not isinstance(rec, dict):
            raise InputError(f"{where}: expected a mapping")
        ccs = rec.get("ccs_description")
        keys = allowed | ({"ccs_description"} if ccs is not None else {"context"})
        unknown = sorted(set(rec) - keys)
        if unknown:
            raise InputError(f"{where}: unknown key(s) {unknown} (ccs records have no context)")
        item = item_at(items, rec.get("image_id"), where)
        task = rec.get("task")
        if task not in PHD_TASKS:
            raise InputError(f"{where}: task {task!r} is not one of {', '.join(PHD_TASKS)}")
        context = None
        if ccs is None:
            context = rec.get("context")
            if not isinstance(context, dict) or set(context) != {"iac", "icc"}:
                raise InputError(f"{where}: 'context' must be {{iac: text, icc: text}}")
            context = {mode: text_at(context, mode, f"{where}.context") for mode in ("iac", "icc")}
        out.append(
            PhdRecord(
                index=index,
                image_id=str(item["image_id"]),
                task=str(task),
                yes_question=text_at(rec, "yes_question", where),
                no_question=text_at(rec, "no_question", where),
                context=context,
                hitem=rec.get("hitem"),
                gt=rec.get("gt"),
                subject=rec.get("subject"),
                ccs_description=text_at(rec, "ccs_description", where) if ccs is not None else None,
                image_path=item.get("image"),
            )
        )
    if not out:
        raise InputError(f"{path}: no record")
    return out
