"""NOPE: answer metrics (exact match, METEOR on Java, NegP accuracy) and list-then-rewrite data
generation through a deterministic in-test LLM backend."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from halluscope.benchmarks.nope.drift import check_paraphrase
from halluscope.benchmarks.nope.generate import generate_nope
from halluscope.benchmarks.nope.metric import (
    NEGP_PRONOUNS,
    MeteorScorer,
    MeteorUnavailableError,
    exact_match,
    is_negp_answer,
    normalize_answer,
    normalize_relevance,
    process_punctuation,
    score_answers,
)
from halluscope.benchmarks.nope.parsing import parse_object_list, parse_questions
from halluscope.benchmarks.nope.prompts import (
    TEMPLATE_VERSION,
    listing_prompt,
    listing_request,
    rewriting_prompt,
    rewriting_request,
)
from halluscope.benchmarks.nope.templates import QUESTION_TEMPLATES, choose_template
from halluscope.benchmarks.nope.validation import load_nlp, validate_objects
from halluscope.cli import main
from halluscope.models.base import Request, Response, make_backend, register_backend
from halluscope.models.cache import CacheMissError, ResponseCache

# ---------------------------------------------------------------------------------------------
# VQA normalisation and exact match
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Two dogs.", "2 dogs"),
        ("2 dogs", "2 dogs"),
        ("The dog", "dog"),
        ("an apple!", "apple"),
        ("None", "0"),  # the official manualMap sends "none" (and "zero") to 0
        ("Zero", "0"),
        ("ten", "10"),
        ("eleven", "eleven"),  # the map stops at ten
        ("dont", "don't"),  # contractions restored
        ("yes, it is", "yes it is"),  # ", " touches a space: removed
        ("black/white", "black white"),  # no space around "/": replaced by a space
        ("1,000", "1000"),  # digit comma: every mark is removed
        ("2.5", "2.5"),  # a period before a digit stays
        ("  In the sky.\n", "in sky"),
        ("it's", "it's"),  # apostrophes are not in the official list
    ],
)
def test_normalize_answer(text, expected):
    assert normalize_answer(text) == expected


def test_process_punctuation_quirks():
    # the rule looks at the *input*: one "? " anywhere removes every "?", none replaces them
    assert process_punctuation("what? red?blue") == "what redblue"
    assert process_punctuation("red?blue") == "red blue"


def test_exact_match_by_hand():
    assert exact_match("Two dogs.", "2 dogs")
    assert exact_match("the nothing", "Nothing")
    assert exact_match("zero", "none")  # VQA: both are "0"
    assert not exact_match("nothing", "none")
    assert not exact_match("two dogs", "3 dogs")
    assert exact_match("nobody", ["no one", "nobody"])


# ---------------------------------------------------------------------------------------------
# NegP detection
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pronoun", NEGP_PRONOUNS)
def test_every_listed_pronoun_is_negp(pronoun):
    assert is_negp_answer(pronoun)
    assert is_negp_answer(pronoun.upper() + ".")
    assert is_negp_answer(f'  "{pronoun.capitalize()}!" ')


def test_negp_list_is_the_papers():
    assert set(NEGP_PRONOUNS) == {"none", "nothing", "nobody", "no one", "nowhere", "neither"}


@pytest.mark.parametrize(
    "answer",
    ["no", "No.", "yes", "There is no spoon in the picture", "nothing here", "noone", "not", ""],
)
def test_non_negp_answers(answer):
    assert not is_negp_answer(answer)


def test_negp_variants():
    assert is_negp_answer("No-one")  # "-" between letters becomes a space
    assert is_negp_answer("no  one")
    assert is_negp_answer("Zero") and is_negp_answer("0")  # Table 6 counting answers
    assert not is_negp_answer("zero", include_zero=False)
    assert not is_negp_answer("0", include_zero=False)
    assert is_negp_answer("none", include_zero=False)


def test_relevance_labels():
    assert normalize_relevance("Closely related") == "closely_related"
    assert normalize_relevance("partially related") == "loosely_related"
    assert normalize_relevance("completely-unrelated") == "unrelated"
    assert normalize_relevance(None) is None
    with pytest.raises(ValueError, match="unknown object-scene relevance"):
        normalize_relevance("somewhat")


# ---------------------------------------------------------------------------------------------
# METEOR (real METEOR 1.5 on Java; CI installs Java, so a missing one is a failure)
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def meteor():
    assert shutil.which("java"), "METEOR tests need Java on PATH (CI installs openjdk)"
    with MeteorScorer() as scorer:
        yield scorer


def test_meteor_identical_and_unrelated(meteor):
    scores = meteor.score(
        [
            ("nowhere", ["nowhere"]),
            ("dog on the grass", ["dog on the grass"]),
            ("red", ["nothing"]),
            ("in the sky", ["nowhere"]),
            ("", ["nobody"]),
            ("brown dog", ["brown dog sleeping"]),
        ]
    )
    assert scores[0] == pytest.approx(1.0, abs=1e-6)
    assert scores[1] == pytest.approx(1.0, abs=1e-6)
    assert scores[2] < 0.05 and scores[3] < 0.05 and scores[4] == 0.0
    assert 0.2 < scores[5] < 1.0  # partial unigram match
    # several references: the best one counts
    assert meteor.score([("nobody", ["no one", "nobody"])])[0] == pytest.approx(1.0, abs=1e-6)


def test_meteor_without_java_is_a_clear_error(monkeypatch, tmp_path, capsys):
    import halluscope.benchmarks.nope.metric as nope_metrics

    monkeypatch.setattr(nope_metrics.shutil, "which", lambda name: None)
    with pytest.raises(MeteorUnavailableError, match="no 'java' on PATH"):
        MeteorScorer()
    answers = tmp_path / "a.jsonl"
    _write_jsonl(answers, _records())
    with pytest.raises(SystemExit) as exit_info:
        main(["nope", "--answers", str(answers), "--out", str(tmp_path / "o.json")])
    assert exit_info.value.code == 2
    assert "METEOR needs a Java runtime" in capsys.readouterr().err


def test_meteor_segment_is_protocol_safe(meteor):
    # "|||" and newlines would break the jar's line protocol; they are cleaned
    (score,) = meteor.score([("a ||| b\nc", ["a b c"])])
    assert score == pytest.approx(1.0, abs=1e-6)


def _records():
    return [
        # NegP questions
        dict(question_id="n1", question_type="color", relevance="closely_related",
             is_negp=True, reference="nothing", answer="Nothing."),
        dict(question_id="n2", question_type="color", relevance="loosely_related",
             is_negp=True, reference="nothing", answer="none"),
        dict(question_id="n3", question_type="location", relevance="closely_related",
             is_negp=True, reference="nowhere", answer="in the sky"),
        dict(question_id="n4", question_type="counting", relevance="unrelated",
             is_negp=True, reference="none", answer="0"),
        # other questions
        dict(question_id="o1", question_type="counting", relevance=None,
             is_negp=False, reference="2", answer="Two."),
        dict(question_id="o2", question_type="color", relevance=None,
             is_negp=False, reference="red", answer="blue"),
    ]  # fmt: skip


def test_score_answers_breakdowns_by_hand(meteor):
    report = score_answers(_records(), meteor=meteor)
    negp, other, overall = report["negp"], report["non_negp"], report["overall"]
    # exact match: n1 yes, n2 no ("nothing" vs "0"), n3 no, n4 yes ("none" and "0" are both 0)
    assert negp["n"] == 4 and negp["accuracy"] == pytest.approx(2 / 4)
    # NegP answers: n1, n2, n4 ("0" is a Table 6 counting answer)
    assert negp["negp_accuracy"] == pytest.approx(3 / 4)
    assert negp["by_question_type"]["color"] == {
        "n": 2,
        "accuracy": 0.5,
        "meteor": pytest.approx(0.5, abs=1e-6),
        "negp_accuracy": 1.0,
    }
    assert negp["by_question_type"]["location"]["negp_accuracy"] == 0.0
    assert negp["by_relevance"]["closely_related"]["accuracy"] == 0.5
    assert negp["by_relevance"]["loosely_related"]["accuracy"] == 0.0
    assert negp["by_relevance"]["unrelated"]["accuracy"] == 1.0
    assert other["n"] == 2 and other["accuracy"] == 0.5 and "negp_accuracy" not in other
    assert other["by_relevance"] == {}  # null relevance is left out of the breakdown
    assert overall["n"] == 6 and overall["accuracy"] == pytest.approx(3 / 6)
    # METEOR is the mean of per-answer scores; exact matches score 1, n3/o2 score 0
    per = {row["question_id"]: row for row in report["answers"]}
    assert per["n1"]["meteor"] == pytest.approx(1.0, abs=1e-6)
    assert per["n3"]["meteor"] < 0.05
    mean = sum(r["meteor"] for r in report["answers"]) / 6
    assert overall["meteor"] == pytest.approx(mean)
    assert "negp_answer" not in per["o1"]


def test_score_answers_without_meteor_and_options():
    report = score_answers(_records(), meteor=False, negp_include_zero=False, per_answer=False)
    assert "meteor" not in report["negp"]
    assert report["negp"]["negp_accuracy"] == pytest.approx(2 / 4)
    assert report["answers"] == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"is_negp": "yes"}, "is_negp must be true or false"),
        ({"reference": ""}, "reference must be a non-empty"),
        ({"answer": None}, "answer must be a string"),
        ({"relevance": "kind of"}, "unknown object-scene relevance"),
    ],
)
def test_score_answers_rejects_bad_records(change, message):
    records = _records()
    records[2] = {**records[2], **change}
    with pytest.raises(ValueError, match=f"record 3: question_id 'n3': {message}"):
        score_answers(records, meteor=False)


def test_score_answers_rejects_duplicates_and_missing_fields():
    records = _records()
    with pytest.raises(ValueError, match="record 7: duplicate question_id 'n1'"):
        score_answers([*records, records[0]], meteor=False)
    with pytest.raises(ValueError, match="missing field"):
        score_answers([{"question_id": 1}], meteor=False)


def _write_jsonl(path: Path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_nope_command(tmp_path, capsys):
    answers, out = tmp_path / "answers.jsonl", tmp_path / "scores.json"
    _write_jsonl(answers, _records())
    assert main(["nope", "--answers", str(answers), "--out", str(out), "--no-meteor"]) == 0
    report = json.loads(out.read_text())
    assert report["negp"]["negp_accuracy"] == 0.75
    assert report["input"] == str(answers)

    bad = _records()
    bad[1]["is_negp"] = 1
    _write_jsonl(answers, bad)
    assert main(["nope", "--answers", str(answers), "--out", str(out), "--no-meteor"]) == 2
    assert f"{answers}:2: question_id 'n2': is_negp" in capsys.readouterr().err

    answers.write_text(json.dumps(_records()[0]) + "\n\n" + json.dumps(_records()[0]) + "\n")
    assert main(["nope", "--answers", str(answers), "--out", str(out), "--no-meteor"]) == 2
    assert f"{answers}:3: duplicate question_id 'n1' (first on line 1)" in capsys.readouterr().err

    answers.write_text("{not json\n")
    assert main(["nope", "--answers", str(answers), "--out", str(out)]) == 2
    assert f"{answers}:1: malformed JSON" in capsys.readouterr().err


@pytest.mark.slow  # three METEOR processes (a JVM each, ~10 CPU s): the whole-model tier
def test_score_stage_pairs_several_models(tmp_path, capsys):
    """``halluscope stage nope-score`` with two models' answers (the DAG's one score job per
    dataset, one METEOR process) writes the same bytes as one call per model (each with its own
    METEOR process); path counts that differ are an error naming the flags."""
    from pipeline_helpers import ROOT, nope_demo_answers

    from halluscope.benchmarks.nope.settings import NopeScoreSettings
    from halluscope.config import load

    settings = NopeScoreSettings.from_config(load(ROOT / "params.yaml"))  # METEOR on, as the DAG
    assert shutil.which("java"), "METEOR tests need Java on PATH (CI installs openjdk)"
    models = ("sim-precise", "sim-frequent")
    answers = nope_demo_answers(tmp_path, models)

    def stage(inputs: Sequence[Path], outs: Sequence[Path]) -> int:
        return main(["stage", "nope-score", "--answers", *map(str, inputs),
                     "--settings", settings.to_json(), "--out", *map(str, outs)])  # fmt: skip

    together = [tmp_path / f"together/{m}.json" for m in models]
    alone = [tmp_path / f"alone/{m}.json" for m in models]
    assert stage(answers, together) == 0
    for one, out in zip(answers, alone, strict=True):  # one path per flag still works
        assert stage([one], [out]) == 0
    for got, expected in zip(together, alone, strict=True):
        assert got.read_bytes() == expected.read_bytes()
    reports = [json.loads(path.read_text()) for path in alone]
    assert [r["model"] for r in reports] == list(models)
    assert all(0 < r["overall"]["meteor"] <= 1 for r in reports)
    assert reports[0]["answers"] != reports[1]["answers"]  # two models, not one file twice

    assert stage(answers, [tmp_path / "bad.json"]) == 2
    assert (
        "--answers, --out take as many values each, paired by position (one per entry); "
        "got --answers 2, --out 1"
    ) in capsys.readouterr().err
    assert not (tmp_path / "bad.json").exists()


# ---------------------------------------------------------------------------------------------
# Generation: prompts, parsers, validation, drift
# ---------------------------------------------------------------------------------------------

PAPER_CAPTION = "In this picture we can see some food products in the glass jars."


@pytest.fixture(scope="module")
def nlp():
    return load_nlp()


def test_listing_prompt_is_the_papers():
    # Appendix A, Table 5, "Object Listing Template" example
    assert listing_prompt(PAPER_CAPTION, ["Vegetable"], "closely_related") == (
        'Description:\n"In this picture we can see some food products in the glass jars."\n'
        "List 10 tangible objects that are closely related to the description, but are not "
        "mentioned there. Also avoid these objects: Vegetable."
    )
    assert "completely unrelated" in listing_prompt("x", [], "unrelated", 5)
    assert "avoid" not in listing_prompt("x", [], "loosely_related")
    with pytest.raises(ValueError):
        listing_prompt("x", [], "related-ish")


def test_rewriting_prompt_is_the_papers():
    assert rewriting_prompt(["What is the color of the sugar?", "Who is using the honey?"]) == (
        "Question templates:\n1. What is the color of the sugar?\n2. Who is using the honey?\n"
        "Paraphrase each of these 2 questions while keeping the sentence as a question with a "
        "question mark."
    )


def test_table6_templates():
    texts = {t.number: t.text for t in QUESTION_TEMPLATES}
    assert texts[1] == "What is the color of the <OBJECT>?"
    assert texts[3] == "Where is the <OBJECT> located in the image?"
    assert texts[4] == "How many <OBJECT> are there in the image?"
    variants = [v for t in QUESTION_TEMPLATES for v in t.variants()]
    # 1 + 4 relations + 1 + 1 + 2 verbs + 2 verbs x 4 relations
    assert len(variants) == 17
    ids = {template_id: text for template_id, text, _ in variants}
    assert ids["6-using-left"] == "Who is using the object on the left of the <OBJECT>?"
    assert ids["2-under"] == "What object is located under the <OBJECT>?"
    assert {t.question_type for t in QUESTION_TEMPLATES} == {
        "color", "object", "location", "counting", "person",
    }  # fmt: skip


def test_choose_template_is_seeded_and_covers_table6():
    first = choose_template("honey", 0, "img", "closely_related")
    assert first == choose_template("honey", 0, "img", "closely_related")
    choices = [choose_template(f"obj{i}", 0, "img") for i in range(400)]
    assert {c.template_id.split("-")[0] for c in choices} == {"1", "2", "3", "4", "5", "6"}
    for c in choices:
        assert c.reference in c.acceptable_answers
        assert f"obj{choices.index(c)}" in c.reference_question


@pytest.mark.parametrize(
    "text",
    [
        "1. Spices, 2. Canned fruits, 3. Nuts, 4. Sugar",
        "Sure! Here are 4 objects:\n1. Spices\n2. Canned fruits (in tins)\n3. **Nuts**\n4. Sugar",
        "- spices\n- canned fruits: fruit in cans\n* nuts\n* the sugar.",
        "Spices, Canned fruits, Nuts, Sugar, spices",
        "Objects: spices, canned fruits, nuts, sugar",
        "1) Spices\n2) Canned fruits\n3) Nuts\n4) Sugar\nThese go well together.",
    ],
)
def test_parse_object_list(text):
    assert parse_object_list(text) == ["spices", "canned fruits", "nuts", "sugar"]


def test_parse_object_list_limits_and_junk():
    assert parse_object_list("1. a\n2. b\n3. c", limit=2) == ["a", "b"]
    assert parse_object_list("") == []
    assert parse_object_list("1. 42\n2. a very long description of a thing on a table") == []
    assert parse_object_list("The sandcastle is not a person, but a bucket.") == ["bucket"]


def test_parse_questions():
    text = "Here you go:\n2. Which item is below the nuts?\n1. What hue is the sugar?\n"
    assert parse_questions(text, 3) == [
        "What hue is the sugar?",
        "Which item is below the nuts?",
        None,
    ]
    assert parse_questions("- First?\n- Second?", 2) == ["First?", "Second?"]
    assert parse_questions("1. Who holds it? The answer is nobody.", 1) == ["Who holds it?"]


def test_object_already_in_caption_or_labels_is_rejected(nlp):
    listed = ["spices", "glass jars", "jar", "food", "vegetables", "jar lid", "Spices", "honey"]
    checks = validate_objects(listed, PAPER_CAPTION, ["Vegetable"], nlp)
    reasons = {c.name: c.reason for c in checks}
    assert reasons == {
        "spices": None,
        "glass jars": "in_caption",  # head noun "jar" (lemma of "jars") is a caption noun
        "jar": "in_caption",
        "food": "in_caption",
        "vegetables": "in_labels",  # lemma "vegetable" is a label
        "jar lid": None,  # a lid is not mentioned
        "Spices": "duplicate",
        "honey": None,
    }
    # a generic head ("items") defers to its modifier; a specific head does not
    checks = validate_objects(["food items", "coffee beans"], "A cup of coffee and food.", [], nlp)
    assert [c.reason for c in checks] == ["in_caption", None]
    # multi-word labels match on their head noun or whole phrase
    checks = validate_objects(["coffee table", "dining tables"], "A room.", ["dining table"], nlp)
    assert [c.reason for c in checks] == ["in_labels", "in_labels"]
    # open and closed compounds are the same object, both ways ("space suit" / "spacesuit")
    caption = "An astronaut in an orange spacesuit next to a tooth brush."
    listed = ["astronaut's space suit", "toothbrushes", "space station", "suit"]
    checks = validate_objects(listed, caption, ["space helmet"], nlp)
    assert [c.reason for c in checks] == ["in_caption", "in_caption", None, None]
    checks = validate_objects(["spacehelmet"], "A room.", ["space helmet"], nlp)
    assert [c.reason for c in checks] == ["in_labels"]


def test_drift_check_reasons(nlp):
    ref = "What object is located on the left of the honey?"

    def check(text, ref=ref, obj="honey", qtype="object", rel="on the left of"):
        return check_paraphrase(text, ref, obj, qtype, rel, nlp=nlp)

    ok = check("Which item can be found to the left of the honey in the picture?")
    assert ok.valid and ok.reason is None and ok.similarity >= 0.35
    assert check(None).reason == "missing"
    assert check("Which item is left of the honey").reason == "not_a_question"
    assert check("Which item is on the left of the jam?").reason == "object_missing"
    # the paper's own example flips left to right
    assert check("What is the item on the right side of the honey?").reason == "relation_changed"
    assert check("How many things are on the left of the honey?").reason == "question_type_changed"
    where = "Where is the spatula located in the image?"
    drifted = check(
        "Where did the chef buy the spatula for his new restaurant?",
        where,
        "spatula",
        "location",
        None,
    )
    assert drifted.reason == "low_similarity" and drifted.similarity < 0.35
    assert check("Can you spot the spatula?", where, "spatula", "location", None).valid
    count = "How many canned fruits are there in the image?"
    assert check(
        "What is the number of canned fruits visible?", count, "canned fruits", "counting", None
    ).valid
    assert (
        check("What color are the canned fruits?", count, "canned fruits", "counting", None).reason
        == "question_type_changed"
    )
    # a custom similarity replaces the lexical one
    custom = check_paraphrase(
        "Which item is on the left of the honey?", ref, "honey", "object", None,
        nlp=nlp, similarity=lambda a, b: 0.1, min_similarity=0.2,
    )  # fmt: skip
    assert custom.reason == "low_similarity" and custom.similarity == 0.1


# ---------------------------------------------------------------------------------------------
# Generation loop with a deterministic in-test backend
# ---------------------------------------------------------------------------------------------

LISTS = {
    "closely related": "Sure! Here are the objects:\n1. Spices\n2. Glass jars\n3. Honey\n"
    "4. Vegetables\n5. Pasta",
    "loosely related": "1. Tablecloth, 2. Food, 3. Candle",
    "completely unrelated": "- Bicycle\n- Surfboard",
}


class ScriptedLLM:
    """A real Backend: lists objects by relevance phrase; paraphrases every numbered question as
    "Could you tell me <question>", except that it swaps "pasta" for "noodles" (a drift)."""

    def __init__(self, spec: dict) -> None:
        self.calls: list[Request] = []
        self.fail_listing = bool(spec.get("fail_listing"))

    @property
    def identity(self) -> dict:
        return {"name": "scripted-llm", "revision": "1"}

    def _answer(self, request: Request) -> Response:
        prompt = request.prompt
        if prompt.startswith("Description:"):
            if self.fail_listing:
                return Response(request.request_id, "", "scripted-llm", meta={"error": "boom"})
            phrase = re.search(r"that are (.+?) to the description", prompt).group(1)
            return Response(request.request_id, LISTS[phrase], "scripted-llm")
        assert prompt.startswith("Question templates:")
        assert [m["role"] for m in request.messages] == ["user", "assistant", "user"]
        lines = []
        for number, question in re.findall(r"^(\d+)\. (.+)$", prompt, flags=re.MULTILINE):
            question = question.replace("pasta", "noodles")
            lines.append(f"{number}. Could you tell me {question[0].lower()}{question[1:]}")
        return Response(request.request_id, "\n".join(lines), "scripted-llm")

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        self.calls.extend(requests)
        return [self._answer(r) for r in requests]


register_backend("nope-scripted")(ScriptedLLM)

ITEMS = [{"image_id": "jars", "caption": PAPER_CAPTION, "labels": ["Vegetable"]}]


def test_generate_nope_end_to_end(tmp_path, nlp):
    backend = make_backend({"backend": "nope-scripted"})
    cache = ResponseCache(tmp_path / "cache")
    result = generate_nope(ITEMS, backend, cache, seed=1, nlp=nlp)
    assert len(backend.calls) == 3 + 3  # three listings, three rewrites
    objects = {(o["relevance"], o["object"]): o["reject_reason"] for o in result.objects}
    assert objects[("closely_related", "glass jars")] == "in_caption"
    assert objects[("closely_related", "vegetables")] == "in_labels"
    assert objects[("loosely_related", "food")] == "in_caption"
    assert result.stats["objects_rejected"] == {"in_caption": 2, "in_labels": 1}

    by_object = {q["object"]: q for q in result.questions}
    assert set(by_object) == {
        "spices",
        "honey",
        "pasta",
        "tablecloth",
        "candle",
        "bicycle",
        "surfboard",
    }
    assert by_object["pasta"]["valid"] is False
    assert by_object["pasta"]["reject_reason"] == "object_missing"  # rewritten as "noodles"
    for q in result.questions:
        assert q["is_negp"] is True
        assert q["relevance"] in {"closely_related", "loosely_related", "unrelated"}
        assert q["question_type"] in {"color", "object", "location", "counting", "person"}
        assert q["reference"] in q["acceptable_answers"]
        assert q["object"] in q["reference_question"]
        if q["object"] != "pasta":
            assert q["valid"], q
            assert q["question"].startswith("Could you tell me ")
    assert by_object["bicycle"]["relevance"] == "unrelated"
    assert len(result.valid_questions) == 6 == result.stats["questions_valid"]

    # a second run is served from the cache: same records, no backend call
    again_backend = make_backend({"backend": "nope-scripted"})
    again = generate_nope(ITEMS, again_backend, ResponseCache(tmp_path / "cache", "replay"), seed=1)
    assert again_backend.calls == [] and again.questions == result.questions
    # a different prompt-template version is a different cache key
    with pytest.raises(CacheMissError):
        generate_nope(
            ITEMS, again_backend, ResponseCache(tmp_path / "cache", "replay"),
            template_version=TEMPLATE_VERSION + "-x",
        )  # fmt: skip


def test_generate_nope_failed_listing_is_not_cached(tmp_path, nlp):
    backend = make_backend({"backend": "nope-scripted", "fail_listing": True})
    cache = ResponseCache(tmp_path / "cache")
    result = generate_nope(ITEMS, backend, cache, relevances=["unrelated"], nlp=nlp)
    assert result.stats["listing_failed"] == 1 and result.questions == []
    assert not list((tmp_path / "cache").rglob("*.json"))
    with pytest.raises(ValueError, match="unknown relevance"):
        generate_nope(ITEMS, backend, cache, relevances=["close"], nlp=nlp)


def test_generate_nope_real_llamacpp_run(tmp_path, nlp):
    """One real list-then-rewrite pass with SmolLM2-135M through the ``llamacpp`` backend: the
    content is whatever the tiny model says; the structure, the cache and determinism are ours."""
    pytest.importorskip("llama_cpp")
    backend = make_backend({"backend": "llamacpp", "model": "smollm2"})
    params = {"max_new_tokens": 96, "temperature": 0.0, "seed": 0}
    items = [{"image_id": "jars", "caption": PAPER_CAPTION, "labels": ["Vegetable"]}]
    run = generate_nope(
        items, backend, ResponseCache(tmp_path / "cache"), relevances=["loosely_related"],
        n_objects=5, params=params, nlp=nlp,
    )  # fmt: skip
    assert run.stats["listing_requests"] == 1 and run.stats["listing_failed"] == 0
    assert run.stats["objects_listed"] == len(run.objects) <= 5
    assert run.stats["questions"] == len(run.questions)
    for q in run.questions:
        assert q["relevance"] == "loosely_related" and q["is_negp"] is True
        assert q["question_type"] in {"color", "object", "location", "counting", "person"}
        assert q["valid"] == (q["reject_reason"] is None)
    replay = generate_nope(
        items, backend, ResponseCache(tmp_path / "cache", "replay"),
        relevances=["loosely_related"], n_objects=5, params=params, nlp=nlp,
    )  # fmt: skip
    assert replay.questions == run.questions and replay.objects == run.objects

    # the rewriting turn on the real chat template, whatever the listing gave
    cache = ResponseCache(tmp_path / "cache")
    listing = listing_request("jars", PAPER_CAPTION, ["Vegetable"], "loosely_related", 5, params)
    (listed,) = cache.resolve(backend, [listing], TEMPLATE_VERSION)
    choices = [choose_template(obj, 0, "jars") for obj in ("honey", "spoon")]
    rewrite = rewriting_request(listing, listed.text, [c.reference_question for c in choices])
    (answer,) = cache.resolve(backend, [rewrite], TEMPLATE_VERSION)
    assert not answer.meta.get("error") and isinstance(answer.text, str)  # even empty is an answer
    assert answer.meta["finish_reason"] in ("stop", "length")
    for choice, text in zip(choices, parse_questions(answer.text, 2), strict=True):
        check = check_paraphrase(
            text, choice.reference_question, "honey" if "honey" in choice.reference_question
            else "spoon", choice.question_type, choice.relation, nlp=nlp,
        )  # fmt: skip
        assert check.valid == (check.reason is None)


def test_score_files_and_table_twin_carry_each_cells_interval(tmp_path: Path) -> None:
    """The pipeline's nope-score writes the interval of every number (the image resampled; the
    per-answer rows, which the explorer reads, kept), and Table 3's twin gives each cell's lo
    and hi."""
    import csv
    import random

    from halluscope.benchmarks.nope.report import nope_breakdown_frame, nope_frame
    from halluscope.benchmarks.nope.stages import score_file
    from halluscope.metrics.intervals import IntervalSettings
    from halluscope.report.benchmarks import write_table

    rng = random.Random(0)
    rows = []
    for image in range(25):
        for q in range(4):
            negp = q < 2
            right = rng.random() < 0.6
            reference = "none" if negp else "two"
            rows.append({"question_id": f"img{image}/q{q}", "image_id": f"img{image}",
                         "is_negp": negp, "reference": reference,
                         "answer": reference if right else "three", "model": "m",
                         "question": "How many cats?", "question_type": "counting",
                         "relevance": "closely_related", "source": "fallback"})  # fmt: skip
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report = score_file(answers, False, tmp_path / "scores.json", IntervalSettings(resamples=400))
    assert len(report["answers"]) == len(rows)
    accuracy = report["intervals"]["overall"]["accuracy"]
    assert accuracy["unit"] == "image" and accuracy["n_units"] == 25
    assert accuracy["lo"] <= report["overall"]["accuracy"] <= accuracy["hi"]
    scores = {"m": report}
    bounds = (nope_frame(scores, ["m"], "lo"), nope_frame(scores, ["m"], "hi"))
    table = tmp_path / "nope_table.tex"
    write_table(table, "", nope_frame(scores, ["m"]), ["m"], bounds)
    filled = [r for r in csv.DictReader(table.with_suffix(".csv").open()) if r["value"]]
    assert len(filled) == 3  # NegP and other accuracy, NegP accuracy (no METEOR here)
    for row in filled:
        assert float(row["lo"]) <= float(row["value"]) <= float(row["hi"]), row
    # the breakdown's cells (by question type and relevance) too
    frames = [nope_breakdown_frame(scores, ["m"], end) for end in (None, "lo", "hi")]
    breakdown = tmp_path / "nope_breakdown.tex"
    write_table(breakdown, "", frames[0], ["m"], (frames[1], frames[2]))
    filled = [r for r in csv.DictReader(breakdown.with_suffix(".csv").open()) if r["value"]]
    assert len(filled) == 4  # (Acc., NegP Acc.) x (counting, closely related)
    for row in filled:
        assert float(row["lo"]) <= float(row["value"]) <= float(row["hi"]), row
