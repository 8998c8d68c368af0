"""Tri-HE and PhD in the demo DAG, and the simulated LVLMs' benchmark tasks.

Unit tests (fast): the sim's ``trihe``/``trihe-describe``/``trihe-answer``/``phd`` tasks inject
errors at the profile's rates and record them; the demo question files load and are checked;
triplet replies are validated, never guessed; the slot judge and the object/relation split follow
their definitions; tables say "simulated".

Whole-DAG tests (``slow``, one run in a temporary copy): the Tri-HE and PhD tables and figures are
built; the injected relation- and object-error rates are visible in Hallu_Q; the PhD Index ranks
the simulated LVLMs by their yes-bias; a second dry run has nothing to do; figures and tables are
byte-identical when rebuilt.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pipeline_helpers import ROOT, copy_of_build, demo_items, forced_rebuild, planned_jobs, sim

from halluscope.benchmarks.phd.data import CONTEXT_INSTRUCTION, build_prompts
from halluscope.benchmarks.trihe.simulated import (
    NEAR_RELATIONS,
    TRIHE_RELATION_POOL,
    description_triplets,
    triplet_sentence,
)
from halluscope.io import InputError
from halluscope.models.base import Request, user_message
from halluscope.models.sim import PRESETS, resolve_preset

MODELS = ["sim-precise", "sim-verbose", "sim-frequent"]


def trihe_requests(items: dict, task: str = "trihe", repeat: int = 1) -> list[Request]:
    """One request per (image relation, repeat): a question about that relation."""
    out = []
    for image_id, item in items.items():
        for k, triplet in enumerate(item["relations"]):
            for r in range(repeat):
                question = f"Question {r} about {triplet[0]} and {triplet[2]}?"
                out.append(
                    Request(
                        f"{image_id}/{k}/{r}",
                        image_id,
                        image_sha256=item["image_sha256"],
                        messages=(user_message(question),),
                        task=task,
                        meta={"question": question, "triplets": [triplet]},
                    )
                )
    return out


# ---------------------------------------------------------------------------- sim: Tri-HE


def test_trihe_rates_and_recorded_truth() -> None:
    items = demo_items()
    requests = trihe_requests(items, repeat=12)
    for profile in MODELS:
        p = resolve_preset(profile)
        said = [t for r in sim(profile, items).generate(requests) for t in r.meta["triplets"]]
        n = len(said)
        obj = sum(t["error"] == "object" for t in said) / n
        rel = sum(t["error"] == "relation" for t in said) / n
        assert abs(obj - p["trihe_object_error_rate"]) < 0.05, (profile, obj)
        assert abs(rel - p["trihe_relation_error_rate"]) < 0.06, (profile, rel)
    assert (
        PRESETS["sim-verbose"]["trihe_relation_error_rate"]
        > 2 * PRESETS["sim-frequent"]["trihe_relation_error_rate"]
        > 2 * PRESETS["sim-precise"]["trihe_relation_error_rate"]
    )
    assert (
        PRESETS["sim-frequent"]["trihe_object_error_rate"]
        > 2 * PRESETS["sim-verbose"]["trihe_object_error_rate"]
    )


def test_trihe_errors_are_really_wrong_and_the_text_says_them() -> None:
    from halluscope.benchmarks.trihe.triplets import rule_triplet, split_sentences

    items = demo_items()
    requests = trihe_requests(items, repeat=3)
    for overrides in (
        {"trihe_relation_error_rate": 1.0, "trihe_object_error_rate": 0.0},
        {"trihe_relation_error_rate": 0.0, "trihe_object_error_rate": 1.0},
        {"trihe_relation_error_rate": 0.0, "trihe_object_error_rate": 0.0},
    ):
        model = sim("sim-verbose", items, **overrides)
        for request, response in zip(requests, model.generate(requests), strict=True):
            item = items[request.image_id]
            names = {*item["gt_objects"], *item["other_objects"]}
            names |= {n for t in item["relations"] for n in (t[0], t[2])}
            (t,) = response.meta["triplets"]
            s, r, o = t["said"]
            if overrides["trihe_relation_error_rate"] == 1.0:
                assert t["error"] == "relation" and (s, o) == (t["truth"][0], t["truth"][2])
                assert r in TRIHE_RELATION_POOL and r != t["truth"][1]
                assert r not in NEAR_RELATIONS.get(t["truth"][1], ())
                assert [s, r, o] not in item["relations"]
            elif overrides["trihe_object_error_rate"] == 1.0:
                assert t["error"] == "object" and r == t["truth"][1]
                assert (s not in names) != (o not in names)  # exactly one object replaced
            else:
                assert t["error"] is None and t["said"] == t["truth"]
            sentences = split_sentences(response.text)
            assert [rule_triplet(x) for x in sentences] == [t["said"]]
            assert response.text == triplet_sentence(s, r, o)


def test_trihe_describe_then_answer_restates_the_description() -> None:
    items = demo_items()
    direct = trihe_requests(items)
    model = sim("sim-frequent", items)
    described = model.generate(trihe_requests(items, task="trihe-describe"))
    answers = model.generate(
        [
            Request(
                f"a{i}",
                messages=(user_message(f"Here:\n{d.text}\nAnswer the question."),),
                task="trihe-answer",
            )
            for i, d in enumerate(described)
        ]
    )
    # Same draws as direct answers: the sim shows no mitigation effect by construction.
    assert [a.text for a in answers] == [r.text for r in model.generate(direct)]
    assert [d.meta["triplets"] for d in described] == [
        r.meta["triplets"] for r in model.generate(direct)
    ]
    assert description_triplets(described[0].text) == [
        tuple(described[0].meta["triplets"][0]["said"])
    ]


def test_sim_needs_the_answer_key() -> None:
    items = demo_items()
    model = sim("sim-precise", items)
    with pytest.raises(ValueError, match=r"meta\['triplets'\]"):
        model.generate([Request("x", "coffee", messages=(user_message("What?"),), task="trihe")])
    with pytest.raises(ValueError, match=r"meta\['label'\]"):
        model.generate([Request("x", "coffee", messages=(user_message("Is it?"),), task="phd")])


def test_profile_fields_added_later_are_optional_and_checked() -> None:
    old = {k: v for k, v in PRESETS["sim-precise"].items() if k not in ("context_susceptibility",)}
    old = {k: v for k, v in old.items() if not k.startswith("trihe_")}
    assert resolve_preset(old)["trihe_relation_error_rate"] == 0.0
    with pytest.raises(ValueError, match="must be <= 1"):
        resolve_preset(
            "sim-precise", {"trihe_relation_error_rate": 0.6, "trihe_object_error_rate": 0.6}
        )
    with pytest.raises(ValueError, match="context_susceptibility must be a number"):
        resolve_preset("sim-precise", {"context_susceptibility": 2})


# ------------------------------------------------------------------------------- sim: PhD


def phd_requests(items: dict, modes=("base", "iac", "icc")) -> list[Request]:
    from halluscope.benchmarks.phd.data import load_phd_records

    records = load_phd_records(ROOT / "data/demo/phd_questions.yaml", items)
    out = []
    for mode in modes:
        for p in build_prompts(records, mode):
            out.append(
                Request(
                    p.id,
                    p.image_id,
                    image_sha256=items[p.image_id]["image_sha256"],
                    messages=(user_message(p.question),),
                    task="phd",
                    meta={"label": p.label, "mode": p.mode},
                )
            )
    return out


def test_phd_yes_bias_miss_rate_and_contexts() -> None:
    items = demo_items()
    requests = phd_requests(items)
    exact = sim("sim-precise", items, yes_bias=1.0, yesno_miss_rate=0.0, context_susceptibility=0)
    assert all(r.text == "Yes." for r in exact.generate(requests))
    never = sim("sim-precise", items, yes_bias=0.0, yesno_miss_rate=0.0, context_susceptibility=0.0)
    assert [r.meta["answer"] for r in never.generate(requests)] == [
        q.meta["label"] for q in requests
    ]
    for profile in MODELS:
        answers = sim(profile, items).generate(requests)
        flips = {
            (q.meta["mode"], q.request_id.split("/", 1)[1]): a.meta["flipped"]
            for q, a in zip(requests, answers, strict=True)
        }
        keys = [k for (mode, k) in flips if mode == "base"]
        # A context only adds errors, an incorrect one at least as many as an inaccurate one.
        assert all(flips[("icc", k)] >= flips[("iac", k)] >= flips[("base", k)] for k in keys)
        assert all(
            a.meta["context"] == (CONTEXT_INSTRUCTION.strip() in q.prompt)
            for q, a in zip(requests, answers, strict=True)
        )


def test_phd_profiles_have_clearly_different_yes_biases() -> None:
    biases = sorted(PRESETS[m]["yes_bias"] for m in MODELS)
    assert biases[1] - biases[0] >= 0.15 and biases[2] - biases[1] >= 0.15


# ------------------------------------------------------------------------------ loaders


def test_demo_question_files_load(tmp_path: Path) -> None:
    from halluscope.benchmarks.phd.data import PHD_TASKS, load_phd_records
    from halluscope.benchmarks.trihe.data import load_trihe_questions

    items = demo_items()
    questions = load_trihe_questions(ROOT / "data/demo/trihe_questions.yaml", items)
    per_image = {i: sum(q["image_id"] == i for q in questions) for i in items}
    assert all(2 <= n <= 4 for n in per_image.values()), per_image
    records = load_phd_records(ROOT / "data/demo/phd_questions.yaml", items)
    base = [r for r in records if not r.is_ccs]
    assert {(r.image_id, r.task) for r in base} == {(i, t) for i in items for t in PHD_TASKS}
    assert len([r for r in records if r.is_ccs]) >= 5

    bad = tmp_path / "bad.yaml"
    bad.write_text(
        'questions:\n  - {id: q, image: coffee, question: "Q?", answer: "A.",'
        " triplets: [[cup, under, saucer]]}\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="not a relation of image 'coffee'"):
        load_trihe_questions(bad, items)
    bad.write_text(
        'records:\n  - {image_id: coffee, task: counting, yes_question: "A?", no_question: "B?"}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="'context' must be"):
        load_phd_records(bad, items)


# --------------------------------------------------------------------- triplet extraction


def test_triplet_replies_are_validated_not_guessed() -> None:
    from halluscope.benchmarks.trihe.triplets import parse_reply, sentence_schema, word_spans

    assert parse_reply('{"subject": "cat", "relation": "has", "object": "eye"}', "sentence") == (
        [["cat", "has", "eye"]],
        [],
    )
    assert parse_reply('{"subject": "cat", "relation": " ", "object": "eye"}', "sentence") == (
        [],
        ["an empty field"],
    )
    assert parse_reply("The cat has an eye.", "sentence") == ([], ["reply is not JSON"])
    triplets, reasons = parse_reply(
        '{"triplets": [["a", "b", "c"], ["a", "b"], ["a", 1, "c"], ["x", "y", "z", "w"]]}',
        "answer",
    )
    assert triplets == [["a", "b", "c"]] and len(reasons) == 3
    spans = word_spans("The cup is on the saucer.")
    assert "cup" in spans and "on" in spans and "saucer." not in spans
    assert sentence_schema("The cup is on the saucer.")["properties"]["object"]["enum"] == spans


def test_rule_extractor_records_what_it_cannot_read() -> None:
    from halluscope.benchmarks.trihe.triplets import TripletExtractor

    records = TripletExtractor("rule").extract(
        ["The space shuttle is behind the person. It is sunny.", "The cat has the eye."]
    )
    assert records[0]["triplets"] == [["space shuttle", "behind", "person"]]
    assert records[0]["invalid"][0]["unit"] == "It is sunny."
    assert records[1]["triplets"] == [["cat", "has", "eye"]]


# ---------------------------------------------------------------------------------- judges


class WordEncoder:
    """One axis per distinct text: cosine 1 for identical texts, 0 otherwise."""

    def __init__(self) -> None:
        self.axes: dict[str, int] = {}

    def encode(self, texts: list[str], **kwargs) -> np.ndarray:
        for t in texts:
            self.axes.setdefault(t.lower(), len(self.axes))
        out = np.zeros((len(texts), 64))
        for i, t in enumerate(texts):
            out[i, self.axes[t.lower()]] = 1.0
        return out


def test_slot_judge_and_object_relation_split() -> None:
    from halluscope.benchmarks.trihe.judges import SlotSimilarityJudge
    from halluscope.benchmarks.trihe.metric import object_attribution

    encoder = WordEncoder()
    judge = SlotSimilarityJudge(encoder, threshold=0.6)
    refs = [["cup", "on", "saucer"], ["espresso", "in", "cup"]]
    claims = [("cup", "on", "saucer"), ("cup", "riding", "saucer"), ("lamp", "on", "saucer")]
    verdicts = judge.judge(claims, refs)
    assert [v.judgment for v in verdicts] == ["yes", "no", "no"]
    assert verdicts[0].premise == "(cup, on, saucer)"
    errors = object_attribution(
        claims, [v.judgment for v in verdicts], ["cup", "saucer", "espresso"], encoder
    )
    assert errors == [None, "relation", "object"]
    assert object_attribution([("The cup", "x", "saucer")], ["no"], ["cup", "saucer"]) == [
        "relation"
    ]


def test_sim_truth_changes_the_cache_version_only_for_sims() -> None:
    from halluscope.stages.answering import truth_version

    items = demo_items()
    model = sim("sim-precise", items)
    a = [Request("r", "coffee", messages=(user_message("Q?"),), task="phd", meta={"label": "yes"})]
    b = [Request("r", "coffee", messages=(user_message("Q?"),), task="phd", meta={"label": "no"})]
    assert truth_version(model, a, "v1", ["label"]) != truth_version(model, b, "v1", ["label"])

    class Real:
        identity = {"backend": "hf", "name": "m", "revision": "r"}

    assert truth_version(Real(), a, "v1", ["label"]) == "v1"


def test_tables_say_simulated() -> None:
    from halluscope.benchmarks.phd.report import phd_table_latex
    from halluscope.benchmarks.trihe.report import trihe_table_latex

    rates = {"hallu_i": 10.0, "hallu_q": 12.0, "object_i": 4.0, "object_q": 5.0}
    rates |= {"relation_i": 6.0, "relation_q": 7.0}
    scores = {"sim-a": {"judges": {"slots": rates, "similarity": rates}}}
    latex = trihe_table_latex(scores, ["sim-a"], ["slots", "similarity"], 1)
    assert "simulated" in latex and "\\toprule" in latex and "12.0" in latex
    assert latex.count("Hallu$_{\\mathrm{Q}}\\downarrow") == 4
    assert "Injected" not in latex  # only when every model recorded what it injected
    scores["sim-a"]["injected"] = {"triplets": 8, "object_errors": 1, "relation_errors": 3}
    latex = trihe_table_latex(scores, ["sim-a"], ["slots", "similarity"], 1)
    assert "Injected" in latex and "& 50.0 & 12.5 & 37.5 \\\\" in latex
    cell = {"overall": 0.5}
    report = {
        "overall": 0.5,
        "by_mode": {"base": cell},
        "by_task": {"counting": cell},
        "by_mode_task": {"base": {"counting": cell}},
    }
    latex = phd_table_latex({"sim-a": report}, ["sim-a"], ["base", "icc"], 2)
    assert "simulated" in latex and "Counting" in latex and "--" in latex


# ---------------------------------------------------------------------- whole demo DAG

TARGETS = (
    "results/report/demo/trihe_table.tex",
    "results/report/demo/phd_table.tex",
    "results/figures/demo/trihe_bars.pdf",
    "results/figures/demo/trihe_bars.png",
    "results/figures/demo/phd_heatmap.pdf",
    "results/figures/demo/phd_heatmap.png",
)


@pytest.fixture(scope="module")
def project(demo_build: Path, tmp_path_factory) -> Path:
    """A copy of the session's demo build (TARGETS are part of it; the rebuild test edits it)."""
    return copy_of_build(demo_build, tmp_path_factory.mktemp("benchmarks") / "halluscope")


def _scores(root: Path, bench: str) -> dict[str, dict]:
    return {
        m: json.loads((root / f"results/{bench}/demo/{m}/scores.json").read_text()) for m in MODELS
    }


@pytest.mark.slow
def test_tables_and_figures_exist(project: Path) -> None:
    for target in TARGETS:
        path = project / target
        assert path.stat().st_size > 500, target
        if path.suffix == ".tex":
            text = path.read_text()
            assert "simulated" in text and "\\toprule" in text
            assert all(m in text for m in MODELS)


@pytest.mark.slow
def test_injected_error_rates_are_visible(project: Path) -> None:
    scores = _scores(project, "trihe")
    for m, s in scores.items():
        assert s["extraction"]["method"] == "llm"  # the real SmolLM2 extractor ran
        assert s["extraction"]["triplets"] >= s["extraction"]["questions"], m
    for kind in ("relation", "object"):
        order = sorted(MODELS, key=lambda m: scores[m]["injected"][f"{kind}_rate"])
        low, high = order[0], order[-1]
        assert (
            scores[high]["injected"][f"{kind}_rate"] - scores[low]["injected"][f"{kind}_rate"] > 0.2
        )
        slots_high, slots_low = scores[high]["judges"]["slots"], scores[low]["judges"]["slots"]
        assert slots_high[f"{kind}_q"] > slots_low[f"{kind}_q"] + 10, (kind, high, low)
        assert slots_high["hallu_q"] > slots_low["hallu_q"] + 10, (kind, high, low)


@pytest.mark.slow
def test_phd_index_ranks_by_yes_bias(project: Path) -> None:
    scores = _scores(project, "phd")
    by_bias = sorted(MODELS, key=lambda m: PRESETS[m]["yes_bias"])
    for key in ("overall",):
        values = [scores[m][key] for m in by_bias]
        assert values == sorted(values, reverse=True), values
    base = [scores[m]["by_mode"]["base"]["overall"] for m in by_bias]
    assert base == sorted(base, reverse=True), base
    for m in MODELS:  # contexts hurt: base >= iac >= icc
        modes = scores[m]["by_mode"]
        assert modes["base"]["overall"] >= modes["iac"]["overall"] >= modes["icc"]["overall"]
        assert scores[m]["unparsed"] == 0


@pytest.mark.slow
def test_nothing_to_do_then_identical_rebuild(project: Path) -> None:
    assert planned_jobs(project, *TARGETS) == {}
    rules = ("trihe_table", "phd_table", "trihe_figure", "phd_figure")
    before, after = forced_rebuild(project, rules, TARGETS, TARGETS)
    assert after == before
