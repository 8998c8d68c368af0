"""The explorer page: the benchmarks' records as compact JSON inside one self-contained HTML file.

Why one file with everything inlined: the page must open from ``file://`` with no network (no
CDN, no second file to lose), and ``snakemake --report`` embeds a single file. The data is
compact (lists instead of objects, numbers to 4 decimals) so that ``pope-captions`` (2,000
images x 5 models x 2 instructions) stays well under 20 MB; the script renders one page of
images at a time and a benchmark's answers only when opened, so a browser never builds the DOM
of every image at once.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from halluscope.explorer.records import KIND_KEYS, KINDS, Answer, Contribution, Mark
from halluscope.io import InputError

HERE = Path(__file__).resolve().parent
#: The page's template, script and style, inlined into every page.
TEMPLATE_FILES = ("page.html", "page.js", "page.css")
#: Longest side of a thumbnail (pixels), and its JPEG quality: ~4.3 KB an image as base64, so
#: that 2,000 images with pope-captions' 20,000 captions (10 MB) would stay under 20 MB.
THUMBNAIL_SIZE = 128
THUMBNAIL_QUALITY = 70
DECIMALS = 4


def thumbnail(path: Path) -> str:
    """A small JPEG of the image at ``path`` as a ``data:`` URI (same bytes on every run)."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            image = image.convert("RGB")
            image.thumbnail((THUMBNAIL_SIZE, THUMBNAIL_SIZE))
            buffer = io.BytesIO()
            image.save(buffer, format="JPEG", quality=THUMBNAIL_QUALITY)
    except FileNotFoundError:
        raise InputError(f"{path}: image file not found") from None
    except OSError as err:
        raise InputError(f"{path}: not an image the page can show ({err})") from None
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _values(values: Sequence[float | None]) -> list[float | None]:
    """Numbers as the page stores them: 4 decimals; no value (or not finite) is null."""
    return [None if v is None or not math.isfinite(v) else round(v, DECIMALS) for v in values]


def page_data(
    profile: str,
    models: Sequence[str],
    items: Mapping[str, Mapping[str, Any]],
    contributions: Mapping[str, Contribution],
    thumbnails: Mapping[str, str | None],
) -> dict[str, Any]:
    """Everything the page shows, one entry per image, worst images first.

    An image's hallucinations are its captions' hallucinated objects plus its wrong answers; the
    summary counts are sums of the records' values (the score files' counts)."""
    # captions first (their table opens each image), then the answers, each in the given order
    names = sorted(contributions, key=lambda name: not contributions[name].captions)
    models = list(models)
    for contribution in contributions.values():
        for entry in [*contribution.captions, *contribution.answers]:
            if entry.model not in models:
                models.append(entry.model)
    model_index = {m: i for i, m in enumerate(models)}
    instructions: dict[str, str] = {}
    for contribution in contributions.values():
        instructions.update(contribution.instructions)
    for contribution in contributions.values():
        for caption in contribution.captions:
            instructions.setdefault(caption.instruction, "")
    instruction_index = {i: n for n, i in enumerate(instructions)}
    kind_index = {k: i for i, k in enumerate(KIND_KEYS)}

    images = {
        image_id: {
            "id": image_id,
            "thumb": thumbnails.get(image_id),
            "gt": list(item.get("gt_objects") or []),
            "other": list(item.get("other_objects") or []),
            "c": [],
            "a": [],
            "h": 0,
        }
        for image_id, item in items.items()
    }
    benchmarks = []
    for b, name in enumerate(names):
        contribution = contributions[name]
        for caption in contribution.captions:
            image = _image(images, caption.image_id, contribution.title)
            image["c"].append(
                [
                    b,
                    model_index[caption.model],
                    instruction_index[caption.instruction],
                    caption.text,
                    caption.n_hallucinated,
                    [_mark(m, kind_index) for m in caption.marks],
                    _values(caption.values),
                ]
            )
            image["h"] += caption.n_hallucinated
        for answer in contribution.answers:
            image = _image(images, answer.image_id, contribution.title)
            image["a"].append([b, model_index[answer.model], *_answer(answer)])
            image["h"] += bool(answer.wrong)
        wrong = sum(bool(a.wrong) for a in contribution.answers)
        benchmarks.append(
            {
                "name": name,
                "title": contribution.title,
                "note": contribution.note,
                "captions": len(contribution.captions),
                "hallucinated": sum(c.n_hallucinated for c in contribution.captions),
                "answers": len(contribution.answers),
                "wrong": wrong,
                "markValues": list(contribution.mark_values),
                "captionValues": list(contribution.caption_values),
            }
        )
    # worst first; ties in the items' order (sorted() is stable)
    ranked = sorted(images.values(), key=lambda im: -im["h"])
    return {
        "profile": profile,
        "models": models,
        "instructions": [[i, text] for i, text in instructions.items()],
        "kinds": [[key, label, hallucination] for key, label, hallucination in KINDS],
        "benchmarks": benchmarks,
        "summary": {
            "images": len(images),
            "models": len(models),
            "captions": sum(b["captions"] for b in benchmarks),
            "hallucinated": sum(b["hallucinated"] for b in benchmarks),
            "answers": sum(b["answers"] for b in benchmarks),
            "wrong": sum(b["wrong"] for b in benchmarks),
        },
        "images": ranked,
    }


def _mark(mark: Mark, kind_index: Mapping[str, int]) -> list[Any]:
    """A marked object as the page stores it: start, end, kind, name, numbers."""
    return [mark.start, mark.end, kind_index[mark.kind], mark.name, _values(mark.values)]


def _answer(answer: Answer) -> list[Any]:
    """An answer as the page stores it (after its benchmark and model): label, question,
    answer, truth, judge, wrong (1, 0 or null: not judged)."""
    wrong = None if answer.wrong is None else int(answer.wrong)
    return [answer.label, answer.question, answer.answer, answer.truth, answer.judge, wrong]


def _image(images: dict[str, dict[str, Any]], image_id: str, title: str) -> dict[str, Any]:
    try:
        return images[image_id]
    except KeyError:
        raise InputError(f"{title}: image {image_id!r} is not among the profile's items") from None


def data_json(data: Mapping[str, Any]) -> str:
    """The page data as JSON that is safe inside a ``<script>`` element (no ``<`` at all)."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c")


def render(data: Mapping[str, Any]) -> str:
    """The whole page: the template with its style, script and data inlined."""
    template, script, style = ((HERE / name).read_text(encoding="utf-8") for name in TEMPLATE_FILES)
    title = html.escape(f"halluscope explorer: {data['profile']}")
    page = template.replace("{{title}}", title).replace("{{style}}", style)
    page = page.replace("{{script}}", script)
    return page.replace("{{data}}", data_json(data))
