"""POPE stages: questions from per-image GT, answers through any backend, scores.

The demo builds POPE questions from its authored annotations, lets every model answer them
(the simulated LVLMs answer with their configured yes-bias), and joins POPE-F1 into the CAOS
table, as the CAOS paper does.
"""

from __future__ import annotations

from pathlib import Path

from halluscope.io import read_jsonl, write_json, write_jsonl
from halluscope.stages.data import load_items


def questions(items_path: Path, setting: str, n: int, seed: int, typo: bool, out: Path) -> None:
    """POPE questions for the dataset's images (images with fewer than n GT objects skipped)."""
    from halluscope.metrics.pope import build_questions

    items = load_items(items_path)
    gt = {image_id: item.get("gt_objects", []) for image_id, item in items.items()}
    write_jsonl(out, build_questions(gt, setting, n=n, seed=seed, typo=typo))


def answers(
    items_path: Path,
    questions_path: Path,
    model_id: str,
    model_spec: dict,
    generation: dict,
    template_version: str,
    cache_dir: Path,
    cache_mode: str,
    out: Path,
) -> None:
    """Every question answered by one model through the response cache (resumable)."""
    from halluscope.models.base import image_request, item_answer_key, make_backend
    from halluscope.stages.answering import generation_params, resolve

    items = load_items(items_path)
    backend = make_backend(model_spec, model_name=model_id, answer_keys=True)
    params = generation_params(generation)
    requests = [
        image_request(
            items[str(q["image"])],
            f"{model_id}/pope/{q['question_id']}",
            q["text"],
            params=params,
            task="yesno",
            meta={"question_id": q["question_id"]},
            answer_key=item_answer_key(items[str(q["image"])]),
        )
        for q in read_jsonl(questions_path)
    ]
    responses = resolve(
        backend,
        requests,
        cache_dir=cache_dir,
        cache_mode=cache_mode,
        template_version=template_version,
        batch_size=int(generation.get("batch_size", 8)),
        what="POPE answers",
    )
    write_jsonl(
        out,
        [
            {"question_id": q.meta["question_id"], "text": r.text}
            for q, r in zip(requests, responses, strict=True)
        ],
    )


def score(questions_path: Path, answers_path: Path, parser: str, out: Path) -> None:
    """POPE accuracy, precision, recall, F1, yes-ratio, unparsed for one model and setting."""
    from halluscope.metrics.pope import parse_answer, pope_scores

    labels = {q["question_id"]: q["label"] for q in read_jsonl(questions_path)}
    preds = {a["question_id"]: parse_answer(a["text"], parser) for a in read_jsonl(answers_path)}
    ids = list(labels)
    result = pope_scores([labels[i] for i in ids], [preds.get(i) for i in ids]).as_dict()
    write_json(out, {**result, "parser": parser})
