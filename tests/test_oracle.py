"""The LVLM-ensemble oracle: reply parsing, majority vote with ties Absent, accuracy, stage."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from halluscope.benchmarks.caos.captions import oracle as oracle_stage
from halluscope.benchmarks.caos.captions.oracle import OracleSettings
from halluscope.cli import main
from halluscope.io import read_json, read_jsonl, write_jsonl
from halluscope.models import Request, Response, ResponseCache, make_backend
from halluscope.models.base import register_backend
from halluscope.models.oracle import (
    QUESTION,
    EnsembleOracle,
    accuracy_report,
    label,
    majority,
    parse_vote,
    question,
)
from halluscope.models.sim import question_object
from halluscope.stages.llm import LLMSettings


class FixedAnswers:
    """A member that answers every question about an object with the text scripted for it."""

    def __init__(self, name: str, answers: Mapping[str, str]) -> None:
        self.name = name
        self.answers = dict(answers)
        self.asked: list[str] = []

    @property
    def identity(self) -> dict:
        return {"backend": "test-fixed", "name": self.name, "answers": self.answers}

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for request in requests:
            name = question_object(request.prompt)
            self.asked.append(name)
            out.append(Response(request.request_id, self.answers.get(name, ""), self.name))
        return out


@register_backend("test-fixed")
def _fixed(spec: Mapping[str, Any], model_name: str | None = None, **_: Any) -> FixedAnswers:
    return FixedAnswers(model_name or "fixed", spec["answers"])


def item(image_id: str, others: list[str] | None, gt: list[str] = (), image: bool = True) -> dict:
    record: dict[str, Any] = {"image_id": image_id, "gt_objects": list(gt)}
    if others is not None:
        record["other_objects"] = others
    if image:
        record["image_sha256"] = f"{sum(map(ord, image_id)):064x}"
    return record


# -- parsing and voting ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "vote"),
    [
        ("Present", True),
        ("present.", True),
        ("  PRESENT!\n", True),
        ("**Present**", True),
        ("Answer: Present", True),
        ("Yes, there is a lamp.", True),
        ("yes", True),
        ("The lamp is present in the image.", True),
        ("Absent", False),
        ("absent.", False),
        ("No, there is no lamp in the image.", False),
        ("No.", False),
        ("Not present", False),
        ("The lamp is not present.", False),
        ("I think it is absent.", False),
        ("", None),
        ("I cannot tell.", None),
        ("Present or Absent", None),
        ("The lamp is present, or maybe absent.", None),
        (None, None),
    ],
)
def test_parse_vote(text: Any, vote: bool | None) -> None:
    assert parse_vote(text) is vote


@pytest.mark.parametrize(
    ("votes", "present"),
    [
        ([True, True, False], True),
        ([True, False, False], False),
        ([True, False], False),  # tie -> Absent
        ([True, False, None], False),  # tie after the unparsed reply -> Absent
        ([None, None, None], False),  # no votes -> Absent
        ([], False),
        ([True, None, None], True),  # one vote, no opposition
        ([True, True, False, False], False),
    ],
)
def test_majority_breaks_ties_towards_absent(votes: list[bool | None], present: bool) -> None:
    assert majority(votes) is present


def test_question_is_the_papers_and_the_sim_reads_it() -> None:
    assert question("name tag") == (
        "Does the image contain name tag? Please respond with only Present or Absent."
    )
    assert QUESTION.count("{object}") == 1
    assert question_object(question("space shuttle")) == "space shuttle"


def test_labels_come_from_annotations_with_plurals() -> None:
    annotated = item("a", ["flag", "name tag"], gt=["person"])
    assert label(annotated, "flags") is True
    assert label(annotated, "name tag") is True
    assert label(annotated, "person") is True
    assert label(annotated, "tree") is False
    assert label(item("b", None), "flag") is None  # no labels: unknown, not absent


# -- the ensemble ----------------------------------------------------------------------------------


def test_votes_ties_unparseable_and_mixed(tmp_path: Path) -> None:
    members = {
        "m1": FixedAnswers("m1", {"lamp": "Present", "rug": "Present", "vase": "??", "kite": "No"}),
        "m2": FixedAnswers("m2", {"lamp": "present.", "rug": "Absent", "vase": "", "kite": "Yes"}),
        "m3": FixedAnswers("m3", {"lamp": "Absent", "rug": "maybe", "vase": "hmm", "kite": "?"}),
    }
    oracle = EnsembleOracle(members, ResponseCache(tmp_path), {"seed": 0})
    items = {"a": item("a", ["lamp", "kite"])}
    pairs = [("a", "lamp"), ("a", "rug"), ("a", "vase"), ("a", "kite")]
    records = oracle.decide(items, pairs)
    by_name = {r["name"]: r for r in records}
    assert [r["name"] for r in records] == ["lamp", "rug", "vase", "kite"]
    assert by_name["lamp"]["present"] is True  # 2 Present vs 1 Absent
    assert by_name["lamp"]["votes"] == {"m1": True, "m2": True, "m3": False}
    assert by_name["rug"]["present"] is False  # 1-1 tie (m3 unparseable) -> Absent
    assert by_name["rug"]["votes"] == {"m1": True, "m2": False, "m3": None}
    assert by_name["vase"]["present"] is False  # no votes at all -> Absent
    assert by_name["kite"]["present"] is False  # mixed yes/no, tie -> Absent
    assert by_name["kite"]["answers"] == {"m1": "No", "m2": "Yes", "m3": "?"}
    assert oracle.unparsed == {"m1": 1, "m2": 1, "m3": 3}
    assert all(r["method"] == "ensemble" for r in records)

    report = accuracy_report(records, items)
    assert report["n_labelled"] == 4 and report["ties"] == 2 and report["no_votes"] == 1
    # truth: lamp, kite present; rug, vase absent
    assert report["ensemble"]["correct"] == 3  # lamp, rug, vase right; kite wrong
    assert report["members"]["m1"]["correct"] == 1  # lamp right; rug, kite wrong; vase unparsed
    assert report["members"]["m1"]["unparsed"] == 1
    assert report["members"]["m2"]["correct"] == 3
    assert report["members"]["m3"]["correct"] == 0 and report["members"]["m3"]["unparsed"] == 3


def test_each_member_ends_with_its_own_summary_line(tmp_path: Path, capsys) -> None:
    """The terminal shows a job's summary lines (one per member): each names its member."""
    members = {m: FixedAnswers(m, {"lamp": "Present"}) for m in ("m2", "m1")}
    items = {"a": item("a", ["lamp"])}
    EnsembleOracle(members, ResponseCache(tmp_path)).decide(items, [("a", "lamp")])
    summaries = [line for line in capsys.readouterr().err.splitlines() if " requests, " in line]
    assert [line.split(":")[0] for line in summaries] == ["questions to m1", "questions to m2"]
    assert all(line.endswith(" s") and ": 1 requests, 0 cache hits" in line for line in summaries)


def test_every_question_goes_through_the_cache(tmp_path: Path) -> None:
    member = FixedAnswers("m1", {"lamp": "Present"})
    items = {"a": item("a", ["lamp"])}
    EnsembleOracle({"m1": member}, ResponseCache(tmp_path)).decide(items, [("a", "lamp")])
    replay = EnsembleOracle({"m1": member}, ResponseCache(tmp_path, mode="replay"))
    (record,) = replay.decide(items, [("a", "lamp")])
    assert member.asked == ["lamp"] and record["present"] is True


def test_items_without_image_stay_unverified(tmp_path: Path) -> None:
    member = FixedAnswers("m1", {"lamp": "Present"})
    items = {"a": item("a", ["lamp"], image=False)}
    (record,) = EnsembleOracle({"m1": member}, ResponseCache(tmp_path)).decide(
        items, [("a", "lamp")]
    )
    assert record["present"] is None and record["votes"] == {} and member.asked == []
    assert accuracy_report([record], items)["unverified"] == 1


def many_items(n: int = 60, seed: int = 3) -> tuple[dict[str, dict], list[tuple[str, str]]]:
    """Items with 4 visible objects of 12, and questions about 8 of the 12 per image."""
    pool = ["lamp", "rug", "vase", "flag", "helmet", "tree", "fence", "cloud", "wall", "shelf",
            "basket", "ladder"]  # fmt: skip
    rng = random.Random(seed)
    items, pairs = {}, []
    for i in range(n):
        image_id = f"img{i:03d}"
        items[image_id] = item(image_id, rng.sample(pool, 4))
        pairs += [(image_id, name) for name in rng.sample(pool, 8)]
    return items, pairs


def test_sim_members_error_rates_show_in_accuracy(tmp_path: Path) -> None:
    items, pairs = many_items()
    rates = {"sim-a": 0.0, "sim-b": 0.2, "sim-c": 0.2, "sim-d": 0.2}
    members = {
        name: make_backend(
            {"backend": "sim", "preset": "sim-precise", "overrides": {"oracle_error_rate": rate}},
            items=items,
            model_name=name,
        )
        for name, rate in rates.items()
    }
    exact = EnsembleOracle({"sim-a": members["sim-a"]}, ResponseCache(tmp_path), {"seed": 0})
    report = accuracy_report(exact.decide(items, pairs), items)
    assert report["n_labelled"] == len(pairs) == 480
    assert report["members"]["sim-a"]["accuracy"] == 1.0 == report["ensemble"]["accuracy"]

    noisy = {k: v for k, v in members.items() if k != "sim-a"}
    ensemble = EnsembleOracle(noisy, ResponseCache(tmp_path), {"seed": 0})
    report = accuracy_report(ensemble.decide(items, pairs), items)
    for name in noisy:
        assert 0.74 <= report["members"][name]["accuracy"] <= 0.86, report["members"][name]
    # independent 20 % errors: a 3-member majority errs with 3p^2 - 2p^3 = 10.4 %
    assert 0.86 <= report["ensemble"]["accuracy"] <= 0.93, report["ensemble"]
    assert report["ensemble"]["accuracy"] > max(m["accuracy"] for m in report["members"].values())
    assert report["ensemble"]["unparsed"] == 0 and report["ties"] == 0


# -- stage -----------------------------------------------------------------------------------------


def write_inputs(tmp_path: Path) -> tuple[Path, Path]:
    items = [item("a", ["lamp", "flag"], gt=["person"]), item("b", ["rug"], image=False)]
    objects = [
        {
            "image_id": "a",
            "objects": [
                {"name": "person", "surface": "man", "position": 1, "in_domain": True,
                 "source": "rule"},
                {"name": "lamp", "surface": "lamp", "position": 4, "in_domain": False,
                 "source": "llm"},
                {"name": "tree", "surface": "tree", "position": 7, "in_domain": False,
                 "source": "lexicon"},
                {"name": "lamp", "surface": "lamps", "position": 9, "in_domain": False,
                 "source": "llm"},
            ],
        },
        {"image_id": "b", "objects": [{"name": "rug", "surface": "rug", "position": 2,
                                       "in_domain": False, "source": "lexicon"}]},
    ]  # fmt: skip
    write_jsonl(tmp_path / "items.jsonl", items)
    write_jsonl(tmp_path / "objects.jsonl", objects)
    return tmp_path / "objects.jsonl", tmp_path / "items.jsonl"


def test_stage_ensemble_writes_decisions_and_accuracy(tmp_path: Path) -> None:
    objects, items = write_inputs(tmp_path)
    members = {
        "m1": {"backend": "test-fixed", "answers": {"lamp": "Present", "tree": "Present"}},
        "m2": {"backend": "test-fixed", "answers": {"lamp": "Present", "tree": "Absent"}},
        "m3": {"backend": "test-fixed", "answers": {"lamp": "Absent", "tree": "Absent"}},
    }
    out, accuracy = tmp_path / "oracle.jsonl", tmp_path / "oracle.accuracy.json"
    assert (
        main([
            "stage", "oracle", "decide", "--objects", str(objects), "--items", str(items),
            "--settings", OracleSettings("ensemble", tuple(
                LLMSettings.from_generation(m, spec, {"seed": 0}) for m, spec in members.items()
            )).to_json(),
            "--cache", str(tmp_path / "cache"), "--out", str(out), "--accuracy", str(accuracy),
        ])
        == 0
    )  # fmt: skip
    records = read_jsonl(out)
    assert [(r["image_id"], r["name"], r["present"]) for r in records] == [
        ("a", "lamp", True),
        ("a", "tree", False),
        ("b", "rug", None),  # no image: unverified
    ]
    assert set(records[0]) == {"image_id", "name", "present", "votes", "method", "answers"}
    assert records[1]["votes"] == {"m1": True, "m2": False, "m3": False}
    report = read_json(accuracy)
    assert report["method"] == "ensemble" and report["n_labelled"] == 2
    assert report["ensemble"]["accuracy"] == 1.0
    assert report["members"]["m1"]["accuracy"] == 0.5
    assert report["members"]["m3"]["accuracy"] == 0.5
    assert report["unverified"] == 1

    pooled = tmp_path / "pooled.json"
    oracle_stage.pool([out, out], items=items, out=pooled)
    assert read_json(pooled)["n_decisions"] == 3  # each image/object pair once


def test_stage_annotations_and_none(tmp_path: Path) -> None:
    objects, items = write_inputs(tmp_path)
    out = tmp_path / "ann.jsonl"
    report = oracle_stage.run(OracleSettings("annotations"), objects, items, out)
    assert [(r["name"], r["present"]) for r in read_jsonl(out)] == [
        ("lamp", True),
        ("tree", False),
        ("rug", True),
    ]
    assert report["ensemble"]["accuracy"] == 1.0
    oracle_stage.run(OracleSettings("none"), objects, items, out)
    assert {r["present"] for r in read_jsonl(out)} == {None}
    assert all(r["method"] == "none" and r["votes"] == {} for r in read_jsonl(out))


def test_stage_errors(tmp_path: Path) -> None:
    objects, items = write_inputs(tmp_path)
    with pytest.raises(ValueError, match="unknown method"):
        oracle_stage.run(OracleSettings("vote"), objects, items, tmp_path / "x.jsonl")
    with pytest.raises(ValueError, match="at least one member"):
        ensemble = OracleSettings("ensemble")
        oracle_stage.run(ensemble, objects, items, tmp_path / "x.jsonl", cache=tmp_path)


def test_params_cross_references_name_the_bad_member() -> None:
    import copy

    from halluscope.config import ConfigError, load, validate

    params = load(Path(__file__).resolve().parents[1] / "params.yaml")
    bad = copy.deepcopy(params)
    bad["oracle"]["members"] = ["sim-precise", "llava-13b"]
    with pytest.raises(ConfigError, match="oracle.members: unknown model id 'llava-13b'"):
        validate(bad)
    bad["oracle"]["members"] = []
    with pytest.raises(ConfigError, match="needs oracle.members"):
        validate(bad)
    bad["oracle"] = {"method": "annotations"}
    validate(bad)  # the annotations oracle needs no members
