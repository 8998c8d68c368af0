"""List-then-rewrite generation of NegP VQA data (NOPE §3.1, Appendices A-C).

Why list-then-rewrite: NOPE's human evaluation (§3.3) found that asking an LLM to write a
NegP question end to end gives ~50% valid questions, while splitting the job into two simple LLM
turns plus rule-based checks gives 92%. The steps, per (caption, object-scene relevance):

1. **Object listing** (Table 5, "Object Listing Template"): the LLM lists ``n_objects`` tangible
   objects that are closely related / loosely related / completely unrelated to the caption but
   not mentioned there, avoiding the image labels. :func:`parse_object_list` reads the list.
2. **Object validation** (Appendix C): an object is rejected when its head noun (lemmatised by
   spaCy) is a lemmatised noun of the caption, or matches an image label (head noun or whole
   phrase); see :func:`validate_objects`. Only valid objects get questions (Appendix F: dropping
   wrong objects before rewriting is what lifts validity to ~90%).
3. **Reference questions** (Appendix B, Table 6): each valid object fills a question template
   drawn at random (seeded): a row of Table 6 uniformly, then one of the row's alternatives
   ("above / under / on the left of / on the right of", "holding / using"). The template fixes the
   ``question_type`` (§6.2: color, object, location, counting, person) and the NegP answer.
4. **Question rewriting** (Table 5, "Question Rewriting Template"): in the same conversation (a
   second user turn after the listing answer), the LLM paraphrases every reference question.
5. **Drift check** (Appendix C: "if q' does not contradict its reference q"): see
   :func:`check_paraphrase`.

Every LLM call goes through :meth:`ResponseCache.resolve` with :data:`TEMPLATE_VERSION`, so reruns
are free and a killed run resumes. Every output record keeps ``relevance`` and
``question_type``.

Two options for small LLMs (the paper used ChatGPT; SmolLM2-135M mostly repeats the caption or
the labels, so nearly every listed object is rejected):

* ``prompt="fewshot"``: the listing turn is preceded by one worked example per relevance level
  (:data:`FEWSHOT_EXAMPLES`, the paper's own Table 5 caption; the "closely related" answer is the
  paper's). Objects copied from the example answer are rejected as ``example_copy``. The paper's
  zero-shot prompt (``"paper"``) stays the default for capable LLMs.
* ``fallback_objects`` + ``min_questions``: when fewer than ``min_questions`` questions of an
  (image, relevance) survive, hand-written candidate objects are validated by the *same* checks
  (:func:`validate_objects`) and turned into Table 6 reference questions, unparaphrased, marked
  ``source: "fallback"`` (LLM questions are ``source: "llm"``). The counts of every step are in
  :attr:`GenerationResult.stats`, so a reader sees how much of a question set the LLM made.

``nope.llm.stop_rule`` (opt-in, llamacpp; in the request params, so in the cache key):
``count`` ends the listing once ``n_objects`` distinct names are listed and the rewrite once
every paraphrase is read (the parsed names and paraphrases are those of the uncut replies; only a
listing the rule cut is shorter in the rewrite conversation); ``count-repeat`` also ends the
listing at the first repeated name (names the uncut reply lists after it are lost). See
:mod:`halluscope.benchmarks.nope.parsing`.

This module holds the driver (:func:`generate_nope`). The steps live beside it, each imported
from its own module: ``prompts.py`` (steps 1 and 4, Table 5), ``parsing.py`` (reading the
replies), ``validation.py`` (step 2, Appendix C), ``templates.py`` (step 3, Table 6) and
``drift.py`` (step 5).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from halluscope.benchmarks.nope.drift import (
    DEFAULT_MIN_SIMILARITY,
    DRIFT_REASONS,
    DriftCheck,
    check_paraphrase,
)
from halluscope.benchmarks.nope.parsing import parse_object_list, parse_questions
from halluscope.benchmarks.nope.prompts import (
    FEWSHOT_EXAMPLES,
    PROMPTS,
    RELEVANCE_DESCRIPTORS,
    TEMPLATE_VERSION,
    listing_request,
    rewriting_request,
)
from halluscope.benchmarks.nope.templates import (
    TemplateChoice,
    choose_template,
    reference_questions,
)
from halluscope.benchmarks.nope.validation import (
    NLP,
    load_nlp,
    present_keys,
    validate_objects,
)
from halluscope.models.base import Backend, Request, Response
from halluscope.models.cache import ResponseCache

# ---------------------------------------------------------------------------------------------
# The generation loop
# ---------------------------------------------------------------------------------------------


def item_labels(item: Mapping[str, Any]) -> list[str]:
    """An item's object labels: ``labels`` if given, else ``gt_objects`` + ``other_objects``
    (the halluscope ``items.jsonl`` fields). They are shown to the LLM ("avoid these objects")."""
    if item.get("labels") is not None:
        return [str(label) for label in item["labels"]]
    return [
        str(x) for x in list(item.get("gt_objects") or []) + list(item.get("other_objects") or [])
    ]


def validation_labels(item: Mapping[str, Any]) -> list[str]:
    """:func:`item_labels` plus the item's ``avoid`` names: more names of present objects (e.g.
    MSCOCO synonyms, "bike" for a bicycle) that count as present in validation only, so that
    they do not lengthen the prompt."""
    return item_labels(item) + [str(x) for x in item.get("avoid") or []]


@dataclass
class GenerationResult:
    """``questions``: one record per valid listed object (kept or rejected by the drift check)
    and per fallback question; ``objects``: every listed object with its validation;
    ``stats``: counts per outcome."""

    questions: list[dict[str, Any]] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def valid_questions(self) -> list[dict[str, Any]]:
        """The NOPE data: questions whose object and paraphrase both passed validation."""
        return [q for q in self.questions if q["valid"]]


def _failed(response: Response) -> bool:
    return bool(response.meta.get("error")) or not isinstance(response.text, str)


def _count(bucket: dict[str, int], key: str) -> None:
    bucket[key] = bucket.get(key, 0) + 1


def _question_record(
    item: Mapping[str, Any],
    relevance: str,
    question_id: str,
    obj: str,
    choice: TemplateChoice,
    question: str | None,
    check: DriftCheck,
    source: str,
) -> dict[str, Any]:
    return {
        "question_id": question_id,
        "image_id": item["image_id"],
        "caption": item["caption"],
        "object": obj,
        "relevance": relevance,
        "question_type": choice.question_type,
        "template_id": choice.template_id,
        "reference_question": choice.reference_question,
        "question": question,
        "reference": choice.reference,
        "acceptable_answers": list(choice.acceptable_answers),
        "is_negp": True,
        "paraphrased": question is not None
        and " ".join(question.lower().split())
        != " ".join(choice.reference_question.lower().split()),
        "source": source,
        "valid": check.valid,
        "reject_reason": check.reason,
        "similarity": check.similarity,
    }


def fallback_candidates(
    fallback_objects: Mapping[str, Any] | None, relevance: str, image_id: Any
) -> list[str]:
    """Candidates for one (image, relevance): the image's own list, then the ``default`` list.

    ``fallback_objects`` maps relevance -> {image id or ``"default"`` -> [object, ...]}.
    """
    table = (fallback_objects or {}).get(relevance) or {}
    return [str(o) for o in (*table.get(str(image_id), ()), *table.get("default", ()))]


def generate_nope(
    items: Sequence[Mapping[str, Any]],
    backend: Backend,
    cache: ResponseCache,
    *,
    relevances: Sequence[str] = tuple(RELEVANCE_DESCRIPTORS),
    n_objects: int = 10,
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    template_version: str = TEMPLATE_VERSION,
    nlp: NLP | None = None,
    similarity: Callable[[str, str], float] | None = None,
    min_similarity: float = DEFAULT_MIN_SIMILARITY,
    batch_size: int = 8,
    prompt: str = "paper",
    fallback_objects: Mapping[str, Any] | None = None,
    min_questions: int = 0,
) -> GenerationResult:
    """Run list-then-rewrite over ``items`` (``image_id``, ``caption``, labels; see
    :func:`item_labels` and :func:`validation_labels`) for each relevance level. Deterministic
    given the cached answers.

    Requests go relevance by relevance (so a few-shot example is a shared prompt prefix), in
    batches of ``batch_size`` (image, relevance) jobs: their listings, then their rewrites.
    ``batch_size=1`` sends each rewrite right after its own listing, whose evaluated tokens a
    llama.cpp backend then reuses; larger batches suit concurrent servers. Records come out in
    item order, then relevance order, whatever the request order.

    Question records: ``question_id`` (``{image_id}/{relevance}/{k}``, fallback questions
    ``.../f{k}``), ``image_id``, ``caption``, ``object``, ``relevance``, ``question_type``,
    ``template_id``, ``reference_question``, ``question`` (the paraphrase, or ``None``; for a
    fallback question the reference question itself), ``paraphrased`` (false when the LLM
    returned the reference question unchanged: kept, since it does not drift, but it adds no
    lexical variety), ``reference`` (the NegP answer, seeded pick among ``acceptable_answers``),
    ``is_negp`` (always true), ``source`` (``llm`` | ``fallback``), ``valid``, ``reject_reason``,
    ``similarity``.

    ``fallback_objects`` / ``min_questions``: see the module docstring and
    :func:`fallback_candidates`; fallback questions are only added while an (image, relevance)
    has fewer than ``min_questions`` valid questions.
    """
    for relevance in relevances:
        if relevance not in RELEVANCE_DESCRIPTORS:
            raise ValueError(
                f"unknown relevance {relevance!r}; expected {', '.join(RELEVANCE_DESCRIPTORS)}"
            )
    if prompt not in PROMPTS:
        raise ValueError(f"unknown NOPE prompt {prompt!r}; expected one of {', '.join(PROMPTS)}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    nlp = nlp or load_nlp()
    stats: dict[str, Any] = {
        "prompt": prompt,
        "listing_requests": 0,
        "listing_failed": 0,
        "listing_truncated": 0,
        "objects_listed": 0,
        "objects_valid": 0,
        "objects_rejected": {},
        "rewrite_requests": 0,
        "rewrite_failed": 0,
        "questions": 0,
        "questions_valid": 0,
        "questions_rejected": {},
        "paraphrases_returned": 0,
        "paraphrased": 0,
        "unchanged": 0,
        "drifted": 0,
        "fallback": {"jobs": 0, "candidates": 0, "rejected": {}, "questions": 0},
    }
    rule = (params or {}).get("stop_rule", "none")
    if rule != "none":  # only then: the default keeps generation.json as it was
        stats.update(stop_rule=rule, listing_stopped=0, rewrite_stopped=0)
    jobs: list[tuple[int, int, Mapping[str, Any], str, Request]] = []
    for item in items:
        if "image_id" not in item or not isinstance(item.get("caption"), str):
            raise ValueError(f"NOPE item {item!r}: needs an 'image_id' and a 'caption' string")
    for rel_index, relevance in enumerate(relevances):
        for item_index, item in enumerate(items):
            request = listing_request(
                item["image_id"],
                item["caption"],
                item_labels(item),
                relevance,
                n_objects,
                params,
                prompt,
            )
            jobs.append((item_index, rel_index, item, relevance, request))
    stats["listing_requests"] = len(jobs)
    per_job: dict[tuple[int, int], dict[str, Any]] = {}

    for start in range(0, len(jobs), batch_size):
        chunk = jobs[start : start + batch_size]
        listings = cache.resolve(backend, [j[4] for j in chunk], template_version, batch_size)
        rewrites: list[tuple[tuple[int, int], list[str], list[TemplateChoice], Request]] = []
        for (item_index, rel_index, item, relevance, request), answer in zip(
            chunk, listings, strict=True
        ):
            key = (item_index, rel_index)
            found: dict[str, Any] = {"objects": [], "questions": [], "listed": []}
            per_job[key] = found
            if _failed(answer):
                stats["listing_failed"] += 1
                continue
            listed = parse_object_list(answer.text)
            if rule != "none":
                stats["listing_stopped"] += int(answer.meta.get("finish_reason") == "stop_rule")
            if answer.meta.get("finish_reason") == "length" and listed:
                listed = listed[:-1]  # the reply was cut off, so was its last entry
                stats["listing_truncated"] += 1
            listed = listed[:n_objects]
            examples = FEWSHOT_EXAMPLES[relevance][:n_objects] if prompt == "fewshot" else ()
            checks = validate_objects(
                listed, item["caption"], validation_labels(item), nlp, examples=examples
            )
            found["listed"] = listed
            for check in checks:
                found["objects"].append(
                    {
                        "image_id": item["image_id"],
                        "relevance": relevance,
                        "object": check.name,
                        "valid": check.valid,
                        "reject_reason": check.reason,
                    }
                )
                if not check.valid:
                    _count(stats["objects_rejected"], str(check.reason))
            stats["objects_listed"] += len(checks)
            valid = [c.name for c in checks if c.valid]
            stats["objects_valid"] += len(valid)
            if not valid:
                continue
            choices = reference_questions(valid, seed, item["image_id"], relevance)
            rewrite = rewriting_request(
                request, answer.text, [c.reference_question for c in choices]
            )
            rewrites.append((key, valid, choices, rewrite))
        stats["rewrite_requests"] += len(rewrites)
        answers = cache.resolve(backend, [r[3] for r in rewrites], template_version, batch_size)
        for (key, objects, choices, _), answer in zip(rewrites, answers, strict=True):
            item, relevance = items[key[0]], relevances[key[1]]
            failed = _failed(answer)
            stats["rewrite_failed"] += int(failed)
            if rule != "none":
                stats["rewrite_stopped"] += int(answer.meta.get("finish_reason") == "stop_rule")
            present = present_keys(item["caption"], validation_labels(item), nlp)
            paraphrases = (
                [None] * len(choices) if failed else parse_questions(answer.text, len(choices))
            )
            for index, (obj, choice, paraphrase) in enumerate(
                zip(objects, choices, paraphrases, strict=True)
            ):
                check = (
                    DriftCheck(False, "rewrite_failed")
                    if failed
                    else check_paraphrase(
                        paraphrase,
                        choice.reference_question,
                        obj,
                        choice.question_type,
                        choice.relation,
                        nlp=nlp,
                        similarity=similarity,
                        min_similarity=min_similarity,
                        present=present,
                    )
                )
                record = _question_record(
                    item,
                    relevance,
                    f"{item['image_id']}/{relevance}/{index}",
                    obj,
                    choice,
                    paraphrase,
                    check,
                    "llm",
                )
                per_job[key]["questions"].append(record)
                stats["questions"] += 1
                stats["paraphrases_returned"] += int(paraphrase is not None)
                if check.valid:
                    stats["questions_valid"] += 1
                    stats["paraphrased" if record["paraphrased"] else "unchanged"] += 1
                else:
                    _count(stats["questions_rejected"], str(check.reason))
                    stats["drifted"] += int(check.reason in DRIFT_REASONS)

    fallback = stats["fallback"]
    for rel_index, relevance in enumerate(relevances):
        for item_index, item in enumerate(items):
            found = per_job[(item_index, rel_index)]
            missing = min_questions - sum(q["valid"] for q in found["questions"])
            candidates = fallback_candidates(fallback_objects, relevance, item["image_id"])
            if missing <= 0 or not candidates:
                continue
            fallback["jobs"] += 1
            listed = found["listed"]
            checks = validate_objects(
                [*listed, *candidates], item["caption"], validation_labels(item), nlp
            )[len(listed) :]
            added = 0
            for check in checks:
                if added >= missing:
                    break
                fallback["candidates"] += 1
                if not check.valid:
                    _count(fallback["rejected"], str(check.reason))
                    continue
                choice = choose_template(check.name, seed, item["image_id"], relevance)
                found["questions"].append(
                    _question_record(
                        item,
                        relevance,
                        f"{item['image_id']}/{relevance}/f{added}",
                        check.name,
                        choice,
                        choice.reference_question,
                        DriftCheck(True, None),
                        "fallback",
                    )
                )
                fallback["questions"] += 1
                added += 1

    result = GenerationResult()
    by_relevance: dict[str, dict[str, int]] = {r: {"llm": 0, "fallback": 0} for r in relevances}
    for item_index in range(len(items)):
        for rel_index, relevance in enumerate(relevances):
            found = per_job[(item_index, rel_index)]
            result.objects.extend(found["objects"])
            result.questions.extend(found["questions"])
            for q in found["questions"]:
                by_relevance[relevance][q["source"]] += int(q["valid"])
    stats["final"] = {
        "questions": sum(q["valid"] for q in result.questions),
        "llm": sum(q["valid"] and q["source"] == "llm" for q in result.questions),
        "fallback": sum(q["source"] == "fallback" for q in result.questions),
        "by_relevance": by_relevance,
    }
    result.stats = stats
    return result
