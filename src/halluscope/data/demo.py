"""The demo dataset: nine images that ship inside installed packages, with our own annotations.

The ``demo`` profile has to run offline on any machine, so its images come from packages that are
already dependencies (scikit-image, scikit-learn, matplotlib) instead of a download. The object
annotations in ``data/demo/annotations.yaml`` are written by hand (see ``data/demo/DATACARD.md``)
and are the ground truth of every demo experiment, so they are validated strictly when loaded.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import yaml
from PIL import Image

from halluscope.io import InputError, atomic_write_bytes, write_jsonl
from halluscope.objects.coco import COCO_CLASSES  # one list of the 80 names for the whole package
from halluscope.strict_yaml import strict_load

__all__ = [
    "COCO_CLASSES",
    "DEMO_IMAGES",
    "DemoImage",
    "encode_png",
    "export_items",
    "load_annotations",
    "load_demo_image",
]

_COCO_SET = frozenset(COCO_CLASSES)

REQUIRED_KEYS: tuple[str, ...] = ("id", "source", "caption", "coco", "other", "relations")
_KEY_LIST = ", ".join(REQUIRED_KEYS)
SOURCE_KEYS: tuple[str, ...] = ("package", "loader", "license")
_ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]*")  # ids become file names: keep them tame


@dataclass(frozen=True)
class DemoImage:
    """Where a demo image comes from: the package that ships it and the call that loads it."""

    package: str
    loader: str  # the call as a human would type it; repeated in annotations.yaml and the card
    load: Callable[[], np.ndarray]


def _load_skimage(name: str) -> np.ndarray:
    from skimage import data

    image = getattr(data, name)()
    if isinstance(image, tuple):  # stereo_motorcycle returns (left, right, disparity)
        image = image[0]
    return np.asarray(image)


def _load_sklearn(name: str) -> np.ndarray:
    from sklearn.datasets import load_sample_image

    return np.asarray(load_sample_image(name))


def _load_matplotlib(name: str) -> np.ndarray:
    from matplotlib import cbook

    # A path rather than the default file object, so the file is closed deterministically.
    with Image.open(cbook.get_sample_data(name, asfileobj=False)) as image:
        return np.asarray(image.convert("RGB"))


def _skimage(name: str) -> DemoImage:
    return DemoImage("scikit-image", f"skimage.data.{name}", partial(_load_skimage, name))


DEMO_IMAGES: Mapping[str, DemoImage] = MappingProxyType(
    {
        "astronaut": _skimage("astronaut"),
        "chelsea": _skimage("chelsea"),
        "coffee": _skimage("coffee"),
        "rocket": _skimage("rocket"),
        "stereo_motorcycle": _skimage("stereo_motorcycle"),
        "camera": _skimage("camera"),
        "china": DemoImage(
            "scikit-learn",
            'sklearn.datasets.load_sample_image("china.jpg")',
            partial(_load_sklearn, "china.jpg"),
        ),
        "flower": DemoImage(
            "scikit-learn",
            'sklearn.datasets.load_sample_image("flower.jpg")',
            partial(_load_sklearn, "flower.jpg"),
        ),
        "grace_hopper": DemoImage(
            "matplotlib",
            'matplotlib.cbook.get_sample_data("grace_hopper.jpg")',
            partial(_load_matplotlib, "grace_hopper.jpg"),
        ),
    }
)


def load_demo_image(image_id: str) -> Image.Image:
    """Load a demo image as an RGB PIL image (grey-level images get three equal channels)."""
    try:
        spec = DEMO_IMAGES[image_id]
    except KeyError:
        raise ValueError(
            f"unknown demo image id {image_id!r}; expected one of: {', '.join(sorted(DEMO_IMAGES))}"
        ) from None
    array = np.ascontiguousarray(spec.load())
    if array.dtype != np.uint8 or array.ndim not in (2, 3):
        raise ValueError(
            f"demo image {image_id!r} from {spec.loader}: expected a uint8 (H, W) or (H, W, C) "
            f"array, got {array.dtype} with shape {array.shape}"
        )
    return Image.fromarray(array).convert("RGB")


def encode_png(image: Image.Image) -> bytes:
    """PNG bytes without any metadata chunk, so that the same pixels always give the same file."""
    rgb = image.convert("RGB")
    clean = Image.frombytes("RGB", rgb.size, rgb.tobytes())  # drops info (dpi, icc, exif, text)
    buffer = io.BytesIO()
    clean.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


# --------------------------------------------------------------------------- annotations


def _describe(value: Any) -> str:
    if isinstance(value, bool):  # YAML 1.1 reads unquoted on/off/yes/no as booleans
        return f"{value!r} (a boolean: quote words such as 'on', 'off', 'yes', 'no' in YAML)"
    return f"{value!r} ({type(value).__name__})"


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and value.strip() == value and value != ""


def _name_list(where: str, key: str, value: Any) -> list[str]:
    if not isinstance(value, list):
        raise InputError(f"{where}: '{key}' must be a list of names, got {_describe(value)}")
    seen: set[str] = set()
    for position, name in enumerate(value):
        if not _is_name(name):
            raise InputError(
                f"{where}: '{key}'[{position}] must be a non-empty string without surrounding "
                f"spaces, got {_describe(name)}"
            )
        if name in seen:
            raise InputError(f"{where}: '{key}' lists {name!r} twice; expected unique names")
        seen.add(name)
    return list(value)


def _validate_record(
    path: Path, index: int, raw: Any, first_index: dict[str, int]
) -> dict[str, Any]:
    """Check one annotation record; every error names the file, the record and the expectation."""
    where = f"{path}: record {index}"
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a mapping with keys {_KEY_LIST}, got {_describe(raw)}")
    if isinstance(raw.get("id"), str):
        where += f" (id {raw['id']!r})"
    missing = [key for key in REQUIRED_KEYS if key not in raw]
    if missing:
        raise InputError(f"{where}: missing key(s) {', '.join(missing)}; expected keys {_KEY_LIST}")
    unknown = sorted(str(key) for key in raw if key not in REQUIRED_KEYS)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)}; expected only {_KEY_LIST}")

    image_id = raw["id"]
    if not isinstance(image_id, str) or not _ID_PATTERN.fullmatch(image_id):
        raise InputError(
            f"{where}: 'id' must match {_ID_PATTERN.pattern} (it becomes a file name), "
            f"got {_describe(image_id)}"
        )
    if image_id in first_index:
        raise InputError(
            f"{where}: duplicate id {image_id!r} (already used by record {first_index[image_id]}); "
            "expected unique ids"
        )
    first_index[image_id] = index

    source = raw["source"]
    if not isinstance(source, dict):
        raise InputError(
            f"{where}: 'source' must be a mapping with keys {', '.join(SOURCE_KEYS)}, "
            f"got {_describe(source)}"
        )
    for key in SOURCE_KEYS:
        if not isinstance(source.get(key), str) or not source[key].strip():
            got = _describe(source.get(key))
            raise InputError(f"{where}: 'source.{key}' must be a non-empty string, got {got}")

    caption = raw["caption"]
    if not isinstance(caption, str) or not caption.strip():
        raise InputError(f"{where}: 'caption' must be a non-empty string, got {_describe(caption)}")

    coco = _name_list(where, "coco", raw["coco"])
    for name in coco:
        if name not in _COCO_SET:
            raise InputError(
                f"{where}: 'coco' contains {name!r}, which is not an MSCOCO class name; expected "
                "one of the 80 canonical names (e.g. 'person', 'dining table', 'potted plant')"
            )

    other = _name_list(where, "other", raw["other"])
    for name in other:
        if name != name.lower():
            raise InputError(f"{where}: 'other' contains {name!r}; expected lower-case names")
        if name in _COCO_SET:
            raise InputError(
                f"{where}: 'other' contains the MSCOCO class {name!r}; list it under 'coco'"
            )

    known = set(coco) | set(other)
    relations_raw = raw["relations"]
    if not isinstance(relations_raw, list):
        raise InputError(
            f"{where}: 'relations' must be a list of [subject, relation, object] triplets, "
            f"got {_describe(relations_raw)}"
        )
    relations: list[list[str]] = []
    for position, triplet in enumerate(relations_raw):
        label = f"{where}: 'relations'[{position}]"
        if not isinstance(triplet, list) or len(triplet) != 3:
            raise InputError(
                f"{label}: expected a [subject, relation, object] list of 3 strings, "
                f"got {_describe(triplet)}"
            )
        for part in triplet:
            if not isinstance(part, str) or not part.strip():
                raise InputError(f"{label}: expected 3 non-empty strings, got {_describe(part)}")
        for role, name in (("subject", triplet[0]), ("object", triplet[2])):
            if name not in known:
                raise InputError(
                    f"{label}: {role} {name!r} is not listed in 'coco' or 'other' of this record"
                )
        relations.append(list(triplet))

    return {
        "id": image_id,
        "source": dict(source),
        "caption": caption.strip(),
        "coco": coco,
        "other": other,
        "relations": relations,
    }


def load_annotations(path: str | Path) -> list[dict[str, Any]]:
    """Read and validate ``annotations.yaml``; bad input raises ``InputError`` (a ValueError)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: file not found; expected the demo annotation YAML") from None
    except UnicodeDecodeError as err:
        line = path.read_bytes()[: err.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}: not valid UTF-8; expected a UTF-8 text file") from None
    try:
        document = strict_load(text)  # a duplicate key is an error, not the last one
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err)
        raise InputError(f"{path}{line}: malformed YAML ({problem})") from None
    if not isinstance(document, dict) or not isinstance(document.get("images"), list):
        raise InputError(f"{path}: expected a mapping with an 'images' list at the top level")
    extra = sorted(str(key) for key in document if key != "images")
    if extra:
        raise InputError(
            f"{path}: unknown top-level key(s) {', '.join(extra)}; expected only 'images'"
        )
    first_index: dict[str, int] = {}
    return [
        _validate_record(path, index, raw, first_index)
        for index, raw in enumerate(document["images"])
    ]


# --------------------------------------------------------------------------- export


def export_items(
    annotations: Sequence[Mapping[str, Any]], images_dir: Path, items_path: Path
) -> None:
    """Write each image as ``images_dir/{id}.png`` and the dataset's ``items.jsonl``.

    ``image`` in each item is ``images_dir/{id}.png`` exactly as given (pass a path relative to
    the project root), so that the artifact does not depend on where the repository is checked out.
    """
    images_dir = Path(images_dir)
    records: list[dict[str, Any]] = []
    for annotation in annotations:
        image_id = annotation["id"]
        png = encode_png(load_demo_image(image_id))
        png_path = images_dir / f"{image_id}.png"
        atomic_write_bytes(png_path, png)
        records.append(
            {
                "image_id": image_id,
                "image": png_path.as_posix(),
                "image_sha256": hashlib.sha256(png).hexdigest(),
                "gt_objects": sorted(annotation["coco"]),
                "other_objects": sorted(annotation["other"]),
                "relations": [list(triplet) for triplet in annotation["relations"]],
                "caption": annotation["caption"],
                "source": dict(annotation["source"]),
            }
        )
    write_jsonl(items_path, records)
