"""The checks every demo question file shares (``data/demo/{trihe,phd}_questions.yaml``, read by
:func:`halluscope.benchmarks.trihe.data.load_trihe_questions` and
:func:`halluscope.benchmarks.phd.data.load_phd_records`).

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

from halluscope.io import InputError
from halluscope.strict_yaml import strict_load


def read_yaml_list(path: Path, key: str) -> list[Any]:
    try:
        data = strict_load(Path(path).read_text(encoding="utf-8"))
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
