"""Stop rules beyond ``object-list``: the extraction's vocabulary rule, the Tri-HE
triplet rules and NOPE's numbered-list rules. The rules are checked on token streams, against
the parsers/tally they must agree with, and with the real SmolLM2 GGUF through llama.cpp
(asserting what the code guarantees, not what the 135M model happens to write)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from halluscope.benchmarks.nope.parsing import (
    listing_cut,
    listing_repeat_cut,
    parse_object_list,
    parse_questions,
    questions_cut,
)
from halluscope.benchmarks.nope.prompts import listing_request, rewriting_request
from halluscope.benchmarks.trihe.triplets import TripletExtractor, triplet_list_cut
from halluscope.models import llamacpp
from halluscope.models.cache import cache_key
from halluscope.models.stop_rules import STOP_RULES, get_stop_rule, json_value_cut
from halluscope.objects.llm_extract import (
    PROMPT_VERSION,
    extraction_request,
    leaves_caption,
    object_list_vocab_cut,
    parse_reply,
    tally,
)

ROOT = Path(__file__).resolve().parents[1]
IDENTITY = {"backend": "llamacpp", "name": "smollm2", "sha256": "0" * 64}


def stream(text: str, rule, params=None, step: int = 1) -> tuple[str | None, int]:
    """Feed ``text`` to ``rule`` ``step`` characters at a time, as the backend does per token."""
    for end in range(step, len(text) + step, step):
        cut = rule(text[:end], False, params)
        if cut is not None:
            return cut, end
    return None, len(text)


def test_every_rule_name_resolves() -> None:
    for name in STOP_RULES:
        assert callable(get_stop_rule(name))
    with pytest.raises(ValueError, match="unknown stop_rule"):
        get_stop_rule("object-lists")


# ------------------------------------------------------------------------ object-list-vocab

CAPTION = "Two giraffes stand near a wooden fence, with tall trees and a bus behind them."


def test_vocab_rule_ends_the_list_before_the_first_name_outside_the_caption() -> None:
    reply = '{"objects": ["giraffe", "Trees", "wooden fences", "zebra", "bus", "fence"]}'
    cut, consumed = stream(reply, object_list_vocab_cut, {"stop_text": CAPTION})
    assert json.loads(cut) == {"objects": ["giraffe", "Trees", "wooden fences"]}
    assert consumed == reply.index('"zebra"') + len('"zebra"')  # as soon as "zebra" is complete
    # a repeat still ends it (object-list), whichever comes first
    cut, _ = stream(
        '{"objects": ["bus", "Bus ", "zebra"]}', object_list_vocab_cut, {"stop_text": CAPTION}
    )
    assert json.loads(cut) == {"objects": ["bus"]}
    # a list that stays in the vocabulary is left alone; a capped one is closed
    assert object_list_vocab_cut('{"objects": ["bus"]}', params={"stop_text": CAPTION}) is None
    capped = object_list_vocab_cut('{"objects": ["bus", "tre', True, {"stop_text": CAPTION})
    assert json.loads(capped) == {"objects": ["bus"]}


@pytest.mark.parametrize(
    "name",
    ["giraffe", "Giraffes", "trees", "tree", "a tree", "the wooden fence", "fences", "buses",
     "bus", "zebra", "red car", "sky", "tall trees", "2", "the", "giraffe neck", "fence post"],
)  # fmt: skip
def test_a_name_that_leaves_the_caption_is_one_the_tally_rejects(name: str) -> None:
    """The rule never ends the list *at* a name the tally would keep: leaving the vocabulary
    implies ``not_in_caption``; a kept name never leaves it (plurals: the tally's word forms)."""
    checked = tally(CAPTION, [name])
    kept = bool(checked.kept) or bool(checked.covered)
    if leaves_caption(CAPTION, name):
        assert not kept
        reasons = {r["reason"] for r in checked.rejected}
        assert reasons & {"not_in_caption", "empty"}  # "2": no letter, rejected as empty
    if kept:
        assert not leaves_caption(CAPTION, name)
    assert leaves_caption(CAPTION, "zebra") and not leaves_caption(CAPTION, "Trees")


def test_vocab_rule_puts_the_caption_in_the_cache_key_only_when_set() -> None:
    params = {"max_new_tokens": 64, "temperature": 0.0, "seed": 0}
    plain = extraction_request(CAPTION, params, True, "object-list-greedy")
    repeat = extraction_request(CAPTION, {**params, "stop_rule": "object-list"}, True)
    vocab = extraction_request(
        f"  {CAPTION} ", {**params, "stop_rule": "object-list-vocab"}, True, "object-list-greedy"
    )
    assert "stop_text" not in plain.params and "stop_text" not in repeat.params
    assert vocab.params["stop_text"] == CAPTION and vocab.prompt == f"Caption: {CAPTION}"
    keys = {
        cache_key(IDENTITY, r, f"v1/{PROMPT_VERSION}")
        for r in (plain, repeat, vocab, extraction_request(CAPTION, params, True))
    }
    assert len(keys) == 4


@pytest.fixture(scope="module")
def smollm2():
    pytest.importorskip("llama_cpp")
    return llamacpp.from_spec({"backend": "llamacpp", "model": "smollm2"}, "smollm2")


LOOP_CAPTIONS = [
    "Trees, trees and more trees line a road with trees, next to a bench.",
    "A sandy beach, the beach, a beach umbrella and the beach again under a blue sky.",
    "Two giraffes stand near a wooden fence, trees, trees and more trees behind them.",
    "A man riding a wave on top of a surfboard, with seagulls over the beach.",
]


@pytest.mark.parametrize("grammar", ["schema", "object-list-greedy"])
def test_real_smollm2_vocab_rule_reply_is_valid_repeat_free_and_in_the_caption(
    smollm2, grammar: str
) -> None:
    params = {"max_new_tokens": 64, "temperature": 0.0, "seed": 0}
    ruled = [
        extraction_request(c, {**params, "stop_rule": "object-list-vocab"}, True, grammar)
        for c in LOOP_CAPTIONS
    ]
    replies = smollm2.generate(ruled)
    for caption, response in zip(LOOP_CAPTIONS, replies, strict=True):
        assert response.meta["finish_reason"] in ("stop", "stop_rule", "length_closed")
        names = json.loads(response.text)["objects"]  # valid JSON, never cut mid-name
        assert parse_reply(response.text) == names
        assert len({n.strip().lower() for n in names}) == len(names)
        assert not any(leaves_caption(caption, n) for n in names)
    assert [r.text for r in smollm2.generate(ruled)] == [r.text for r in replies]  # deterministic


def test_real_smollm2_vocab_rule_cuts_the_uncut_reply_at_its_first_leave_or_repeat(smollm2) -> None:
    """Same greedy decoding, so the ruled reply is the uncut reply's names up to (not
    including) the first repeated or out-of-vocabulary name."""
    params = {"max_new_tokens": 64, "temperature": 0.0, "seed": 0}
    for caption in LOOP_CAPTIONS:
        full = smollm2.generate([extraction_request(caption, params, True, "object-list-greedy")])
        ruled = smollm2.generate(
            [
                extraction_request(
                    caption,
                    {**params, "stop_rule": "object-list-vocab"},
                    True,
                    "object-list-greedy",
                )
            ]
        )
        uncut = parse_reply(full[0].text) or []
        expected: list[str] = []
        for name in uncut:
            if name.strip().lower() in {n.strip().lower() for n in expected}:
                break
            if leaves_caption(caption, name):
                break
            expected.append(name)
        assert json.loads(ruled[0].text)["objects"] == expected


# ------------------------------------------------------------------------------ Tri-HE rules


def test_triplet_list_rule_ends_at_the_first_repeated_triplet() -> None:
    reply = (
        '{"triplets": [["dog", "on", "sofa"], ["dog", "near", "pillow"], [" Dog", "ON", "sofa"], '
        '["cat", "on", "mat"]]}'
    )
    cut, consumed = stream(reply, triplet_list_cut)
    assert json.loads(cut) == {"triplets": [["dog", "on", "sofa"], ["dog", "near", "pillow"]]}
    assert consumed == reply.index('[" Dog"') + len('[" Dog", "ON", "sofa"]')
    capped = triplet_list_cut('{"triplets": [["a", "b", "c"], ["d", "e', True)
    assert json.loads(capped) == {"triplets": [["a", "b", "c"]]}
    assert triplet_list_cut('{"triplets": [["a", "b", "c"]]}', True) is None


def test_json_value_rule_ends_at_the_closing_brace() -> None:
    reply = '{"subject": "dog", "relation": "on {", "object": "sofa"}\n\n  '
    cut, consumed = stream(reply, json_value_cut)
    assert cut == reply.strip() and consumed == len(reply.rstrip())
    assert json_value_cut("  [1, 2") is None and json_value_cut("no json") is None


def test_triplet_rules_need_the_right_unit_and_key_the_cache() -> None:
    class _Cache:  # never used: only requests are built
        pass

    with pytest.raises(ValueError, match="unit 'answer'"):
        TripletExtractor(
            "llm", backend=object(), cache=_Cache(), gen_params={"stop_rule": "triplet-list"}
        )
    plain = TripletExtractor("llm", backend=object(), cache=_Cache(), gen_params={"seed": 0})
    ruled = TripletExtractor(
        "llm", backend=object(), cache=_Cache(), gen_params={"seed": 0, "stop_rule": "json-value"}
    )
    a, b = plain.request("The dog is on the sofa."), ruled.request("The dog is on the sofa.")
    assert "stop_rule" not in a.params and b.params["stop_rule"] == "json-value"
    assert cache_key(IDENTITY, a, "v1") != cache_key(IDENTITY, b, "v1")


def test_real_smollm2_triplet_rules_give_valid_repeat_free_json(smollm2) -> None:
    from halluscope.benchmarks.trihe.triplets import parse_reply as parse_triplets

    answers = [
        "The dog is on the sofa. The dog is on the sofa next to the dog on the sofa.",
        "A man is holding an umbrella and a man is holding an umbrella near a car.",
    ]
    params = {"max_new_tokens": 96, "temperature": 0.0, "seed": 0}
    for rule, unit in (("triplet-list", "answer"), ("json-value", "sentence")):
        extractor = TripletExtractor(
            "llm",
            backend=smollm2,
            cache=object(),
            unit=unit,
            gen_params={**params, "stop_rule": rule},
        )
        units = [u for a in answers for u in extractor.units(a)]
        for response in smollm2.generate([extractor.request(u) for u in units]):
            value = json.loads(response.text)  # the whole reply is one JSON value
            assert response.text == response.text.strip()
            triplets, _ = parse_triplets(response.text, unit)
            keys = [json.dumps([f.lower() for f in t]) for t in triplets]
            assert len(set(keys)) == len(keys)
            if unit == "answer":
                assert set(value) == {"triplets"}


# -------------------------------------------------------------------------------- NOPE rules

LISTINGS = [
    "1. boat\n2. bridge\n3. building\n4. island\n5. lake\n6. pagoda\n7. railing\n8. roof\n"
    "9. sky\n10. tree\n11. cloud",
    "1. glasses\n2. hat\n3. cap\n4. tie\n5. button\n6. cap\n7. uniform\n8. hat\n9. cap\n"
    "10. shirt\n11. uniform\n12. hat\n13. cap",
    "Sure! Here are some objects:\n1. The espresso\n2. espresso machine (red)\n"
    "3. Espresso machine\n4. cup\n5. is not here\n6. saucer",
    "1. cat, 2. dog, 3. cat, 4. bird, 5. fish",
    "spoon, fork, knife, spoon, plate",
]  # fmt: skip


@pytest.mark.parametrize("text", LISTINGS)
@pytest.mark.parametrize("wanted", [1, 3, 10])
def test_listing_rules_keep_the_parse_of_the_uncut_reply(text: str, wanted: int) -> None:
    full = parse_object_list(text)
    cut, _ = stream(text, listing_cut, {"stop_items": wanted})
    assert parse_object_list(cut if cut is not None else text)[:wanted] == full[:wanted]
    if cut is not None:
        assert len(parse_object_list(cut)) == wanted
    cut, _ = stream(text, listing_repeat_cut, {"stop_items": wanted})
    got = parse_object_list(cut if cut is not None else text)
    assert got == full[: len(got)] and len(got) <= max(wanted, len(full))
    if cut is not None:  # the cut reply itself repeats no name (its parse drops nothing)
        assert listing_repeat_cut(cut + "\n99. x", False, {"stop_items": 99}) is None


def test_listing_repeat_rule_stops_at_the_first_repeat() -> None:
    cut, _ = stream(LISTINGS[1], listing_repeat_cut, {"stop_items": 10})
    assert cut == "1. glasses\n2. hat\n3. cap\n4. tie\n5. button"
    cut, _ = stream(LISTINGS[0], listing_cut, {"stop_items": 10})
    assert cut == LISTINGS[0].rsplit("\n", 1)[0]  # after the 10th entry's line, not the 11th
    assert stream(LISTINGS[4], listing_repeat_cut, {"stop_items": 10})[0] is None  # not numbered


REWRITES = [
    '1. Who is holding the space station?\nThe answer is "The astronaut."\n'
    "2. Who is holding it?\nThe answer is",
    "1. What object is under the hat? It is a cap.\n2. **Is there** a cap? yes\n3. What is it",
    "Here you go:\n\n1. Where is the kettle\n2. What colour is the kettle?\n\n"
    "3. Is there a kettle?",
    "1.\n2. What is on the table?\n1. Is there a pot?\n",
]  # fmt: skip


@pytest.mark.parametrize("text", REWRITES)
@pytest.mark.parametrize("expected", [1, 2, 3])
def test_questions_rule_keeps_the_parse_of_the_uncut_reply(text: str, expected: int) -> None:
    cut, _ = stream(text, questions_cut, {"stop_items": expected})
    if cut is not None:
        assert parse_questions(cut, expected) == parse_questions(text, expected)
        assert None not in parse_questions(cut, expected)
        assert len(cut) <= len(text)


def test_questions_rule_stops_at_the_newline_after_the_last_paraphrase() -> None:
    text = "1. Yes, there is a cup.\n2. Yes, there is a coffee.\n\nThese are"
    cut, consumed = stream(text, questions_cut, {"stop_items": 2})
    assert cut == "1. Yes, there is a cup.\n2. Yes, there is a coffee."
    assert consumed == text.index("\n\n") + 1
    cut, _ = stream("1. Is it red? It is.\n2. Is it blue? no", questions_cut, {"stop_items": 2})
    assert cut == "1. Is it red? It is.\n2. Is it blue?"  # the "?" ends a paraphrase


def test_nope_rules_reach_both_turns_and_the_cache_key() -> None:
    params = {"max_new_tokens": 64, "temperature": 0.0, "seed": 0}
    plain = listing_request("img1", "A cat on a mat.", ["cat"], "unrelated", 10, params, "fewshot")
    assert plain.params == params
    ruled = listing_request(
        "img1", "A cat on a mat.", ["cat"], "unrelated", 10, {**params, "stop_rule": "count"}
    )
    assert ruled.params == {**params, "stop_rule": "nope-objects", "stop_items": 10}
    rewrite = rewriting_request(ruled, "1. dog\n2. kite", ["Is there a dog?", "Is there a kite?"])
    assert rewrite.params == {**params, "stop_rule": "nope-questions", "stop_items": 2}
    assert rewriting_request(plain, "1. dog", ["Is there a dog?"]).params == params
    repeat = listing_request(
        "img1", "A cat on a mat.", ["cat"], "unrelated", 5, {**params, "stop_rule": "count-repeat"}
    )
    assert repeat.params["stop_rule"] == "nope-objects-repeat" and repeat.params["stop_items"] == 5
    keys = {cache_key(IDENTITY, r, "v1") for r in (plain, ruled, repeat)}
    assert len(keys) == 3


def test_real_smollm2_nope_rules_end_listing_and_rewrite(smollm2) -> None:
    from halluscope.benchmarks.nope.prompts import FEWSHOT_EXAMPLES  # noqa: F401

    params = {"max_new_tokens": 64, "temperature": 0.0, "seed": 0}
    caption = "A red espresso machine on a kitchen counter next to a cup."
    for rule in ("count", "count-repeat"):
        request = listing_request(
            "img1", caption, ["cup"], "closely_related", 4, {**params, "stop_rule": rule}, "fewshot"
        )
        (listing,) = smollm2.generate([request])
        names = parse_object_list(listing.text)
        assert len(names) <= 4
        if listing.meta["finish_reason"] == "stop_rule":
            # the cut reply is final: the rule would not cut it again, it ends on a name
            assert get_stop_rule(request.params["stop_rule"])(
                listing.text, False, request.params
            ) in (
                listing.text,
                None,
            )
        if rule == "count-repeat":
            entries = [e.split(". ", 1)[-1].strip().lower() for e in listing.text.splitlines()]
            entries = [e for e in entries if e]
            assert len(set(entries)) == len(entries) or listing.meta["finish_reason"] != "stop_rule"
        questions = [f"Is there a {n}?" for n in names[:2]] or ["Is there a kettle?"]
        rewrite = rewriting_request(request, listing.text, questions)
        (answer,) = smollm2.generate([rewrite])
        if answer.meta["finish_reason"] == "stop_rule":
            assert None not in parse_questions(answer.text, len(questions))


# ---------------------------------------------------------------------------------- settings


def test_rule_none_carries_no_rule_and_each_rule_is_valid_config() -> None:
    """``stop_rule: none`` adds nothing to the request (the cache keys of runs without a rule
    stay as they were); the demo's params.yaml sets one rule per LLM stage."""
    from halluscope.benchmarks.nope.stages import NopeGeneratorSettings
    from halluscope.benchmarks.trihe.stages import TripletSettings
    from halluscope.config import validate as validate_config
    from halluscope.stages.llm import LLMSettings

    config = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    extract = LLMSettings.from_block(config, config["extract"]["llm"], "x")
    demo = {
        "extract": extract.params.get("stop_rule"),
        "trihe": TripletSettings.from_config(config).llm.params.get("stop_rule"),
        "nope": NopeGeneratorSettings.from_config(config).llm.params.get("stop_rule"),
    }
    assert demo == {"extract": "object-list-vocab", "trihe": "json-value", "nope": "count-repeat"}
    off = copy.deepcopy(config)
    for block in (off["extract"]["llm"], off["trihe"]["extractor"]["llm"], off["nope"]["llm"]):
        block["stop_rule"] = "none"
    validate_config(off)
    assert "stop_rule" not in LLMSettings.from_block(off, off["extract"]["llm"], "x").params
    assert "stop_rule" not in TripletSettings.from_config(off).llm.params
    assert "stop_rule" not in NopeGeneratorSettings.from_config(off).llm.params
    for path, values in (
        (("extract", "llm"), ["object-list", "object-list-vocab"]),
        (("trihe", "extractor", "llm"), ["json-value", "triplet-list"]),
        (("nope", "llm"), ["count", "count-repeat"]),
    ):
        for value in values:
            changed = copy.deepcopy(config)
            block = changed
            for key in path:
                block = block[key]
            block["stop_rule"] = value
            validate_config(changed)
        block["stop_rule"] = "bogus"
        with pytest.raises(Exception, match="stop_rule"):
            validate_config(changed)
    changed = copy.deepcopy(config)
    changed["nope"]["llm"]["stop_rule"] = "count"
    assert NopeGeneratorSettings.from_config(changed).llm.params["stop_rule"] == "count"
    changed["trihe"]["extractor"]["llm"]["stop_rule"] = "json-value"
    assert TripletSettings.from_config(changed).llm.params["stop_rule"] == "json-value"
