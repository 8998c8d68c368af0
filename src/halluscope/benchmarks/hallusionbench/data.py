"""HallusionBench's questions as the pipeline asks them: the subset of the registered file, and
one item per figure (the request's image; none for the text-only questions).

Why items of its own: HallusionBench's figures are not the profile's images (the demo's are
MSCOCO-style photos), so its questions stage writes the items its answers are asked about
(``results/hallusionbench/<profile>/items.jsonl``), in the format of the data stage's
(:func:`halluscope.stages.data.image_item`). A figure's item is named ``HB-<category>_
<subcategory>_<set_id>_<figure_id>``; the text-only questions (``visual_input`` 0, VS figure 0)
have an item without an image. With ``subset: all`` each figure's image is
``<data.images>/<filename>`` (the question file's ``./hallusion_bench/VD/illusion/0_1.png``), so
``data.images`` is the folder that holds upstream's ``hallusion_bench/`` folder. ``subset:
answered`` asks the questions an answers file holds (``hallusionbench.answered``, the upstream
sample's format), so that a replay model of that file answers every question asked; when every
model is a replay model and ``data.images`` is unset, a figure's item has no image (recorded
answers need none), and the answers stage refuses any other backend on it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from halluscope.benchmarks.hallusionbench.questions import Question, key_text
from halluscope.io import InputError

SUBSETS = ("text-only", "all", "answered")


def figure_id(question: Question) -> str:
    """The item id of a question's figure (``HB-VD_illusion_0_1``)."""
    return "HB-" + key_text(question.key[:4])


def select(
    questions: Iterable[Question], subset: str, answered: Path | None = None
) -> list[Question]:
    """The questions of ``subset`` in file order: ``text-only`` (``visual_input`` 0), ``all``, or
    ``answered``: those the answers file ``answered`` holds (the upstream sample's format, read
    and joined as ``halluscope hallusionbench`` reads it)."""
    from halluscope.benchmarks.hallusionbench.questions import load_answers

    if subset not in SUBSETS:
        raise InputError(f"hallusionbench.subset: {subset!r}; expected one of {', '.join(SUBSETS)}")
    questions = list(questions)
    if subset == "answered":
        if answered is None:
            raise InputError("hallusionbench.subset answered: set hallusionbench.answered")
        keys = {a.question.key for a in load_answers(answered, {q.key: q for q in questions})}
        return [q for q in questions if q.key in keys]
    return [q for q in questions if subset == "all" or q.visual_input == "0"]


def question_row(question: Question) -> dict[str, Any]:
    """One row of ``questions.jsonl``: the question's fields, its id and its figure's item."""
    ids = dict(zip(("category", "subcategory", "set_id", "figure_id", "question_id"),
                   question.key, strict=True))  # fmt: skip
    return {
        "id": key_text(question.key),
        **ids,
        "visual_input": question.visual_input,
        "question": question.question,
        "gt_answer": question.gt_answer,
        "gt_answer_details": question.gt_answer_details,
        "image_id": figure_id(question),
    }


def items(
    questions: Iterable[Question], images: str | None, replay_only: bool = False
) -> list[dict[str, Any]]:
    """One item per figure of ``questions``, in order of first appearance: the image under
    ``images`` for a question with a figure (an error without ``images``, unless every model is
    a replay model, ``replay_only``: the figure's item then has no image), none for the
    text-only ones."""
    from halluscope.stages.data import image_file, image_item

    out: dict[str, dict[str, Any]] = {}
    for q in questions:
        item_id = figure_id(q)
        if item_id in out:
            continue
        image: tuple[str | None, str | None] = (None, None)
        if q.visual_input != "0" and not (replay_only and not images):
            if not images:
                raise InputError(
                    f"hallusionbench.subset all: question {key_text(q.key)} has a figure "
                    f"({q.filename}); set data.images to the folder holding upstream's "
                    "hallusion_bench/ (or subset: text-only; only replay models, which read "
                    "recorded answers, need no figure)"
                )
            if not q.filename:
                raise InputError(f"HallusionBench.json: question {key_text(q.key)} has no filename")
            image = image_file({"images": images}, q.filename.removeprefix("./"), item_id)
        source = {"dataset": "HallusionBench", "filename": q.filename}
        out[item_id] = image_item(item_id, image, source)
    return list(out.values())
