"""Data stage: per-image ground truth (items.jsonl) and, where images exist, the images.

Datasets:
* ``demo``: the images installed packages ship, with our authored annotations.
* ``pope-captions``: the 2,000 MSCOCO val2014 images of POPE/CAOS, identified by the image ids of
  a POPE caption file; GT = the CHAIR ground truth of MSCOCO 2014 (``coco/chair_gt_objects_*``).
  No images: items have ``image: null`` (out-of-domain objects then stay unverified).
* ``coco``: the same images with the files of a local MSCOCO val2014 folder, for the oracle and
  real LVLMs (``data.images``).
* a packaged benchmark's datasets (:func:`halluscope.benchmarks.dataset_items`, e.g. Tri-HE's
  ``trihe-gqa``, PhD's ``phd-ccs``; each lists them in its schema): items from that benchmark's
  own ``data.items``.
``data.limit`` keeps the first N images of the file (for a quick look or an LLM stage on a
subset); the tables say so in their setting note.
Raw inputs are resolved through ``halluscope.data.fetch`` (mirror, cache or pinned download,
checksums verified).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.io import InputError, read_json_records, read_jsonl, sha256_file, write_jsonl
from halluscope.settings import StageSettings, derived, param, plain
from halluscope.stage_command import stage

DATASETS = ("demo", "pope-captions", "coco")


#: The keys of section ``data`` the loaders read as options (the others are the dataset and the
#: demo's annotations).
OPTION_KEYS = ("image_list", "gt_variant", "images", "limit")


@dataclass(frozen=True)
class DataSettings(StageSettings):
    """What the data stage reads from params (section ``data``): the dataset, the demo's
    annotations file, and the loader's options (``limit``, data files of a profile)."""

    dataset: str = param("data.dataset")
    annotations: Path = derived(lambda config: Path(config["data"]["annotations"]))
    options: dict = derived(
        lambda config: {k: plain(config["data"][k]) for k in OPTION_KEYS if k in config["data"]},
        default_factory=dict,
    )


@stage("data")
def run(settings: DataSettings, items: Path, images: Path) -> None:
    """The items of a dataset (items.jsonl: ground-truth objects per image) and its images."""
    dataset, annotations, options = settings.dataset, settings.annotations, settings.options or {}
    if dataset == "demo":
        from halluscope.data.demo import export_items, load_annotations

        export_items(load_annotations(annotations), images, items)
    elif dataset in ("pope-captions", "coco"):
        images.mkdir(parents=True, exist_ok=True)
        write_jsonl(items, coco_items(dataset, options))
    elif dataset in _packaged_items():
        images.mkdir(parents=True, exist_ok=True)
        write_jsonl(items, _packaged_items()[dataset](options))
    else:
        valid = ", ".join([*DATASETS, *_packaged_items()])
        raise InputError(f"data.dataset: unknown dataset {dataset!r}; valid datasets: {valid}")


def _packaged_items() -> dict:
    from halluscope.benchmarks import dataset_items

    return dataset_items()


def coco_items(dataset: str, options: dict[str, Any]) -> list[dict]:
    """Items of the POPE/CAOS MSCOCO subset, in the order of the image-list file."""
    from halluscope.data.coco import load_gt
    from halluscope.data.fetch import resolve, resolve_input

    image_list = resolve_input(options.get("image_list", "pope/captions/Instruction1_llava.json"))
    variant = options.get("gt_variant", "pattern")
    gt = load_gt(resolve(f"coco/chair_gt_objects_{variant}.json"))
    ids = list(dict.fromkeys(str(r["image_id"]) for r in read_json_records(image_list)))
    folder = Path(options["images"]) if dataset == "coco" else None
    out = []
    for image_id in limit_records(ids, options):
        if image_id not in gt:
            raise InputError(f"{image_list}: image id {image_id} has no MSCOCO ground truth")
        image = sha = None
        if folder is not None:
            path = folder / f"COCO_val2014_{int(image_id):012d}.jpg"
            if not path.exists():
                raise InputError(
                    f"data.images: image {path} not found (MSCOCO val2014 file of "
                    f"image id {image_id})"
                )
            image, sha = str(path), sha256_file(path)
        out.append(
            {
                "image_id": image_id,
                "image": image,
                "image_sha256": sha,
                "gt_objects": gt[image_id],
                "other_objects": [],
                "relations": [],
                "caption": "",
                "source": {"dataset": "MSCOCO val2014", "gt": variant},
            }
        )
    return out


def image_file(
    options: dict[str, Any], relative: str, image_id: str
) -> tuple[str | None, str | None]:
    """(path, sha256) of an item's image under ``data.images``, or (None, None) without images."""
    if not options.get("images"):
        return None, None
    path = Path(options["images"]) / relative
    if not path.is_file():
        raise InputError(f"data.images: image {path} not found (image of item {image_id!r})")
    return str(path), sha256_file(path)


def image_item(
    image_id: str,
    image: tuple[str | None, str | None],
    source: dict[str, Any],
    other_objects: list[str] | None = None,
    relations: list[list[str]] | None = None,
) -> dict[str, Any]:
    """An item of a benchmark's own images: no MSCOCO ground truth, no caption."""
    return {
        "image_id": image_id,
        "image": image[0],
        "image_sha256": image[1],
        "gt_objects": [],
        "other_objects": other_objects or [],
        "relations": relations or [],
        "caption": "",
        "source": source,
    }


def limit_records(records: list, options: dict[str, Any]) -> list:
    limit = options.get("limit")
    return records if limit is None else records[: int(limit)]


def load_items(path: str | Path) -> dict[str, dict]:
    """Items by image id; duplicate ids are refused with the file and line."""
    out: dict[str, dict] = {}
    for number, item in enumerate(read_jsonl(path), start=1):
        image_id = item.get("image_id")
        if not isinstance(image_id, str) or not image_id:
            raise InputError(f"{path}:{number}: expected a non-empty string 'image_id'")
        if image_id in out:
            raise InputError(f"{path}:{number}: duplicate image id {image_id!r}")
        image = item.get("image")
        if image is not None and (not isinstance(image, str) or ".." in Path(image).parts):
            raise InputError(
                f"{path}:{number}: image path {image!r} of {image_id!r} escapes its data folder; "
                "expected a path without '..' components"
            )
        out[image_id] = item
    return out
