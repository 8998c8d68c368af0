"""MSCOCO ground truth for CHAIR: per image, the set of the 80 class names that are present.

The reference CHAIR evaluator (Rohrbach et al. 2018, ``utils/chair.py``) does not use the
instance annotations alone: it unites the instance categories of an image with every object its
five human captions mention, parsed by the same rules as the captions under test. An object a
human annotator names in a caption is thus never counted as a hallucination, even when no
segmentation mask was drawn for it. We rebuild that set with
:class:`halluscope.objects.parser.ObjectParser`, so the normalisation variant (``pattern`` or
``lemmatizer``) and the synonym table are explicit and recorded in the output.

Output format (also accepted by :func:`load_gt`)::

    {"imid_to_objects": {"<image id>": [class names, sorted]}, "variant": ..., ...}
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from halluscope.io import InputError, read_json, write_json

__all__ = [
    "COCO_ZIP_CAPTIONS",
    "COCO_ZIP_INSTANCES",
    "build_chair_gt",
    "build_chair_gt_document",
    "gt_class",
    "load_coco_json",
    "load_gt",
    "objects_from_captions",
    "objects_from_instances",
]

#: Members of ``annotations_trainval2014.zip`` the reference CHAIR reads (train + val).
COCO_ZIP_INSTANCES: tuple[str, ...] = (
    "annotations/instances_train2014.json",
    "annotations/instances_val2014.json",
)
COCO_ZIP_CAPTIONS: tuple[str, ...] = (
    "annotations/captions_train2014.json",
    "annotations/captions_val2014.json",
)


def load_coco_json(path: Path | str, member: str | None = None) -> dict[str, Any]:
    """Read a COCO annotation file, or ``member`` of a zip archive without extracting it."""
    path = Path(path)
    name = f"{path}:{member}" if member else str(path)
    try:
        if member is None:
            doc = read_json(path)
        else:
            with zipfile.ZipFile(path) as archive, archive.open(member) as handle:
                doc = json.load(handle)
    except KeyError:
        raise InputError(f"{path}: the zip archive has no member {member!r}") from None
    except zipfile.BadZipFile as err:
        raise InputError(f"{path}: not a zip archive ({err})") from None
    except json.JSONDecodeError as err:
        raise InputError(f"{name}:{err.lineno}: malformed JSON ({err.msg})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("annotations"), list):
        raise InputError(f"{name}: expected a COCO annotation file with an 'annotations' list")
    doc.setdefault("_source", name)
    return doc


def _name(doc: Mapping[str, Any], fallback: str) -> str:
    return str(doc.get("_source", fallback))


def _image_ids(doc: Mapping[str, Any]) -> list[str]:
    """Ids of the ``images`` list: an image without objects still gets an (empty) entry."""
    images = doc.get("images") or []
    return [str(img["id"]) for img in images if isinstance(img, Mapping) and "id" in img]


def objects_from_instances(
    doc: Mapping[str, Any], synonyms: Mapping[str, str], name: str = "instances"
) -> dict[str, set[str]]:
    """Image id -> class names of its instance annotations.

    Category names go through the synonym table like in the reference (``inverse_synonym_dict``);
    a category that is not in the table is an error, because silently dropping it would remove
    true objects from the ground truth.
    """
    name = _name(doc, name)
    categories: dict[Any, str] = {}
    for cat in doc.get("categories") or []:
        try:
            cat_name = cat["name"]
            categories[cat["id"]] = synonyms[cat_name]
        except KeyError as err:
            raise InputError(
                f"{name}: category {cat!r}: {err} is not a class name or synonym of the "
                "synonym table (expected 'id' and 'name' of an MSCOCO class)"
            ) from None
    out: dict[str, set[str]] = {i: set() for i in _image_ids(doc)}
    for index, ann in enumerate(doc["annotations"]):
        try:
            image_id, category_id = str(ann["image_id"]), ann["category_id"]
        except (KeyError, TypeError):
            raise InputError(
                f"{name}: annotations[{index}]: expected 'image_id' and 'category_id'"
            ) from None
        if category_id not in categories:
            raise InputError(
                f"{name}: annotations[{index}]: category_id {category_id!r} is not in 'categories'"
            )
        out.setdefault(image_id, set()).add(categories[category_id])
    return out


def objects_from_captions(
    doc: Mapping[str, Any], parser: Any, name: str = "captions"
) -> dict[str, set[str]]:
    """Image id -> class names mentioned in its human captions (``parser``: ObjectParser)."""
    name = _name(doc, name)
    out: dict[str, set[str]] = {i: set() for i in _image_ids(doc)}
    for index, ann in enumerate(doc["annotations"]):
        try:
            image_id, caption = str(ann["image_id"]), ann["caption"]
        except (KeyError, TypeError):
            raise InputError(
                f"{name}: annotations[{index}]: expected 'image_id' and 'caption'"
            ) from None
        if not isinstance(caption, str):
            raise InputError(f"{name}: annotations[{index}]: 'caption' must be a string")
        out.setdefault(image_id, set()).update(m.class_name for m in parser.parse(caption))
    return out


def build_chair_gt(
    instances: Iterable[Mapping[str, Any]],
    captions: Iterable[Mapping[str, Any]],
    variant: str = "pattern",
    synonyms: Mapping[str, str] | None = None,
) -> dict[str, list[str]]:
    """Image id -> sorted class names: instance categories united with caption objects.

    ``instances`` and ``captions`` are loaded COCO documents (e.g. train2014 and val2014, as the
    reference unites both). ``synonyms`` is a :func:`~halluscope.objects.coco.load_synonyms`
    table (``None``: halluscope's builtin one; the reference list reproduces published numbers).
    """
    from halluscope.objects.coco import load_synonyms
    from halluscope.objects.parser import ObjectParser

    table = dict(load_synonyms(None) if synonyms is None else synonyms)
    parser = ObjectParser(synonyms, variant)
    merged: dict[str, set[str]] = {}
    for doc in instances:
        for image_id, objs in objects_from_instances(doc, table).items():
            merged.setdefault(image_id, set()).update(objs)
    for doc in captions:
        for image_id, objs in objects_from_captions(doc, parser).items():
            merged.setdefault(image_id, set()).update(objs)
    return {image_id: sorted(objs) for image_id, objs in sorted(merged.items())}


def build_chair_gt_document(
    instances_files: Sequence[Path | tuple[Path, str]],
    captions_files: Sequence[Path | tuple[Path, str]],
    variant: str,
    synonyms_path: Path | None = None,
) -> dict[str, Any]:
    """The CHAIR ground-truth document from annotation files (or ``(zip, member)`` pairs).

    Provenance fields name the inputs by file name and the synonym table by its sha256, so the
    document is byte-identical wherever the inputs live.
    """
    from halluscope.objects.coco import load_synonyms

    def load(spec: Path | tuple[Path, str]) -> dict[str, Any]:
        return load_coco_json(*spec) if isinstance(spec, tuple) else load_coco_json(spec)

    def label(spec: Path | tuple[Path, str]) -> str:
        return spec[1].rsplit("/", 1)[-1] if isinstance(spec, tuple) else Path(spec).name

    synonyms = load_synonyms(synonyms_path) if synonyms_path is not None else None
    if synonyms_path is not None:
        table = "sha256:" + hashlib.sha256(Path(synonyms_path).read_bytes()).hexdigest()
    else:
        table = "builtin"
    imid_to_objects = build_chair_gt(
        (load(s) for s in instances_files), (load(s) for s in captions_files), variant, synonyms
    )
    return {
        "description": (
            "CHAIR ground-truth objects per MSCOCO image: instance categories united with the "
            "objects parsed from the human captions, mapped to the 80 class names "
            "(built by halluscope.data.coco)."
        ),
        "imid_to_objects": imid_to_objects,
        "inputs": {
            "captions": [label(s) for s in captions_files],
            "instances": [label(s) for s in instances_files],
        },
        "synonyms": table,
        "variant": variant,
    }


def write_gt(path: Path | str, document: Mapping[str, Any]) -> None:
    """Write a ground-truth document atomically (sorted keys: byte-identical reruns)."""
    write_json(path, dict(document))


def load_gt(path: Path | str, parser: Any = None) -> dict[str, list[str]]:
    """Image id (str) -> sorted unique class names, from either GT format.

    Accepts ``{"imid_to_objects": {...}, ...}`` (our output and the shared prebuilt files) or a
    plain ``{image_id: [objects]}`` mapping. Errors name the file and the offending key.

    ``parser`` (an :class:`~halluscope.objects.parser.ObjectParser`, for the hand-check commands):
    each name is read as a caption's object word is (:func:`gt_class`: ``Person`` and ``people``
    are ``person``), and a name outside the parser's vocabulary is an error naming the image id
    and the name. Without it the names are kept as written (the pipeline's GT files hold the
    class names already); on class names the two agree.
    """
    path = Path(path)
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a JSON object mapping image ids to object lists")
    mapping = doc["imid_to_objects"] if "imid_to_objects" in doc else doc
    where = "imid_to_objects" if mapping is not doc else "top level"
    if not isinstance(mapping, dict):
        raise InputError(f"{path}: 'imid_to_objects' must be an object {{image_id: [objects]}}")
    out: dict[str, list[str]] = {}
    classes: dict[str, str | None] = {}  # name -> its class, each distinct name parsed once
    for key, value in mapping.items():
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InputError(
                f"{path}: {where} key {key!r}: expected a list of object names (strings), "
                f"got {json.dumps(value)[:80]}"
            )
        if parser is not None:
            for name in value:
                if name not in classes:
                    classes[name] = gt_class(parser, name)
                if classes[name] is None:
                    raise InputError(
                        f"{path}: {where} key {key!r}: {name!r} is not an MSCOCO object of the "
                        "synonym table (neither a class name nor a synonym or plural of one); "
                        "expected a class name such as 'person' or 'dining table'"
                    )
            value = [classes[name] for name in value]
        out[str(key)] = sorted(set(value))
    return out


def gt_class(parser: Any, name: str) -> str | None:
    """The class a ground-truth ``name`` stands for, read as a caption's object word is read by
    ``parser`` (an :class:`~halluscope.objects.parser.ObjectParser`), else ``None``.

    A class name of the parser's table is itself (so valid names never change); otherwise the
    lower-cased name is looked up in the synonym table, then parsed as a caption: it must be one
    mention spanning the whole name (``Dining Tables`` -> ``dining table``; ``red dog`` -> None).
    """
    if name in parser.synonyms.values():
        return name
    key = " ".join(name.lower().split())
    if key in parser.synonyms:
        return parser.synonyms[key]
    mentions = parser.parse(key)
    if len(mentions) == 1 and (mentions[0].start, mentions[0].end) == (0, len(key)):
        return mentions[0].class_name
    return None
