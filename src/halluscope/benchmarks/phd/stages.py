"""PhD stages: prompts per mode x task -> answers per model -> PhD Index by mode x task.

PhD (Liu et al., CVPR 2025) asks yes/no questions in four modes: ``base`` (the question alone),
``iac`` (an inaccurate context first; the paper's first version calls it ``sec``), ``icc`` (an
incorrect context first) and ``ccs`` (counter-common-sense items), over five tasks. Prompts are
built exactly as upstream's ``get_data`` builds them
(:func:`halluscope.benchmarks.phd.data.build_prompts`);
the demo's records are ``data/demo/phd_questions.yaml``. Scores: the PhD Index (harmonic mean
of the yes- and no-recall) with halluscope's documented yes/no parser
(:mod:`halluscope.benchmarks.phd.metric`), per mode, task and mode x task.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

from halluscope.benchmarks.phd.settings import PhdPromptSettings, PhdScoreSettings
from halluscope.io import InputError, read_json, read_jsonl, write_json, write_jsonl
from halluscope.stage_command import stage
from halluscope.stages.answering import AnswerSettings, Question, answer_and_write, with_cache
from halluscope.stages.data import load_items


@stage("phd-prompts")
def prompts(settings: PhdPromptSettings, items: Path, out: Path) -> None:
    """PhD prompts: every (mode, record, label), mode by mode in the order given, as JSONL."""
    from halluscope.benchmarks.phd.data import build_prompts, canonical_mode

    records = load_records(settings.questions, load_items(items))
    paths = {r.image_id: r.image_path for r in records}
    rows = []
    for mode in dict.fromkeys(canonical_mode(m) for m in settings.modes):
        for prompt in build_prompts(records, mode):
            row = asdict(prompt)
            row["image_path"] = paths[prompt.image_id]  # the demo's exported image, not COCO's
            rows.append(row)
    write_jsonl(out, rows)


def _is_ccs_file(path: Path) -> bool:
    """``data_ccs.json`` records name an ``image_path``; the main file's records an ``image_id``."""
    data = read_json(path)
    first = data[0] if isinstance(data, list) and data else None
    return isinstance(first, dict) and "image_path" in first and "image_id" not in first


def load_records(questions_path: Path, items: dict[str, dict]) -> list:
    """PhD records: the demo's YAML, or a released JSON file (the main ``data.json`` or
    ``data_ccs.json``, a registered data file or a path) restricted to the dataset's images.

    Why restrict: ``data.limit`` keeps the first images only; records of other images are left
    out (counted in the log), and a dataset image without any record is an error.
    """
    from halluscope.benchmarks.phd.data import load_phd, load_phd_ccs, load_phd_records
    from halluscope.data.fetch import resolve_input

    path = resolve_input(questions_path)
    if path.suffix != ".json":
        return load_phd_records(path, items)
    records = load_phd_ccs(path) if _is_ccs_file(path) else load_phd(path)
    kept = [
        replace(r, image_path=items[r.image_id].get("image") or r.image_path)
        for r in records
        if r.image_id in items
    ]
    missing = sorted(set(items) - {r.image_id for r in kept})
    if missing:
        raise InputError(f"{path}: no record for dataset image(s) {missing[:10]}")
    print(f"{path}: {len(kept)} of {len(records)} records (images of the dataset)")
    return kept


@stage("phd-answers")
def answers(settings: AnswerSettings, items: Path, prompts: Path, cache: Path, out: Path) -> None:
    """PhD answers of one model: every prompt, with the image, through the response cache."""
    settings = with_cache(settings, cache)
    answer_and_write(
        items,
        settings,
        read_jsonl(prompts),
        lambda p: Question(
            p["image_id"],
            f"phd/{p['id']}",
            p["question"],
            {"id": p["id"]},
            {"label": p["label"], "mode": p["mode"]},
        ),  # fmt: skip
        lambda p, r: {
            **{key: p[key] for key in ("id", "mode", "task", "label", "image_id")},
            "model": settings.llm.model_id,
            "answer": r.text,
            "meta": r.meta,
        },
        out,
        task="phd",
        what="PhD answers",
    )


@stage("phd-score")
def score(settings: PhdScoreSettings, answers: Path, out: Path) -> None:
    """PhD Index of one model: overall, per mode, task and mode x task, each with its interval
    (``intervals``, the image resampled: :mod:`halluscope.benchmarks.phd.intervals`)."""
    from halluscope.benchmarks.phd.data import canonical_mode
    from halluscope.benchmarks.phd.intervals import phd_intervals
    from halluscope.benchmarks.phd.metric import PhdAnswer, phd_report

    rows = read_jsonl(answers)
    parsed = [
        PhdAnswer(str(r["id"]), canonical_mode(r["mode"]), r["task"], r["label"], r["answer"])
        for r in rows
    ]
    report = phd_report(parsed)
    report["model"] = rows[0]["model"] if rows else None
    units = [str(r.get("image_id", r["id"])) for r in rows]
    report["intervals"] = phd_intervals(parsed, units, settings.interval_settings())
    write_json(out, report)
