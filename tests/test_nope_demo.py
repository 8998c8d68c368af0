"""NOPE in the demo DAG, and the simulated LVLMs' ``nope`` task.

Unit tests (fast): the sim answers NegP questions with a NegP at its ``negp_accuracy`` and
otherwise names an absent object; other questions are wrong at ``vqa_error_rate``; the few-shot
listing prompt, the ``example_copy`` and ``present_object_added`` checks, truncated listings,
MSCOCO synonyms and the fallback fill behave as documented; the other questions come from the
annotated relations; tables say "simulated".

Whole-DAG tests (``slow``, one run of the NOPE targets in a temporary copy, SmolLM2 for real):
the tables and the figure are built; NegP accuracy recovers each sim's ``negp_accuracy`` and
ranks the models by it; every record keeps relevance, question type and is_negp; the counts of
``generation.json`` add up; a second dry run has nothing to do; every NOPE artifact is
byte-identical when rebuilt (the LLM answers replayed from the cache).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from pipeline_helpers import ROOT, copy_of_build, demo_items, forced_rebuild, planned_jobs, sim

from halluscope.benchmarks.nope import stages as stage
from halluscope.benchmarks.nope.drift import check_paraphrase
from halluscope.benchmarks.nope.generate import generate_nope
from halluscope.benchmarks.nope.metric import is_negp_answer
from halluscope.benchmarks.nope.prompts import FEWSHOT_EXAMPLES, listing_messages, listing_request
from halluscope.benchmarks.nope.validation import load_nlp, present_keys, validate_objects
from halluscope.models.base import Request, Response, image_request, user_message
from halluscope.models.cache import ResponseCache
from halluscope.models.sim import PRESETS, resolve_preset

MODELS = ["sim-precise", "sim-verbose", "sim-frequent"]
TYPES = ("color", "object", "location", "counting", "person")
RELEVANCES = ("closely_related", "loosely_related", "unrelated")


@pytest.fixture(scope="module")
def nlp():
    return load_nlp()


def nope_requests(items: dict, repeat: int = 10) -> list[Request]:
    """NegP questions of every type about absent objects, plus other questions, per image."""
    out = []
    for image_id, item in items.items():
        # the item's questions without its pixels (the sims answer from the annotations)
        bare = {**item, "image_id": image_id, "image": None}
        for r in range(repeat):
            for qtype, answers in zip(
                TYPES,
                (["none", "nothing"], ["none", "nothing"], ["nowhere"], ["zero", "0", "none"],
                 ["no one", "nobody"]),
                strict=True,
            ):  # fmt: skip
                negp = {"is_negp": True, "reference": answers[0], "acceptable_answers": answers}
                out.append(
                    image_request(
                        bare,
                        f"{image_id}/negp/{qtype}/{r}",
                        f"Question {r} of type {qtype} about a giraffe?",
                        params={},
                        task="nope",
                        meta={**negp, "question_type": qtype},
                    )
                )
            for k, (s, rel, o) in enumerate(item["relations"]):
                other = {"is_negp": False, "reference": [o], "acceptable_answers": [o]}
                out.append(
                    image_request(
                        bare,
                        f"{image_id}/other/{k}/{r}",
                        f"What is the {s} {rel}? ({r}/{k})",
                        params={},
                        task="nope",
                        meta={**other, "question_type": "object"},
                    )
                )
    return out


# ------------------------------------------------------------------------------ sim: NOPE


def test_sim_negp_accuracy_and_error_rates_are_injected() -> None:
    items = demo_items()
    requests = nope_requests(items)
    for profile in [*MODELS, "sim-ood"]:
        p = resolve_preset(profile)
        answers = sim(profile, items).generate(requests)
        negp = [(q, a) for q, a in zip(requests, answers, strict=True) if q.meta["is_negp"]]
        other = [(q, a) for q, a in zip(requests, answers, strict=True) if not q.meta["is_negp"]]
        rate = sum(is_negp_answer(a.text) for _, a in negp) / len(negp)
        assert abs(rate - p["negp_accuracy"]) < 0.06, (profile, rate)
        # the measured NegP accuracy is exactly the sim's own record
        assert all(is_negp_answer(a.text) == (a.meta["kind"] == "negp") for _, a in negp)
        wrong = sum(a.text not in q.meta["reference"] for q, a in other) / len(other)
        assert abs(wrong - p["vqa_error_rate"]) < 0.06, (profile, wrong)
        for q, a in negp:
            item = items[q.image_id]
            present = {*item["gt_objects"], *item["other_objects"]}
            if a.meta["kind"] == "negp":
                assert a.text in q.meta["acceptable_answers"]
            else:  # a hallucinated object, never one of the image
                assert a.meta["object"] not in present
                if q.meta["question_type"] == "object":
                    assert a.text == a.meta["object"]
                if q.meta["question_type"] == "location":
                    assert a.text.endswith(f" the {a.meta['object']}")
    # deterministic
    again = sim("sim-frequent", items).generate(requests)
    assert [a.text for a in again] == [
        a.text for a in sim("sim-frequent", items).generate(requests)
    ]


def test_sim_profiles_have_clearly_different_negp_accuracy() -> None:
    values = sorted(PRESETS[m]["negp_accuracy"] for m in MODELS)
    assert values[1] - values[0] >= 0.15 and values[2] - values[1] >= 0.15
    assert resolve_preset({k: v for k, v in PRESETS["sim-precise"].items()
                            if k not in ("negp_accuracy", "vqa_error_rate")})[
        "negp_accuracy"] == 0.0  # fmt: skip
    with pytest.raises(ValueError, match="negp_accuracy must be a number"):
        resolve_preset("sim-precise", {"negp_accuracy": 1.5})


def test_sim_nope_needs_the_answer_key() -> None:
    items = demo_items()
    model = sim("sim-precise", items)
    with pytest.raises(ValueError, match=r"meta\['is_negp'\]"):
        model.generate([Request("x", "coffee", messages=(user_message("Q?"),), task="nope")])
    with pytest.raises(ValueError, match="must be true/false"):
        model.generate(
            [
                Request(
                    "x",
                    "coffee",
                    messages=(user_message("Q?"),),
                    task="nope",
                    meta={"is_negp": "yes", "reference": "none"},
                )
            ]
        )


# --------------------------------------------------------------------------- generation


def test_fewshot_listing_prompt() -> None:
    paper = listing_messages("A cat.", ["cat"], "unrelated", 4)
    assert [m["role"] for m in paper] == ["user"]
    few = listing_messages("A cat.", ["cat"], "unrelated", 4, "fewshot")
    assert [m["role"] for m in few] == ["user", "assistant", "user"]
    assert few[-1] == paper[-1]  # the real question is the paper's prompt
    assert "completely unrelated" in few[0]["content"] and "Vegetable" in few[0]["content"]
    assert few[1]["content"].splitlines() == [
        f"{k}. {o}" for k, o in enumerate(FEWSHOT_EXAMPLES["unrelated"][:4], start=1)
    ]
    # the paper's own Table 5 answer opens the closely related example
    assert FEWSHOT_EXAMPLES["closely_related"][:3] == ("spices", "canned fruits", "nuts")
    assert listing_request("i", "A cat.", ["cat"], "unrelated", 4, prompt="fewshot").messages == few
    with pytest.raises(ValueError, match="unknown NOPE prompt"):
        listing_messages("A cat.", [], "unrelated", 4, "chain")


def test_extra_checks_example_copy_synonyms_and_added_present_object(nlp) -> None:
    caption = "A red motorcycle in a garage with a bicycle behind it."
    labels = ["motorcycle", "bicycle", "shelf"]
    objects = ["honey", "bike", "helmet", "leaves", "shelves"]
    checks = validate_objects(
        objects, caption, labels + stage.synonyms_of(["bicycle"]), nlp, examples=["honey"]
    )
    assert [c.reason for c in checks] == ["example_copy", "in_labels", None, None, "in_labels"]
    leaf = validate_objects(["leaves"], "A flower.", ["leaf"], nlp)
    assert leaf[0].reason == "in_labels"  # "leaves" singularised, not lemmatised as a verb
    present = present_keys("A portrait in front of a flag.", ["cap", "flag"], nlp)
    assert "flag" in present and "portrait" in present
    assert "photo" not in present and "front" not in present
    ref = "What is the color of the hat?"
    added = check_paraphrase(
        "What is the color of the hat on the flag?", ref, "hat", "color", nlp=nlp, present=present
    )
    assert added.reason == "present_object_added"
    kept = check_paraphrase(
        "What color is the hat in the photo?", ref, "hat", "color", nlp=nlp, present=present
    )
    assert kept.valid
    who = "Who is holding the hat?"
    person = present_keys("A person.", ["person"], nlp)
    kept = check_paraphrase(
        "Which person is holding the hat?", who, "hat", "person", nlp=nlp, present=person
    )
    assert kept.valid  # "person" here is the question word, not an object of the scene


class ListingLLM:
    """A backend that lists fixed objects (the last one cut off) and echoes the questions."""

    identity = {"name": "listing-llm", "revision": "1"}

    def __init__(self, lists: dict[str, str]) -> None:
        self.lists = lists
        self.calls: list[Request] = []

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        self.calls.extend(requests)
        out = []
        for r in requests:
            if r.prompt.startswith("Description:"):
                relevance = r.meta["relevance"]
                text, meta = self.lists[relevance], {"finish_reason": "length"}
            else:
                text = "\n".join(
                    line for line in r.prompt.splitlines() if line[:1].isdigit()
                )  # the reference questions, unchanged
                meta = {"finish_reason": "stop"}
            out.append(Response(r.request_id, text, "listing-llm", meta=meta))
        return out


def test_generate_nope_fallback_truncation_and_order(tmp_path: Path, nlp) -> None:
    items = [demo_items()["coffee"], demo_items()["chelsea"]]
    llm = ListingLLM(
        {
            "closely_related": "1. Sugar cube\n2. Cup\n3. Croissant\n4. Cro",
            "unrelated": "1. Giraffe\n2. Spices\n3. Tractor",
        }
    )
    fallback = {
        "closely_related": {"coffee": ["croissant", "saucer", "napkin", "milk jug"]},
        "unrelated": {"default": ["anchor", "kite", "tent"]},
    }
    result = generate_nope(
        items,
        llm,
        ResponseCache(tmp_path / "cache"),
        relevances=["closely_related", "unrelated"],
        prompt="fewshot",
        fallback_objects=fallback,
        min_questions=3,
        batch_size=1,
        nlp=nlp,
    )
    stats = result.stats
    # listing then its rewrite, relevance by relevance
    kinds = [c.request_id.split("/")[0] for c in llm.calls]
    assert kinds[:2] == ["nope-list", "nope-rewrite"]
    assert [c.meta["relevance"] for c in llm.calls] == sorted(
        (c.meta["relevance"] for c in llm.calls), key=["closely_related", "unrelated"].index
    )
    assert stats["listing_truncated"] == 4
    listed = {
        (o["image_id"], o["relevance"], o["object"]): o["reject_reason"] for o in result.objects
    }
    assert ("coffee", "closely_related", "cro") not in listed  # cut-off entry dropped
    assert listed[("coffee", "closely_related", "cup")] == "in_labels"
    assert listed[("coffee", "unrelated", "giraffe")] == "example_copy"
    assert listed[("coffee", "unrelated", "spices")] is None  # not an unrelated example object
    # records in item order, then relevance order; every record labelled
    order = [(q["image_id"], q["relevance"]) for q in result.questions]
    keys = [("coffee", "closely_related"), ("coffee", "unrelated"), ("chelsea", "closely_related"),
            ("chelsea", "unrelated")]  # fmt: skip
    assert order == sorted(order, key=keys.index)
    for q in result.questions:
        assert q["relevance"] in RELEVANCES and q["question_type"] in TYPES and q["is_negp"]
        assert q["source"] in ("llm", "fallback")
    coffee = [q for q in result.valid_questions if q["image_id"] == "coffee"]
    close = [q for q in coffee if q["relevance"] == "closely_related"]
    assert [(q["object"], q["source"]) for q in close] == [
        ("sugar cube", "llm"),
        ("croissant", "llm"),
        ("napkin", "fallback"),  # "croissant" was listed, "saucer" is a label
    ]
    assert all(q["question"] == q["reference_question"] for q in close)
    assert stats["unchanged"] == stats["questions_valid"] and stats["paraphrased"] == 0
    fb = stats["fallback"]
    assert fb["rejected"] == {"duplicate": 1, "in_labels": 1}
    chelsea = [q for q in result.valid_questions if q["image_id"] == "chelsea"]
    assert [(q["object"], q["source"]) for q in chelsea] == [
        ("sugar cube", "llm"),  # three valid LLM objects: no fallback needed
        ("cup", "llm"),  # a cup is not in the cat picture
        ("croissant", "llm"),
        ("spices", "llm"),
        ("anchor", "fallback"),  # the `default` candidates of unrelated
        ("kite", "fallback"),
    ]
    assert stats["final"]["questions"] == len(result.valid_questions)
    assert stats["final"]["fallback"] == fb["questions"]


def test_annotation_questions_and_fallback_file() -> None:
    items = list(demo_items().values())
    others = stage.annotation_questions(items)
    assert {q["question_type"] for q in others} == {"object", "location", "person"}
    by_text = {(q["image_id"], q["question"]): q for q in others}
    assert by_text[("coffee", "What is on the saucer?")]["acceptable_answers"] == ["cup", "spoon"]
    assert by_text[("coffee", "Where is the espresso?")]["reference"] == "in the cup"
    assert by_text[("astronaut", "Who is wearing the spacesuit?")]["reference"] == "person"
    assert by_text[("chelsea", "What does the cat have?")]["reference"] == ["eye", "whisker"]
    for q in others:
        assert q["is_negp"] is False and q["relevance"] is None and q["source"] == "annotations"
    table = stage.load_fallback(ROOT / "data/demo/nope_fallback.yaml")
    assert set(table) == set(RELEVANCES)
    assert all(set(table[r]) - {"default"} == {i["image_id"] for i in items} for r in RELEVANCES)


def test_load_fallback_errors(tmp_path: Path) -> None:
    from halluscope.io import InputError

    bad = tmp_path / "f.yaml"
    bad.write_text("related: {coffee: [cake]}\n", encoding="utf-8")
    with pytest.raises(InputError, match="unknown relevance 'related'"):
        stage.load_fallback(bad)
    bad.write_text("unrelated: {coffee: cake}\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected a list of object names"):
        stage.load_fallback(bad)


def test_nope_tables_say_simulated() -> None:
    from halluscope.benchmarks.nope.report import nope_breakdown_latex, nope_table_latex

    section = {"accuracy": 0.5, "meteor": 0.6, "negp_accuracy": 0.7}
    groups = {"by_question_type": {"color": section}, "by_relevance": {"unrelated": section}}
    scores = {"sim-a": {"negp": {**section, **groups}, "non_negp": {"accuracy": 0.9}}}
    generation = {"prompt": "fewshot", "final": {"questions": 5, "llm": 2, "fallback": 3}}
    latex = nope_table_latex(scores, ["sim-a"], 1, generation=generation)
    assert "simulated" in latex and "\\toprule" in latex and "70.0" in latex and "--" in latex
    assert "2 listed and paraphrased by the LLM" in latex and "3 template questions" in latex
    latex = nope_breakdown_latex(scores, ["sim-a"], 1)
    assert "simulated" in latex and "color" in latex and "Unrelated" in latex


# ---------------------------------------------------------------------- whole demo DAG

TARGETS = (
    "results/report/demo/nope_table.tex",
    "results/report/demo/nope_breakdown.tex",
    "results/figures/demo/nope_question_types.pdf",
    "results/figures/demo/nope_question_types.png",
)
ARTIFACTS = (
    *TARGETS,
    "results/nope/demo/questions.jsonl",
    "results/nope/demo/generation.json",
    "results/nope/demo/lexdiv.json",
    *(f"results/nope/demo/{m}/{name}" for m in MODELS for name in ("answers.jsonl", "scores.json")),
)


@pytest.fixture(scope="module")
def project(demo_build: Path, tmp_path_factory) -> Path:
    """A copy of the session's demo build (TARGETS are part of it; the rebuild test edits it)."""
    return copy_of_build(demo_build, tmp_path_factory.mktemp("nope") / "halluscope")


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.slow
def test_tables_and_figure_exist(project: Path) -> None:
    for target in TARGETS:
        path = project / target
        assert path.stat().st_size > 500, target
        if path.suffix == ".tex":
            text = path.read_text()
            assert "simulated" in text and "\\toprule" in text
            assert all(m in text for m in MODELS)
    assert "NegP Acc." in (project / TARGETS[0]).read_text()


@pytest.mark.slow
def test_negp_accuracy_recovers_the_profiles(project: Path) -> None:
    scores = {
        m: json.loads((project / f"results/nope/demo/{m}/scores.json").read_text()) for m in MODELS
    }
    for m, s in scores.items():
        assert s["negp"]["negp_accuracy"] == pytest.approx(s["injected"]["negp_rate"])
        assert abs(s["negp"]["negp_accuracy"] - PRESETS[m]["negp_accuracy"]) < 0.15, m
        assert s["negp"]["accuracy"] <= s["negp"]["negp_accuracy"]
        assert s["non_negp"]["n"] > 30 and s["negp"]["n"] >= 27 * 2
        assert s["negp"]["meteor"] is not None  # METEOR ran on Java
    by_rate = sorted(MODELS, key=lambda m: PRESETS[m]["negp_accuracy"])
    values = [scores[m]["negp"]["negp_accuracy"] for m in by_rate]
    assert values == sorted(values) and values[-1] - values[0] > 0.3, values
    by_error = sorted(MODELS, key=lambda m: PRESETS[m]["vqa_error_rate"])
    others = [scores[m]["non_negp"]["accuracy"] for m in by_error]
    assert others[0] > others[-1], others


@pytest.mark.slow
def test_records_keep_relevance_question_type_and_negp(project: Path) -> None:
    base = project / "results/nope/demo"
    questions = _read_jsonl(base / "questions.jsonl")
    report = json.loads((base / "generation.json").read_text())
    for record in [*questions, *report["candidates"]]:
        assert {"relevance", "question_type", "is_negp"} <= set(record), record
        assert record["question_type"] in TYPES
        if record["is_negp"]:
            assert record["relevance"] in RELEVANCES
        else:
            assert record["relevance"] is None
    for m in MODELS:
        answers = _read_jsonl(base / f"{m}/answers.jsonl")
        assert [a["question_id"] for a in answers] == [q["question_id"] for q in questions]
        assert all(
            a["relevance"] == q["relevance"] for a, q in zip(answers, questions, strict=True)
        )
    stats = report["stats"]
    negp = [q for q in questions if q["is_negp"]]
    # SmolLM2 answered every listing request (what it listed, maybe nothing usable, is its own)
    assert stats["listing_requests"] == 27 and stats["listing_failed"] == 0
    assert stats["final"]["questions"] == len(negp)
    assert stats["final"]["llm"] == sum(q["source"] == "llm" for q in negp) == stats[
        "questions_valid"]  # fmt: skip
    assert stats["final"]["fallback"] == sum(q["source"] == "fallback" for q in negp)
    assert stats["objects_listed"] == stats["objects_valid"] + sum(
        stats["objects_rejected"].values()
    )
    assert stats["questions"] == stats["questions_valid"] + sum(
        stats["questions_rejected"].values()
    )
    for relevance in RELEVANCES:  # every (image, relevance) reached min_questions
        per_image = {}
        for q in negp:
            if q["relevance"] == relevance:
                per_image[q["image_id"]] = per_image.get(q["image_id"], 0) + 1
        assert len(per_image) == 9 and min(per_image.values()) >= 3, (relevance, per_image)
    lexdiv = json.loads((base / "lexdiv.json").read_text())
    assert 0 < lexdiv["negp"]["mattr"] <= 1 and lexdiv["negp"]["mtld"] > 0


@pytest.mark.slow
def test_nothing_to_do_then_identical_rebuild(project: Path) -> None:
    assert planned_jobs(project, *TARGETS) == {}
    rules = (
        "nope_generate",
        "nope_questions",
        "nope_answers",
        "nope_score",
        "nope_lexdiv",
        "nope_table",
        "nope_figure",
    )
    before, after = forced_rebuild(project, rules, TARGETS, ARTIFACTS)
    assert after == before
