"""LLM-augmented object extraction (CAOS steps 2-4): prompt, reply parsing, tally, merge, stage.

The LLM is either a real tiny deterministic backend class registered below under a test name
(it answers from a script keyed by the caption, like ``replay`` answers from recorded files) or
the real SmolLM2-135M-Instruct through llama.cpp.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from halluscope.benchmarks.caos.captions import extract as extract_stage
from halluscope.cli import main
from halluscope.io import read_json, read_jsonl, write_jsonl
from halluscope.models import Request, Response, ResponseCache
from halluscope.models.base import register_backend
from halluscope.objects.llm_extract import (
    FEW_SHOT,
    NOT_OBJECTS,
    OBJECTS_SCHEMA,
    LLMObjectExtractor,
    build_messages,
    clean_name,
    head_class,
    parse_reply,
    tally,
)
from halluscope.objects.parser import ObjectParser
from halluscope.stages.llm import LLMSettings


class ScriptedLLM:
    """Answers each extraction request with the reply scripted for its caption (else ``{}``)."""

    calls: list[str] = []

    def __init__(self, replies: Mapping[str, str], name: str = "scripted") -> None:
        self.replies = dict(replies)
        self.name = name

    @property
    def identity(self) -> dict:
        return {"backend": "test-scripted", "name": self.name, "replies": self.replies}

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for request in requests:
            caption = request.prompt.removeprefix("Caption: ")
            ScriptedLLM.calls.append(caption)
            out.append(Response(request.request_id, self.replies.get(caption, "{}"), self.name, {}))
        return out


@register_backend("test-scripted")
def _scripted(spec: Mapping[str, Any], **_: Any) -> ScriptedLLM:
    return ScriptedLLM(spec["replies"], spec.get("name", "scripted"))


def reply(*names: str) -> str:
    return json.dumps({"objects": list(names)})


@pytest.fixture(autouse=True)
def _reset_calls() -> None:
    ScriptedLLM.calls = []


def extractor(replies: Mapping[str, str], cache_dir: Path, **kwargs: Any) -> LLMObjectExtractor:
    return LLMObjectExtractor(
        kwargs.pop("parser", ObjectParser()),
        ScriptedLLM(replies),
        ResponseCache(cache_dir),
        gen_params={"temperature": 0.0, "max_new_tokens": 64, "seed": 0},
        **kwargs,
    )


def names(record: Mapping[str, Any]) -> list[tuple[str, bool, str]]:
    return [(o["name"], o["in_domain"], o["source"]) for o in record["objects"]]


# -- prompt and reply -----------------------------------------------------------------------------


def test_prompt_has_five_examples_each_tallied_with_its_caption() -> None:
    assert len(FEW_SHOT) == 5
    messages = build_messages("A dog on a rug.")
    assert [m["role"] for m in messages] == ["system"] + ["user", "assistant"] * 5 + ["user"]
    assert messages[-1]["content"] == "Caption: A dog on a rug."
    for caption, objects in FEW_SHOT:
        checked = tally(caption, objects)
        assert not checked.rejected, caption  # every example object occurs in its caption
        assert {m.class_name for m in checked.kept} == set(objects)
        assert not set(objects) & NOT_OBJECTS
    shown = {o for _, objects in FEW_SHOT for o in objects}
    assert {"fire truck", "reading glasses", "seagulls", "awning"} <= shown


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"objects": ["cat", "lamp"]}', ["cat", "lamp"]),
        ('```json\n{"objects": ["cat"]}\n```', ["cat"]),
        ('Sure! {"objects": ["cat", 3, null, "rug"]} Hope this helps.', ["cat", "rug"]),
        ('["cat", "rug"]', ["cat", "rug"]),
        ('{"objects": []}', []),
        ('{"objects": "cat"}', None),
        ('{"items": ["cat"]}', None),
        ('{"objects": ["cat", "ru', None),
        ("cat, rug, lamp", None),
        ("", None),
    ],
)
def test_parse_reply(text: str, expected: list[str] | None) -> None:
    assert parse_reply(text) == expected


def test_clean_name_drops_articles_numbers_and_punctuation() -> None:
    assert clean_name("Two Seagulls!") == "seagulls"
    assert clean_name("a pair of reading glasses") == "reading glasses"
    assert clean_name("  the  Fire-Truck ") == "fire-truck"
    assert clean_name("...") == ""


def test_tally_weeds_out_names_not_in_the_caption() -> None:
    caption = "Two seagulls circle a red lighthouse near a fishing boat."
    checked = tally(caption, ["seagull", "lighthouse", "dolphin", "photo", "Red"])
    assert [m.class_name for m in checked.kept] == ["seagull", "red", "lighthouse"]
    assert checked.kept[0].surface == "seagulls"  # plural in the caption, singular from the LLM
    # "red" occurs in the caption: the tally keeps it (the oracle is the next filter, as in CAOS)
    assert checked.rejected == [
        {"name": "photo", "reason": "not_object"},
        {"name": "dolphin", "reason": "not_in_caption"},
    ]


def test_tally_prefers_the_longer_name_and_reports_the_overlapped_one() -> None:
    checked = tally("A pair of reading glasses.", ["glasses", "reading glasses"])
    assert [m.class_name for m in checked.kept] == ["reading glasses"]
    assert checked.rejected == [{"name": "glasses", "reason": "overlapped"}]


def test_tally_drops_phrases_and_names_covered_by_an_earlier_source() -> None:
    caption = "A person wearing a spacesuit stands by a flag and a flagpole."
    person = (2, 8)  # the rule's mention of "person"
    checked = tally(
        caption, ["person wearing a spacesuit", "person", "spacesuit", "flag", "flagpole"], [person]
    )
    assert [m.class_name for m in checked.kept] == ["spacesuit", "flag", "flagpole"]
    assert checked.rejected == [{"name": "person wearing a spacesuit", "reason": "phrase"}]
    assert checked.covered == ["person"]


def test_head_class_maps_synonyms_and_respects_bigrams() -> None:
    parser = ObjectParser()
    assert head_class(parser, "red sofa") == "couch"
    assert head_class(parser, "toilet seat") == "toilet"
    assert head_class(parser, "dog leash") is None
    assert head_class(parser, "lighthouse") is None


# -- merge ---------------------------------------------------------------------------------------


def test_merge_keeps_caption_order_and_rejects_llm_hallucinations(tmp_path: Path) -> None:
    caption = "A man rides a bicycle past a lighthouse while two balloons float over the harbor."
    ex = extractor(
        {caption: reply("man", "bicycle", "lighthouse", "balloons", "dolphin", "harbor")}, tmp_path
    )
    (record,) = ex.extract([caption])
    assert names(record) == [
        ("person", True, "rule"),
        ("bicycle", True, "rule"),
        ("lighthouse", False, "llm"),
        ("balloon", False, "llm"),
        ("harbor", False, "llm"),
    ]
    positions = [o["position"] for o in record["objects"]]
    assert positions == sorted(positions) and positions[0] == 1  # token index of "man"
    assert record["objects"][3]["surface"] == "balloons"
    audit = record["llm"]
    assert audit["valid"] is True
    assert audit["raw"] == ["man", "bicycle", "lighthouse", "balloons", "dolphin", "harbor"]
    assert audit["rejected"] == [{"name": "dolphin", "reason": "not_in_caption"}]
    assert sorted(audit["covered"]) == ["bicycle", "man"]
    assert ex.stats["l2_rejected"] == 1 and ex.stats["l2_added"] == 3


def test_multiword_and_plural_out_of_domain_objects(tmp_path: Path) -> None:
    caption = "Firefighters stand by a fire truck and three traffic cones."
    ex = extractor({caption: reply("firefighters", "fire truck", "traffic cones")}, tmp_path)
    (record,) = ex.extract([caption])
    # "truck" alone is MSCOCO; the LLM's "fire truck" overlaps the rule's mention and is covered
    assert names(record) == [
        ("firefighter", False, "llm"),
        ("truck", True, "rule"),
        ("traffic cone", False, "llm"),
    ]
    assert record["llm"]["covered"] == ["fire truck"]


def test_llm_recovers_an_mscoco_object_the_rule_missed(tmp_path: Path) -> None:
    # A reference-style table without normalised forms: the pattern singular turns "bus" into
    # "bu", so the rule-based pass misses it; the LLM's "bus" maps to the class directly.
    parser = ObjectParser({"bus": "bus", "man": "person"}, expand=False)
    caption = "A man waits for the bus near a lighthouse."
    ex = extractor({caption: reply("man", "bus", "lighthouse")}, tmp_path, parser=parser)
    (record,) = ex.extract([caption])
    assert names(record) == [
        ("person", True, "rule"),
        ("bus", True, "llm"),
        ("lighthouse", False, "llm"),
    ]


def test_invalid_json_gives_no_l2_and_is_counted(tmp_path: Path) -> None:
    caption = "A cat sleeps on a rug."
    ex = extractor({caption: "The objects are: cat, rug."}, tmp_path)
    (record,) = ex.extract([caption])
    assert names(record) == [("cat", True, "rule")]
    assert record["llm"] == {"covered": [], "raw": [], "rejected": [], "valid": False}
    assert ex.stats["invalid_json"] == 1


def test_lexicon_and_llm_sources_do_not_duplicate(tmp_path: Path) -> None:
    from halluscope.objects.lexicon import LexiconMatcher

    caption = "A dog naps on a rug beside a lighthouse model."
    ex = extractor(
        {caption: reply("dog", "rug", "lighthouse model")},
        tmp_path,
        lexicon=LexiconMatcher(["rug", "lighthouse"]),
    )
    (record,) = ex.extract([caption])
    assert names(record) == [
        ("dog", True, "rule"),
        ("rug", False, "lexicon"),
        ("lighthouse", False, "lexicon"),
    ]
    assert sorted(record["llm"]["covered"]) == ["dog", "lighthouse model", "rug"]


def test_identical_captions_share_one_request_and_reruns_hit_the_cache(tmp_path: Path) -> None:
    caption = "A kettle on a windowsill."
    replies = {caption: reply("kettle", "windowsill")}
    first = extractor(replies, tmp_path).extract([caption, caption, "A windowsill."])
    assert ScriptedLLM.calls == [caption, "A windowsill."]
    ScriptedLLM.calls = []
    again = LLMObjectExtractor(
        ObjectParser(),
        ScriptedLLM(replies),
        ResponseCache(tmp_path, mode="replay"),
        gen_params={"temperature": 0.0, "max_new_tokens": 64, "seed": 0},
    ).extract([caption, caption, "A windowsill."])
    assert ScriptedLLM.calls == [] and again == first
    assert names(first[0]) == [("kettle", False, "llm"), ("windowsill", False, "llm")]


def test_schema_is_sent_only_when_constrained(tmp_path: Path) -> None:
    seen: list[dict] = []

    class Recorder(ScriptedLLM):
        def generate(self, requests: Sequence[Request]) -> list[Response]:
            seen.extend(r.params for r in requests)
            return super().generate(requests)

    for constrained in (True, False):
        LLMObjectExtractor(
            ObjectParser(), Recorder({}), ResponseCache(tmp_path), {"seed": 0}, "v1", constrained
        ).extract([f"A cup {constrained}."])
    assert seen[0]["json_schema"] == OBJECTS_SCHEMA and "json_schema" not in seen[1]


# -- stage ----------------------------------------------------------------------------------------


def test_stage_llm_method_writes_audit_and_falls_back_without_llm(tmp_path: Path) -> None:
    captions = {
        "a": "A woman holds an umbrella under a striped awning.",
        "b": "A woman holds an umbrella under a striped awning.",
        "c": "A horse grazes near a windmill.",
    }
    responses = tmp_path / "responses.jsonl"
    write_jsonl(responses, [{"image_id": k, "text": v} for k, v in captions.items()])
    llm = LLMSettings(
        model_id="scripted",
        spec={
            "backend": "test-scripted",
            "replies": {
                captions["a"]: reply("woman", "umbrella", "awning", "stripes"),
                captions["c"]: "nothing useful",
            },
        },
        params={"temperature": 0.0, "max_new_tokens": 64, "seed": 0},
        batch_size=2,
        template_version="v1",
        cache_mode="live",
    )
    out = tmp_path / "objects.jsonl"
    settings = extract_stage.ExtractSettings("rule+llm", "builtin", "pattern", "builtin", llm)
    stats = extract_stage.run(settings, responses, out, tmp_path / "cache")
    records = read_jsonl(out)
    assert [r["image_id"] for r in records] == ["a", "b", "c"]
    assert names(records[0]) == [
        ("person", True, "rule"),
        ("umbrella", True, "rule"),
        ("awning", False, "llm"),
    ]
    assert records[0] == {**records[1], "image_id": "a"}
    assert records[0]["llm"]["rejected"] == [{"name": "stripes", "reason": "not_in_caption"}]
    assert records[2]["llm"]["valid"] is False and names(records[2]) == [("horse", True, "rule")]
    assert stats["llm_requests"] == 2 and stats["invalid_json"] == 1

    # the same method with the LLM switched off for this file: rule only, no audit field
    plain = tmp_path / "plain.jsonl"
    no_llm = extract_stage.ExtractSettings("rule+llm", "builtin", "pattern", "builtin", None)
    stats = extract_stage.run(no_llm, responses, plain)
    assert stats["method"] == "rule"
    assert all("llm" not in r for r in read_jsonl(plain))

    report = tmp_path / "report.json"
    extract_stage.report([out, plain], out=report)
    counts = read_json(report)
    assert counts["captions"] == 6 and counts["llm"]["captions"] == 3
    assert counts["llm"]["invalid_json"] == 1
    assert counts["llm"]["rejected"] == {"not_in_caption": 2}
    assert counts["objects"]["llm/out_domain"] == 2


def test_instruction_llm_follows_the_instruction_subset() -> None:
    config = {
        "models": {"smollm2": {"backend": "llamacpp", "model": "smollm2"}},
        "extract": {
            "method": "rule+lexicon+llm",
            "llm": {
                "model": "smollm2",
                "max_new_tokens": 64,
                "temperature": 0.0,
                "seed": 0,
                "json_schema": True,
                "batch_size": 4,
                "template_version": "v1",
                "cache_mode": "live",
            },
            "llm_instructions": ["i01"],
        },
    }
    settings = extract_stage.instruction_llm(config, "i01")
    assert settings is not None and settings.spec["backend"] == "llamacpp"
    assert settings.params["max_new_tokens"] == 64
    assert extract_stage.instruction_llm(config, "i02") is None
    config["extract"]["llm_instructions"] = "all"
    assert extract_stage.instruction_llm(config, "i02") is not None
    config["extract"]["method"] = "rule+lexicon"
    assert extract_stage.instruction_llm(config, "i01") is None


def test_stage_rejects_an_unknown_method(tmp_path: Path) -> None:
    responses = tmp_path / "r.jsonl"
    write_jsonl(responses, [{"image_id": "a", "text": "A cat."}])
    assert main([
        "stage", "extract", "--responses", str(responses), "--out", str(tmp_path / "o.jsonl"),
        "--settings", json.dumps({
            "method": "rule+llm", "synonyms": "builtin", "variant": "pattern",
            "lexicon": "builtin", "llm": {"spec": {"backend": "test-scripted", "replies": {}}},
        }),
    ]) == 2  # fmt: skip
    with pytest.raises(ValueError, match="unknown method"):
        settings = extract_stage.ExtractSettings("llm", "builtin", "pattern", "builtin")
        extract_stage.run(settings, responses, tmp_path / "o")


# -- the real SmolLM2 ------------------------------------------------------------------------------


def test_real_smollm2_extracts_objects_from_three_captions(tmp_path: Path) -> None:
    """The real SmolLM2: which objects it names is up to the model; what is checked is what the
    extractor guarantees whatever it says. A reply the model finished (``finish_reason: "stop"``)
    is schema-constrained JSON, so it parses; only a reply cut by ``max_new_tokens`` may not, and
    it is counted in ``invalid_json``, never dropped silently. Kept names occur in the caption,
    and the rule-based objects are there whatever the LLM says."""
    pytest.importorskip("llama_cpp")
    from halluscope.models import make_backend
    from halluscope.objects.llm_extract import extraction_request
    from halluscope.objects.llm_extract import tally as tally_names

    backend = make_backend({"backend": "llamacpp", "model": "smollm2"}, model_name="smollm2")
    captions = [
        "A man in a spacesuit stands next to a flag and a helmet.",
        "A cat sleeps on a wooden bench beside a lantern.",
        "The image shows a lighthouse on a rocky cliff with a boat below.",
    ]
    gen_params = {"temperature": 0.0, "max_new_tokens": 64, "seed": 0}
    ex = LLMObjectExtractor(ObjectParser(), backend, ResponseCache(tmp_path), gen_params=gen_params)
    records = ex.extract(captions)
    # the replies the records were made from, replayed from the cache (nothing new is decoded)
    replies = ResponseCache(tmp_path, mode="replay").resolve(
        backend, [extraction_request(c, gen_params, True) for c in captions], ex.template_version
    )
    invalid = 0
    for caption, record, answer in zip(captions, records, replies, strict=True):
        finish = answer.meta["finish_reason"]
        assert finish in ("stop", "length")
        assert record["llm"]["valid"] is (parse_reply(answer.text) is not None)
        if finish == "stop":
            assert record["llm"]["valid"], answer.text  # a finished constrained reply parses
        invalid += not record["llm"]["valid"]
        if not record["llm"]["valid"]:
            assert finish == "length" and record["llm"]["raw"] == []
        # every kept object occurs in its caption; rejected names do not (or are not objects)
        for obj in record["objects"]:
            assert obj["surface"] in caption
        for rejected in record["llm"]["rejected"]:
            if rejected["reason"] == "not_in_caption":
                assert not tally_names(caption, [rejected["name"]]).kept
    assert ex.stats["invalid_json"] == invalid
    assert ex.stats["llm_requests"] == 3 and ex.stats["failed"] == 0
    # the rule-based objects are always there, whatever the LLM says
    assert ("person", True, "rule") in names(records[0])
    assert {"cat", "bench"} <= {n for n, _, _ in names(records[1])}


def test_params_cross_references_name_the_bad_key() -> None:
    import copy

    from halluscope.config import ConfigError, load, validate

    params = load(Path(__file__).resolve().parents[1] / "params.yaml")
    bad = copy.deepcopy(params)
    bad["extract"]["llm"]["model"] = "gpt-9"
    with pytest.raises(ConfigError, match="extract.llm.model: unknown model id 'gpt-9'"):
        validate(bad)
    bad = copy.deepcopy(params)
    bad["extract"]["llm_instructions"] = ["i01", "i99"]
    with pytest.raises(ConfigError, match="extract.llm_instructions: unknown instruction id"):
        validate(bad)
    bad = copy.deepcopy(params)
    bad["extract"]["method"] = "llm-only"
    with pytest.raises(ConfigError, match="extract.method"):
        validate(bad)
    fine = copy.deepcopy(params)
    fine["extract"]["method"] = "rule"
    del fine["extract"]["llm"]
    validate(fine)  # no LLM method, no LLM section needed
