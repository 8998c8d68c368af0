"""NOPE stages: questions (list-then-rewrite) -> answers per model -> scores, lexical diversity.

The pipeline of NOPE (Lovenia et al., ``../shared/papers/nope.txt``) on any backend:

1. ``questions``: NegP questions generated from each image's ``caption`` and labels (MSCOCO +
   other objects of ``items.jsonl``) by list-then-rewrite
   (:func:`halluscope.benchmarks.nope.generate.generate_nope`, §3.1 and Appendices A-C) with the
   extractor LLM, through the response cache.
   The validation also treats the MSCOCO synonyms of the present classes ("bike" for a bicycle,
   "astronaut" for a person) as present (``avoid``): NOPE's lemma check alone would accept them.
   For small LLMs, ``prompt: fewshot`` and the fallback candidates (``fallback_objects``,
   ``min_questions``) keep the question set usable; every record says where it came from
   (``source``: ``llm`` | ``fallback``) and ``generation.json`` counts every step. The non-NegP
   ("others") questions, whose answers are objects of the image, come from the annotated
   relations (:func:`annotation_questions`, ``source: annotations``): the demo's stand-in for
   the paper's nine existing VQA datasets.
2. ``answers``: each model answers each question with the image, asked for a short answer
   (:data:`ANSWER_PROMPT`, LLaVA-1.5's VQA suffix), through the cache. Simulated LVLMs answer
   from the answer key in ``Request.answer_key`` (see :mod:`halluscope.benchmarks.nope.simulated`).
3. ``score``: exact-match accuracy, METEOR 1.5 and NegP accuracy, for NegP and other questions,
   by question type and object-scene relevance
   (:func:`halluscope.benchmarks.nope.metric.score_answers`).
4. ``lexdiv``: MATTR, MTLD and HD-D of the question sets
   (:mod:`halluscope.benchmarks.nope.lexical_diversity`).

Every record keeps ``relevance`` (``null`` for other questions), ``question_type`` and
``is_negp``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from halluscope.benchmarks.nope.settings import NopeScoreSettings
from halluscope.io import InputError, read_json, read_jsonl, write_json, write_jsonl
from halluscope.settings import StageSettings, derived, param
from halluscope.stage_command import paired, stage
from halluscope.stages.answering import AnswerSettings, with_cache
from halluscope.stages.data import load_items
from halluscope.stages.llm import LLMSettings

if TYPE_CHECKING:
    from halluscope.benchmarks.nope.metric import MeteorScorer

ANSWER_PROMPT = "{question}\nAnswer the question using a single word or phrase."
"""The answering prompt: the question plus LLaVA-1.5's short-answer VQA instruction, so that
exact match and METEOR compare short answers as in VQA."""

TRUTH_KEYS = ("is_negp", "reference", "acceptable_answers", "question_type")
"""The fields of a question that its answer key (``Request.answer_key``) carries."""

QUESTION_TYPES = ("color", "object", "location", "counting", "person")
"""NOPE §6.2's question types, in the paper's order."""

SPATIAL_RELATIONS = frozenset(
    {"on", "in", "under", "below", "above", "behind", "in front of", "next to", "near", "beside"}
)
"""Relations that say where the subject is ("Where is the cup?" -> "on the saucer")."""

QUESTION_FIELDS = (
    "question_id",
    "image_id",
    "question",
    "reference",
    "acceptable_answers",
    "is_negp",
    "question_type",
    "relevance",
    "source",
    "object",
    "template_id",
)
"""The fields of a ``questions.jsonl`` record."""


# ------------------------------------------------------------------------------ configuration


@dataclass(frozen=True)
class NopeGeneratorSettings(StageSettings):
    """What the list-then-rewrite stages read from params (section ``nope``): the LLM
    (``nope.llm``, :class:`~halluscope.stages.llm.LLMSettings`), the generation's own
    settings (``seed`` picks the question templates) and the number of generation jobs
    (``shards``)."""

    llm: LLMSettings = derived(lambda c: LLMSettings.from_block(c, c["nope"]["llm"], "nope.llm"))
    relevances: list[str] = param("nope.relevances")
    n_objects: int = param("nope.n_objects")
    prompt: str = param("nope.prompt")
    min_similarity: float = param("nope.min_similarity")
    min_questions: int = param("nope.min_questions")
    seed: int = param("nope.seed")
    synonyms: bool = param("nope.synonyms")
    shards: int = param("nope.shards")
    #: the hand-written candidates file (a declared input of the generate rule), or None
    fallback: str | None = param("nope.fallback_objects")


def check_config(config: Mapping[str, Any]) -> None:
    """Cross-references of the ``nope`` section (model id), checked when the DAG is built."""
    if config["nope"]["enabled"]:
        NopeGeneratorSettings.from_config(config)


# ---------------------------------------------------------------------------------- questions


def load_fallback(path: Path | None) -> dict[str, dict[str, list[str]]]:
    """The fallback candidates file: relevance -> {image id | ``default`` -> [object, ...]}."""
    if path is None:
        return {}
    import yaml

    from halluscope.benchmarks.nope.metric import RELEVANCE_LEVELS
    from halluscope.strict_yaml import strict_load

    try:
        data = strict_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as err:
        raise InputError(f"{path}: cannot read the NOPE fallback objects ({err})") from None
    if not isinstance(data, Mapping):
        raise InputError(f"{path}: expected a mapping relevance -> {{image id: [objects]}}")
    out: dict[str, dict[str, list[str]]] = {}
    for relevance, table in data.items():
        if relevance not in RELEVANCE_LEVELS:
            raise InputError(
                f"{path}: unknown relevance {relevance!r}; valid: {', '.join(RELEVANCE_LEVELS)}"
            )
        if not isinstance(table, Mapping):
            raise InputError(f"{path}: {relevance}: expected a mapping image id -> [objects]")
        out[relevance] = {}
        for key, objects in table.items():
            if not isinstance(objects, list) or not all(
                isinstance(o, str) and o.strip() for o in objects
            ):
                raise InputError(f"{path}: {relevance}.{key}: expected a list of object names")
            out[relevance][str(key)] = [" ".join(o.lower().split()) for o in objects]
    return out


def synonyms_of(classes: Sequence[str]) -> list[str]:
    """halluscope's MSCOCO synonyms of the given classes (names that mean a present object)."""
    from halluscope.objects.coco_synonyms import BUILTIN_SYNONYMS

    return sorted({s.strip() for c in classes for s in BUILTIN_SYNONYMS.get(c, ()) if s.strip()})


def _relation_question(subject: str, relation: str) -> str:
    if relation in ("has", "have"):
        return f"What does the {subject} have?"
    return f"What is the {subject} {relation}?"


def annotation_questions(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Other (non-NegP) questions from each image's annotated relations, in item order.

    Per relation (s, r, o): "What is the s r?" -> o ("What does the s have?" for "has"); for a
    spatial r also "What is r the o?" -> every s with (r, o), and, when s has exactly one spatial
    relation, "Where is the s?" -> "r the o"; for s = person and an -ing relation, "Who is r the
    o?" -> "person". Answers are objects of the image, so their reference lists every
    acceptable answer. ``relevance`` is ``null``: it only describes NegP objects.
    """
    records: list[dict[str, Any]] = []
    for item in items:
        relations = [tuple(str(x) for x in t) for t in item.get("relations") or []]
        found: dict[tuple[str, str], list[str]] = {}
        for s, r, o in relations:
            if s == o:
                continue
            found.setdefault(("object", _relation_question(s, r)), []).append(o)
            if r in SPATIAL_RELATIONS:
                found.setdefault(("object", f"What is {r} the {o}?"), []).append(s)
                spatial = [t for t in relations if t[0] == s and t[1] in SPATIAL_RELATIONS]
                if len(spatial) == 1:
                    found.setdefault(("location", f"Where is the {s}?"), []).append(f"{r} the {o}")
            if s == "person" and r.split(" ", 1)[0].endswith("ing"):
                found.setdefault(("person", f"Who is {r} the {o}?"), []).append("person")
        for index, ((qtype, question), answers) in enumerate(found.items()):
            answers = list(dict.fromkeys(answers))
            records.append(
                {
                    "question_id": f"{item['image_id']}/others/{index}",
                    "image_id": item["image_id"],
                    "question": question,
                    "reference": answers[0] if len(answers) == 1 else answers,
                    "acceptable_answers": answers,
                    "is_negp": False,
                    "question_type": qtype,
                    "relevance": None,
                    "source": "annotations",
                    "object": None,
                    "template_id": None,
                }
            )
    return records


@stage("nope-generate")
def generate_shard(
    settings: NopeGeneratorSettings, items: Path, cache: Path, shard: int, out: Path
) -> dict[str, Any]:
    """NOPE list-then-rewrite for one shard of the items.

    The shard holds the items of index % ``shards`` == ``shard``; returns the counts. Why
    shards: the LLM runs on one thread (see ``models/llamacpp.py``), so Snakemake runs the
    shards side by side on the free cores. Every (image, relevance) job is independent and
    seeded by image id, so the records do not depend on the shard count; the shards are merged
    in item order by :func:`questions`.
    """
    from halluscope.benchmarks.nope.generate import generate_nope
    from halluscope.benchmarks.nope.prompts import TEMPLATE_VERSION
    from halluscope.benchmarks.nope.validation import load_nlp
    from halluscope.models.base import make_backend
    from halluscope.models.cache import ResponseCache

    shards = settings.shards
    if not 0 <= shard < shards:
        raise InputError(f"NOPE shard {shard} out of range for {shards} shard(s)")
    chosen = list(load_items(items).values())[shard::shards]
    prepared = []
    for item in chosen:
        extra = synonyms_of(item.get("gt_objects") or []) if settings.synonyms else []
        prepared.append({**item, "avoid": extra})
    llm = settings.llm
    backend = make_backend(llm.spec, model_name=llm.model_id)
    result = generate_nope(
        prepared,
        backend,
        ResponseCache(cache, mode=llm.cache_mode),
        relevances=settings.relevances,
        n_objects=settings.n_objects,
        seed=settings.seed,
        params=llm.params,
        template_version=f"{llm.template_version}/{TEMPLATE_VERSION}",
        nlp=load_nlp(),
        min_similarity=settings.min_similarity,
        batch_size=llm.batch_size,
        prompt=settings.prompt,
        fallback_objects=load_fallback(Path(settings.fallback) if settings.fallback else None),
        min_questions=settings.min_questions,
    )
    report = {
        "shard": shard,
        "shards": shards,
        "image_ids": [item["image_id"] for item in chosen],
        "stats": result.stats,
        "objects": result.objects,
        "candidates": result.questions,
    }
    write_json(out, report)
    return result.stats


def _merge_counts(total: dict[str, Any], part: Mapping[str, Any]) -> None:
    """Add the numbers of ``part`` into ``total`` (nested dicts key by key; strings kept)."""
    for key, value in part.items():
        if isinstance(value, Mapping):
            _merge_counts(total.setdefault(key, {}), value)
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            total.setdefault(key, value)
        else:
            total[key] = total.get(key, 0) + value


@stage("nope-questions")
def questions(
    shards: list[Path], /, *, settings: NopeGeneratorSettings, items: Path, out_questions: Path,
    out_report: Path,
) -> dict[str, Any]:  # fmt: skip
    """NOPE questions: merged shards + other questions.

    The shards merged in item order, then relevance order; the other questions added; the
    benchmark questions and ``generation.json`` written; returns the pooled counts."""
    loaded = list(load_items(items).values())
    order = {item["image_id"]: index for index, item in enumerate(loaded)}
    relevance_order = {rel: index for index, rel in enumerate(settings.relevances)}
    stats: dict[str, Any] = {}
    objects: list[dict[str, Any]] = []
    candidates: list[dict[str, Any]] = []
    covered: list[str] = []
    for path in shards:
        shard = read_json(path)
        _merge_counts(stats, shard["stats"])
        objects += shard["objects"]
        candidates += shard["candidates"]
        covered += shard["image_ids"]
    if sorted(covered, key=order.__getitem__) != list(order):
        raise InputError(
            f"the NOPE shards cover images {sorted(covered)}, the items are {sorted(order)}: "
            "rerun the shards after a change of the items"
        )

    def place(row: Mapping[str, Any]) -> tuple[int, int]:
        return order[row["image_id"]], relevance_order[row["relevance"]]

    objects.sort(key=place)  # stable: each job keeps the LLM's listing order
    candidates.sort(key=place)
    negp = [{key: q.get(key) for key in QUESTION_FIELDS} for q in candidates if q["valid"]]
    others = annotation_questions(loaded)
    write_jsonl(out_questions, negp + others)
    stats["others"] = {
        "questions": len(others),
        "by_question_type": _counts(others, "question_type"),
    }
    stats["negp_by_question_type"] = _counts(negp, "question_type")
    from halluscope.determinism import llm_provenance

    extractor: dict[str, Any] = {"model_id": settings.llm.model_id, "prompt": settings.prompt}
    if (build := llm_provenance(settings.llm.spec)) is not None:
        extractor["llm_build"] = build  # which llama.cpp build wrote the questions
    report = {
        "extractor": extractor,
        "stats": stats,
        "objects": objects,
        "candidates": candidates,
    }
    write_json(out_report, report)
    return stats


def _counts(rows: Sequence[Mapping[str, Any]], key: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for row in rows:
        out[str(row[key])] = out.get(str(row[key]), 0) + 1
    return dict(sorted(out.items()))


# ------------------------------------------------------------------------------------ answers


@stage("nope-answers")
def answers(settings: AnswerSettings, items: Path, questions: Path, cache: Path, out: Path) -> None:
    """NOPE answers of one model: every question, with the image, through the response cache.

    Each record carries what :func:`halluscope.benchmarks.nope.metric.score_answers` needs, so
    ``halluscope nope --answers`` scores an answer file by hand.
    """
    from halluscope.stages.answering import Question, answer_and_write

    answer_and_write(
        items,
        with_cache(settings, cache),
        read_jsonl(questions),
        lambda q: Question(
            q["image_id"],
            f"nope/{q['question_id']}",
            ANSWER_PROMPT.format(question=q["question"]),
            {"question_id": q["question_id"]},
            {key: q[key] for key in TRUTH_KEYS},
        ),  # fmt: skip
        lambda q, r: {
            "question_id": q["question_id"],
            "image_id": q["image_id"],
            "model": settings.llm.model_id,
            "question": q["question"],
            "question_type": q["question_type"],
            "relevance": q["relevance"],
            "is_negp": q["is_negp"],
            "reference": q["reference"],
            "source": q["source"],
            "answer": r.text,
            "meta": r.meta,
        },
        out,
        task="nope",
        what="NOPE answers",
    )


# ------------------------------------------------------------------------------------- scores


@stage("nope-score")
def score(settings: NopeScoreSettings, answers: list[Path], out: list[Path]) -> None:
    """NOPE accuracy, METEOR and NegP accuracy of one model or more (paths paired by position).

    Each model's answers are scored in turn by one METEOR process (its JVM starts once); one
    line of accuracies per model on stderr."""
    import contextlib

    from halluscope.benchmarks.nope.metric import MeteorScorer

    models = paired(answers=answers, out=out)
    with MeteorScorer() if settings.meteor else contextlib.nullcontext(False) as meteor:
        for answers_path, out_path in models:
            report = score_file(answers_path, meteor, out_path, settings.interval_settings())
            summary = {k: report[k]["accuracy"] for k in ("overall", "negp", "non_negp")}
            print(json.dumps(summary, sort_keys=True), file=sys.stderr)


def score_file(
    answers_path: Path, meteor: bool | MeteorScorer, out: Path, intervals: Any = None
) -> dict[str, Any]:
    """NOPE scores of one model's answers (+ what a simulated LVLM injected), with the interval
    of each number when ``intervals`` (an IntervalSettings) is given (the image resampled).

    ``meteor``: as :func:`~halluscope.benchmarks.nope.metric.score_answers` takes it (a running
    scorer serves several models' answers with one Java process).
    """
    from halluscope.benchmarks.nope.intervals import nope_intervals
    from halluscope.benchmarks.nope.metric import score_answers

    rows = read_jsonl(answers_path)
    if not rows:
        raise InputError(f"{answers_path}: no answers to score")
    report = score_answers(rows, meteor=meteor)
    if intervals is not None:
        units = [str(r.get("image_id", r["question_id"])) for r in rows]
        report["intervals"] = nope_intervals(report["answers"], units, intervals)
    report["model"] = rows[0]["model"]
    report["by_source"] = _counts(rows, "source")
    report["injected"] = _injected(rows)
    write_json(out, report)
    return report


def _injected(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A simulated LVLM's own record of its answers, ``None`` for other models."""
    metas = [r.get("meta") or {} for r in rows]
    if not metas or not all("kind" in m and "correct" in m for m in metas):
        return None
    negp = [m for m in metas if m["is_negp"]]
    other = [m for m in metas if not m["is_negp"]]
    return {
        "negp": len(negp),
        "negp_answers": sum(m["kind"] == "negp" for m in negp),
        "hallucinations": sum(m["kind"] == "hallucination" for m in negp),
        "negp_rate": sum(m["kind"] == "negp" for m in negp) / len(negp) if negp else None,
        "others": len(other),
        "wrong": sum(m["kind"] == "wrong" for m in other),
        "wrong_rate": sum(m["kind"] == "wrong" for m in other) / len(other) if other else None,
    }


@stage("nope-lexdiv")
def lexdiv(questions: Path, out: Path) -> None:
    """MATTR, MTLD and HD-D of the NOPE question sets.

    The NegP and the other question sets (NOPE §4.1, Figure 6), each set's questions
    concatenated in file order; NegP questions also per relevance and per source. A measure
    that needs more tokens than a set has is ``null`` with the reason.
    """
    from halluscope.benchmarks.nope.lexical_diversity import lexical_diversity, tokenize

    rows = read_jsonl(questions)

    def measure(subset: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        tokens = [t for row in subset for t in tokenize(str(row["question"]))]
        if not tokens:
            return {"questions": len(subset), "tokens": 0}
        return {"questions": len(subset), **lexical_diversity(tokens)}

    negp = [r for r in rows if r["is_negp"]]
    others = [r for r in rows if not r["is_negp"]]
    report = {
        "negp": measure(negp),
        "others": measure(others),
        "negp_by_relevance": {
            rel: measure([r for r in negp if r["relevance"] == rel])
            for rel in dict.fromkeys(r["relevance"] for r in negp)
        },
        "negp_by_source": {
            src: measure([r for r in negp if r["source"] == src])
            for src in sorted({r["source"] for r in negp})
        },
        "text": "questions concatenated in file order, LexicalRichness default tokens",
    }
    write_json(out, report)
