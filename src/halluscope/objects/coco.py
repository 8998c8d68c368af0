"""MSCOCO vocabulary: the 80 classes, halluscope's own synonym table, class frequency order.

Two synonym tables exist on purpose:

* ``BUILTIN_SYNONYMS`` is written for halluscope (surface words an English caption uses for each
  class). It is the default of :class:`halluscope.objects.parser.ObjectParser`.
* the reference CHAIR list (``synonyms.txt`` of Rohrbach et al. 2018, LisaAnne/Hallucination) is
  *loaded* with :func:`load_synonyms` when a result must be comparable with published CHAIR
  numbers. It is never copied into this repository.

The synonym and double-word tables are in :mod:`halluscope.objects.coco_synonyms`.
"""

from __future__ import annotations

from pathlib import Path

from halluscope.objects.coco_synonyms import BUILTIN_SYNONYMS

__all__ = [
    "COCO_CLASSES",
    "COCO_FREQUENCY_ORDER",
    "COCO_IMAGE_ORDER",
    "FREQUENT_ORDERS",
    "COCO_INSTANCE_COUNTS",
    "load_synonyms",
]

#: Annotated instances per class in the MSCOCO detection training set.
#: Source: per-category annotation counts of ``instances_train2017.json`` (COCO 2017 train =
#: train2014 + val2014 minus the 5k minival images, same annotations), as printed by
#: ``pycocotools`` ``len(coco.getAnnIds(catIds=[id]))``. train2014 holds about 70 % of these
#: instances with the same class distribution; only near-ties (e.g. dog/elephant/skateboard)
#: could swap places in a train2014-only count. Gives the class order (:data:`COCO_CLASSES`)
#: and :data:`COCO_FREQUENCY_ORDER`.
COCO_INSTANCE_COUNTS: dict[str, int] = {
    "person": 262465, "bicycle": 7113, "car": 43867, "motorcycle": 8725, "airplane": 5135,
    "bus": 6069, "train": 4571, "truck": 9973, "boat": 10759, "traffic light": 12884,
    "fire hydrant": 1865, "stop sign": 1983, "parking meter": 1285, "bench": 9838, "bird": 10806,
    "cat": 4768, "dog": 5508, "horse": 6587, "sheep": 9509, "cow": 8147, "elephant": 5513,
    "bear": 1294, "zebra": 5303, "giraffe": 5131, "backpack": 8720, "umbrella": 11431,
    "handbag": 12354, "tie": 6496, "suitcase": 6192, "frisbee": 2682, "skis": 6646,
    "snowboard": 2685, "sports ball": 6347, "kite": 9076, "baseball bat": 3276,
    "baseball glove": 3747, "skateboard": 5543, "surfboard": 6126, "tennis racket": 4812,
    "bottle": 24342, "wine glass": 7913, "cup": 20650, "fork": 5479, "knife": 7770, "spoon": 6165,
    "bowl": 14358, "banana": 9458, "apple": 5851, "sandwich": 4373, "orange": 6399,
    "broccoli": 7308, "carrot": 7852, "hot dog": 2918, "pizza": 5821, "donut": 7179, "cake": 6353,
    "chair": 38491, "couch": 5779, "potted plant": 8652, "bed": 4192, "dining table": 15714,
    "toilet": 4157, "tv": 5805, "laptop": 4970, "mouse": 2262, "remote": 5703, "keyboard": 2855,
    "cell phone": 6434, "microwave": 1673, "oven": 3334, "toaster": 225, "sink": 5610,
    "refrigerator": 2637, "book": 24715, "clock": 6334, "vase": 6613, "scissors": 1481,
    "teddy bear": 4793, "hair drier": 198, "toothbrush": 1954,
}  # fmt: skip

#: The 80 MSCOCO 2014 instance categories, in category-id order (ids 1..90 with gaps): the
#: keys of :data:`COCO_INSTANCE_COUNTS`, which lists them in that order.
COCO_CLASSES: tuple[str, ...] = tuple(COCO_INSTANCE_COUNTS)

#: The 80 classes, most annotated instances first (ties broken by category id). The top-k of
#: this order is the set K ("top-k frequent objects of the training data") of CAOS.
COCO_FREQUENCY_ORDER: tuple[str, ...] = tuple(
    sorted(COCO_CLASSES, key=lambda c: (-COCO_INSTANCE_COUNTS[c], COCO_CLASSES.index(c)))
)

#: The 80 classes by the number of MSCOCO 2014 images (train + val, 123,287) whose CHAIR ground
#: truth (instance categories united with the objects of the five human captions, ``pattern``
#: build) contains them: ``coco/chair_gt_objects_pattern.json`` of the shared data, counted once
#: per image (person 70,169; dining table 20,720; car 14,653; chair 14,535; ...; no ties).
#: ``tests/test_k_orders.py`` recounts it from that file when it is present.
COCO_IMAGE_ORDER: tuple[str, ...] = (
    "person", "dining table", "car", "chair", "cup", "bottle", "bowl", "handbag", "truck",
    "sports ball", "bench", "backpack", "book", "cell phone", "tv", "sink", "laptop", "dog",
    "couch", "clock", "potted plant", "bed", "orange", "traffic light", "knife", "cat", "bus",
    "train", "umbrella", "bicycle", "tie", "vase", "skis", "fork", "bird", "spoon", "motorcycle",
    "skateboard", "surfboard", "toilet", "tennis racket", "boat", "oven", "pizza", "airplane",
    "cake", "remote", "horse", "sandwich", "giraffe", "baseball glove", "suitcase", "wine glass",
    "baseball bat", "refrigerator", "kite", "keyboard", "banana", "cow", "elephant", "frisbee",
    "teddy bear", "zebra", "bear", "mouse", "broccoli", "apple", "stop sign", "fire hydrant",
    "carrot", "snowboard", "sheep", "donut", "microwave", "hot dog", "toothbrush", "scissors",
    "parking meter", "toaster", "hair drier",
)  # fmt: skip

#: The CAOS paper's own examples of frequent training objects ("person", "dining table" and
#: "chair", Section "Common Objects in Training Data"), then the instance order for k > 3.
_PAPER_EXAMPLES = ("person", "dining table", "chair")

#: Named orders for ``caos.frequent`` (the set K is the top-k of the order). ``coco`` is the
#: instance-count order (kept as the default name); the others are the alternatives the paper
#: leaves open, compared in the CAOS sensitivity table.
FREQUENT_ORDERS: dict[str, tuple[str, ...]] = {
    "coco": COCO_FREQUENCY_ORDER,
    "coco-instances": COCO_FREQUENCY_ORDER,
    "coco-images": COCO_IMAGE_ORDER,
    "paper-examples": _PAPER_EXAMPLES
    + tuple(c for c in COCO_FREQUENCY_ORDER if c not in _PAPER_EXAMPLES),
}

# --------------------------------------------------------------------------------------------
# loading
# --------------------------------------------------------------------------------------------


def _builtin_mapping() -> dict[str, str]:
    mapping: dict[str, str] = {}
    for cls, words in BUILTIN_SYNONYMS.items():
        for word in (cls, *words):
            if mapping.get(word, cls) != cls:
                raise AssertionError(f"builtin synonym {word!r}: {mapping[word]!r} and {cls!r}")
            mapping[word] = cls
    return mapping


def load_synonyms(path: Path | str | None = None) -> dict[str, str]:
    """Surface form -> class name.

    ``None`` gives :data:`BUILTIN_SYNONYMS`. A path is read in the reference CHAIR format: one
    line per class, entries separated by ``', '``, the first entry is the class name. The
    reference quirks are kept on purpose because they change CHAIR numbers: only the line ends
    are stripped, so entries with a leading space (``' motor bike'``) never match a token, and
    case is kept, so ``iPhone`` never matches a lower-cased caption. A blank line inside the
    file, an empty entry, or a surface form listed under two classes raises ``ValueError``; a
    file that is not UTF-8 an ``InputError`` naming its line and byte offset (for every caller:
    ``halluscope chair --synonyms`` and the extract stage).
    """
    if path is None:
        return _builtin_mapping()
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as err:
        from halluscope.io import InputError

        data = path.read_bytes()
        line = data[: err.start].count(b"\n") + 1
        raise InputError(
            f"{path}:{line}: synonyms file is not valid UTF-8 (byte offset {err.start}: "
            f"{data[err.start : err.end]!r}); expected a UTF-8 text file in the CHAIR "
            "synonyms.txt format"
        ) from None
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise ValueError(f"{path}: empty synonym file")
    mapping: dict[str, str] = {}
    for lineno, line in enumerate(lines, start=1):
        entries = line.strip().split(", ")
        cls = entries[0]
        if not cls or any(e == "" for e in entries):
            raise ValueError(f"{path}:{lineno}: empty class name or synonym entry in {line!r}")
        for entry in entries:
            if mapping.get(entry, cls) != cls:
                raise ValueError(
                    f"{path}:{lineno}: synonym {entry!r} is listed under both "
                    f"{mapping[entry]!r} and {cls!r}"
                )
            mapping[entry] = cls
    return mapping
