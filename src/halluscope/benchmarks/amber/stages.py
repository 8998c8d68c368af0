"""AMBER generative stages: prompts -> answers per model -> CHAIR/Cover/Hal/Cog -> table.

The metric is AMBER's reference ``inference.py`` (:mod:`halluscope.benchmarks.amber.metric`),
with two offline substitutions the table's caption states: nouns come from spaCy's
``en_core_web_sm`` tagger instead of NLTK's, and the word-similarity step (spaCy
``en_core_web_lg`` > 0.8 upstream) is ``amber.similarity``: ``none`` (exact and association
matches only, the default here) or ``glove`` (GloVe 6B-50d cosine > ``amber.threshold``).
"""

from __future__ import annotations

from pathlib import Path

from halluscope.benchmarks.amber.settings import (
    AmberPromptSettings,
    AmberScoreSettings,
    AmberTableSettings,
)
from halluscope.io import InputError, read_jsonl, write_json, write_jsonl
from halluscope.stage_command import stage
from halluscope.stages.answering import AnswerSettings, with_cache
from halluscope.stages.data import load_items

METRICS = ("CHAIR", "Cover", "Hal", "Cog")


@stage("amber-prompts")
def prompts(settings: AmberPromptSettings, items: Path, out: Path) -> None:
    """AMBER generative prompts with their annotations.

    One prompt per item: AMBER's query, with the image's ``truth`` / ``hallu`` lists (the
    answer key of the simulated LVLMs, and what the scorer checks against)."""
    from halluscope.benchmarks.amber.metric import load_annotations
    from halluscope.data.fetch import resolve_input

    path = resolve_input(settings.annotations)
    annotations = load_annotations(path)
    rows = []
    for image_id, item in load_items(items).items():
        source = item.get("source") or {}
        amber_id = source.get("amber_id")
        annotation = annotations.get(amber_id)
        if annotation is None or annotation.get("type") != "generative":
            raise InputError(f"{path}: no generative annotation for AMBER id {amber_id!r}")
        rows.append(
            {
                "id": amber_id,
                "image_id": image_id,
                "query": source.get("query", "Describe this image."),
                "truth": list(annotation["truth"]),
                "hallu": list(annotation["hallu"]),
            }
        )
    write_jsonl(out, rows)


@stage("amber-answers")
def answers(settings: AnswerSettings, items: Path, prompts: Path, cache: Path, out: Path) -> None:
    """AMBER answers of one model.

    Every query answered through the response cache (AMBER's response format
    ``{"id", "response"}`` plus the image id and the model)."""
    from halluscope.stages.answering import Question, answer_and_write

    settings = with_cache(settings, cache)
    answer_and_write(
        items,
        settings,
        read_jsonl(prompts),
        lambda p: Question(
            p["image_id"],
            f"amber/{p['id']}",
            p["query"],
            {"id": p["id"]},
            {"truth": p["truth"], "hallu": p["hallu"]},
        ),  # fmt: skip
        lambda p, r: {
            "id": p["id"],
            "image_id": p["image_id"],
            "model": settings.llm.model_id,
            "response": r.text,
            "meta": r.meta,
        },
        out,
        task="amber",
        what="AMBER answers",
    )


@stage("amber-score")
def score(settings: AmberScoreSettings, answers: Path, out: Path) -> None:
    """AMBER CHAIR / Cover / Hal / Cog of one model.

    AMBER's generative metrics for one model's answers (percent, one decimal, as upstream
    prints them), plus the hallucinated nouns per response for inspection."""
    from halluscope.benchmarks.amber.metric import (
        aggregate,
        glove_similarity,
        load_annotations,
        load_vocabulary,
        score_response,
        spacy_nouns,
    )
    from halluscope.data.fetch import resolve_input

    similarity, threshold = settings.similarity, settings.threshold
    annotations = load_annotations(resolve_input(settings.annotations))
    vocabulary = load_vocabulary(
        resolve_input(settings.relation), resolve_input(settings.safe_words)
    )
    if similarity not in ("none", "glove"):
        raise InputError(f"amber.similarity: expected 'none' or 'glove', got {similarity!r}")
    similar = glove_similarity(threshold) if similarity == "glove" else None
    rows = read_jsonl(answers)
    scores, details = [], []
    for number, row in enumerate(rows, start=1):
        annotation = annotations.get(row.get("id"))
        if annotation is None:
            raise InputError(f"{answers}:{number}: AMBER id {row.get('id')!r} not annotated")
        if annotation["type"] != "generative":
            continue  # as upstream: discriminative ids are not part of the generative task
        result = score_response(spacy_nouns(row["response"]), annotation, vocabulary, similar)
        scores.append(result)
        details.append({"id": row["id"], "hallucinated": list(result.hallucinated)})
    report = {
        **aggregate(scores),
        "model": rows[0]["model"] if rows else None,
        "similarity": similarity,
        "threshold": threshold if similarity != "none" else None,
        "nouns": "spacy en_core_web_sm (upstream: nltk)",
        "responses": details,
    }
    write_json(out, report)


@stage("amber-table")
def table(score_files: list[Path], /, *, settings: AmberTableSettings, out: Path) -> None:
    """AMBER LaTeX table and CSV twin.

    Models x (CHAIR, Cover, Hal, Cog) as booktabs LaTeX (one decimal, as upstream prints
    them), and its CSV twin."""
    import pandas as pd

    from halluscope.io import atomic_write_text, reports_by_model
    from halluscope.report import booktabs_latex
    from halluscope.report.benchmarks import _sim_note
    from halluscope.report.latex import frame_records, latex_escape, twin_csv

    models = settings.models
    reports = reports_by_model(score_files, models)

    frame = pd.DataFrame(
        [[float(reports[m][k]) for k in METRICS] for m in models],
        index=pd.Index([latex_escape(m) for m in models]),
        columns=list(METRICS),
    )
    first = reports[models[0]] if models else {}
    similarity = (
        "no similarity step (exact and association matches only)"
        if first.get("similarity") == "none"
        else f"GloVe 6B-50d cosine > {first.get('threshold')}"
    )
    caption = (
        _sim_note(models, settings.run)
        + "AMBER generative task (percent): CHAIR = hallucinated share of the mentioned "
        "AMBER objects, Cover = share of the image's objects mentioned, Hal = share of responses "
        "with a hallucination, Cog = share of the annotated hallucination targets mentioned; "
        "lower is better except Cover. Upstream's inference.py, with nouns from spaCy "
        f"en\\_core\\_web\\_sm (upstream: NLTK) and {similarity} (upstream: spaCy "
        f"en\\_core\\_web\\_lg similarity > 0.8). "
        f"{first.get('n_responses', 0)} responses per model."
    )
    latex = booktabs_latex(
        frame,
        decimals=1,
        caption=caption,
        label="tab:amber",
        column_format="l" + "r" * len(METRICS),
    )
    atomic_write_text(out, latex)
    atomic_write_text(out.with_suffix(".csv"), twin_csv(frame_records(frame, models)))
