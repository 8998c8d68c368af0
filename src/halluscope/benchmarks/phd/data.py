"""Loaders and prompts for PhD (Liu et al., CVPR 2025, arXiv:2403.11116; jiazhen-code/PhD).

Two files:

* the main ``data.json`` (a JSON array). A record for PhD-base/iac/icc has ``image_id`` (COCO
  id, a string), ``task``, ``yes_question``, ``no_question``, ``hitem``, ``gt``, ``subject``
  and ``context`` = ``{"iac": inaccurate context, "icc": incorrect context}``; a record with
  ``ccs_description`` belongs to PhD-ccs (``image_id`` = generated image id, ``task``,
  ``yes_question``, ``no_question``, ``ccs_description``).
* ``data_ccs.json``, the released CCS subset: ``image_path``, ``yes_question``,
  ``no_question``, ``ccs_description`` only. It has no ``image_id`` (taken from the image file
  name, ``images/CCS_images/12.png`` -> ``"12"``) and no ``task`` (``None``; prompts and
  responses then use :data:`UNKNOWN_TASK`). Three images carry two records each, so records are
  told apart by their position in the file, not by image.

Prompts are built as the upstream README's ``get_data`` builds them: base and ccs ask the
question as it is; iac and icc ask ``context[mode] + CONTEXT_INSTRUCTION + question`` (the
instruction has a leading and a trailing space, and nothing else is inserted). Base/iac/icc use
the main file's non-ccs records, ccs its ccs records (or ``data_ccs.json``). Every record gives
two prompts, the yes question (label ``yes``) and the no question (label ``no``). The paper's
earlier name for iac is "sec"; it is accepted as an alias.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from halluscope.data.demo_benchmarks import item_at, read_yaml_list, text_at
from halluscope.io import InputError, read_json

MODES = ("base", "iac", "icc", "ccs")
MODE_ALIASES = {"sec": "iac"}
CONTEXT_INSTRUCTION = (
    " In case there is an inconsistency between the context and the image content, "
    "you should follow the image. "
)
UNKNOWN_TASK = "unspecified"


def canonical_mode(mode: str) -> str:
    """``base``/``iac``/``icc``/``ccs`` (``sec`` -> ``iac``); anything else is an error."""
    mode = MODE_ALIASES.get(mode, mode)
    if mode not in MODES:
        raise ValueError(f"unknown PhD mode {mode!r}; expected one of {', '.join(MODES)} (or sec)")
    return mode


@dataclass(frozen=True)
class PhdRecord:
    """One PhD item: a yes question and a no question about one image."""

    index: int
    image_id: str
    task: str | None
    yes_question: str
    no_question: str
    context: dict[str, str] | None = None
    hitem: Any = None
    gt: Any = None
    subject: Any = None
    ccs_description: str | None = None
    image_path: str | None = None

    @property
    def is_ccs(self) -> bool:
        return self.ccs_description is not None


@dataclass(frozen=True)
class PhdPrompt:
    """One question to put to a model, with its expected answer."""

    id: str
    mode: str
    task: str
    label: str
    question: str
    image_id: str
    image_path: str


def _text(rec: dict, key: str, where: str) -> str:
    value = rec.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: {key!r} must be a non-empty string")
    return value


def _annotations(rec: Mapping[str, Any]) -> dict[str, Any]:
    """The record's optional PhD annotations (hallucinated item, ground truth, subject)."""
    return {key: rec.get(key) for key in ("hitem", "gt", "subject")}


def _records(path: Path) -> list[dict]:
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON array of records")
    for index, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise InputError(f"{path}: record {index}: expected an object")
    return data


def load_phd(path: str | Path) -> list[PhdRecord]:
    """Read the main PhD ``data.json`` (base/iac/icc records and ccs records)."""
    path = Path(path)
    out = []
    for index, rec in enumerate(_records(path)):
        where = f"{path}: record {index}"
        if "image_id" not in rec or not isinstance(rec["image_id"], str | int):
            raise InputError(f"{where}: 'image_id' must be a string or an integer")
        context = rec.get("context")
        if context is not None and not isinstance(context, dict):
            raise InputError(f"{where}: 'context' must be an object {{'iac', 'icc'}}")
        task = rec.get("task")
        if task is not None and not isinstance(task, str):
            raise InputError(f"{where}: 'task' must be a string")
        ccs = rec.get("ccs_description")
        out.append(
            PhdRecord(
                index=index,
                image_id=str(rec["image_id"]),
                task=task,
                yes_question=_text(rec, "yes_question", where),
                no_question=_text(rec, "no_question", where),
                context=context,
                **_annotations(rec),
                ccs_description=str(ccs) if ccs is not None else None,
            )
        )
    return out


def load_phd_ccs(path: str | Path) -> list[PhdRecord]:
    """Read ``data_ccs.json`` (``image_path``, ``yes_question``, ``no_question``, ...)."""
    path = Path(path)
    out = []
    for index, rec in enumerate(_records(path)):
        where = f"{path}: record {index}"
        image_path = _text(rec, "image_path", where)
        task = rec.get("task")
        out.append(
            PhdRecord(
                index=index,
                image_id=str(rec.get("image_id", PurePosixPath(image_path).stem)),
                task=task if isinstance(task, str) else None,
                yes_question=_text(rec, "yes_question", where),
                no_question=_text(rec, "no_question", where),
                ccs_description=_text(rec, "ccs_description", where),
                image_path=image_path,
            )
        )
    return out


#: PhD's five tasks (upstream README "Mode and Task"), as the ``task`` values of the records.
PHD_TASKS: tuple[str, ...] = (
    "object_recognition",
    "attribute_recognition",
    "sentiment_understanding",
    "positional_reasoning",
    "counting",
)


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
                **_annotations(rec),
                ccs_description=text_at(rec, "ccs_description", where) if ccs is not None else None,
                image_path=item.get("image"),
            )
        )
    if not out:
        raise InputError(f"{path}: no record")
    return out


def coco_image_path(image_id: str, images_root: str | Path | None = None) -> str:
    """Upstream's COCO path: train2014 if that file exists under ``images_root``, else val2014."""
    name = image_id.zfill(12)
    train = f"images/train2014/COCO_train2014_{name}.jpg"
    root = Path(images_root) if images_root is not None else Path(".")
    if os.path.exists(root / train):
        return train
    return f"images/val2014/COCO_val2014_{name}.jpg"


def build_prompts(
    records: list[PhdRecord], mode: str, images_root: str | Path | None = None
) -> list[PhdPrompt]:
    """The mode's prompts, two per record (yes then no), in record order.

    ``id`` = ``"{mode}/{record index}/{label}"``; image paths are relative, as upstream writes
    them (``images_root`` is only used to choose train2014 or val2014).
    """
    mode = canonical_mode(mode)
    out = []
    for rec in records:
        if rec.is_ccs != (mode == "ccs"):
            continue
        if mode in ("iac", "icc"):
            if not rec.context or not isinstance(rec.context.get(mode), str):
                raise InputError(f"PhD record {rec.index}: no context[{mode!r}] for mode {mode}")
            prefix = rec.context[mode] + CONTEXT_INSTRUCTION
        else:
            prefix = ""
        if mode == "ccs":
            image_path = rec.image_path or f"images/CCS_images/{rec.image_id}.png"
        else:
            image_path = coco_image_path(rec.image_id, images_root)
        for label, question in (("yes", rec.yes_question), ("no", rec.no_question)):
            out.append(
                PhdPrompt(
                    id=f"{mode}/{rec.index}/{label}",
                    mode=mode,
                    task=rec.task or UNKNOWN_TASK,
                    label=label,
                    question=prefix + question,
                    image_id=rec.image_id,
                    image_path=image_path,
                )
            )
    return out


def items(options: dict[str, Any]) -> list[dict]:
    """Items of dataset ``phd-ccs``: PhD's counter-common-sense images (``phd/data_ccs.json``),
    one per image in order of first appearance, no annotations besides the questions; images from
    ``data.images`` (the folder that holds upstream's ``images/CCS_images/``) when given, else
    ``image: null``."""
    from halluscope.data.fetch import resolve
    from halluscope.stages.data import image_file, image_item, limit_records

    records = load_phd_ccs(resolve(options.get("image_list", "phd/data_ccs.json")))
    first: dict[str, str] = {}
    for record in records:
        first.setdefault(
            record.image_id, record.image_path or f"images/CCS_images/{record.image_id}.png"
        )
    out = []
    for image_id, relative in limit_records(list(first.items()), options):
        out.append(
            image_item(
                image_id,
                image_file(options, relative, image_id),
                {"dataset": "PhD-ccs", "image_path": relative},
            )
        )
    return out
