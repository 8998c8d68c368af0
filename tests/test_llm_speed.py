"""The fast LLM-stage options: the object-list stopping rule, the hand-written grammar,
derived Q8_0 weights, and unchanged cache keys for requests that use none of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from halluscope.models import llamacpp, llamacpp_greedy
from halluscope.models.base import Request
from halluscope.models.cache import cache_key
from halluscope.objects.llm_extract import OBJECTS_GBNF, PROMPT_VERSION, extraction_request

ROOT = Path(__file__).resolve().parents[1]

#: Pieces of a degenerate SmolLM2 reply, token by token ("trees" repeated to the item limit).
LOOPING = ['{"', "objects", '":', ' ["', "trees", '",', ' "', "bench", '",', ' "', "Trees", '",']
LOOPING += [' "', "trees", '",'] * 8


def test_stop_rule_ends_at_first_repeat_on_a_token_stream() -> None:
    text, cut, consumed = "", None, 0
    for piece in LOOPING:
        text += piece
        consumed += 1
        cut = llamacpp.object_list_cut(text)
        if cut is not None:
            break
    assert cut is not None and consumed == 12  # stopped as soon as '"Trees"' was complete
    assert json.loads(cut) == {"objects": ["trees", "bench"]}
    assert llamacpp.object_list_cut('{"objects": ["a", "b"]}') is None  # no repeat: unchanged
    # a reply cut by the token cap is closed after its last complete name
    assert json.loads(llamacpp.object_list_cut('{"objects": ["a", "b", "c', final=True)) == {
        "objects": ["a", "b"]
    }
    assert json.loads(llamacpp.object_list_cut('{"objects": [', final=True)) == {"objects": []}


class _ScriptedModel:
    """Stands in for ``Llama``: streams :data:`LOOPING` and counts the chunks consumed."""

    def __init__(self) -> None:
        self.consumed = 0
        self.closed = False

    def create_chat_completion(self, messages, stream=False, **kwargs):
        assert stream

        def chunks():
            try:
                for piece in LOOPING:
                    self.consumed += 1
                    yield {"choices": [{"delta": {"content": piece}, "finish_reason": None}]}
                yield {"choices": [{"delta": {}, "finish_reason": "length"}]}
            finally:
                self.closed = True

        return chunks()


def test_backend_stops_the_stream_and_returns_valid_json() -> None:
    model = _ScriptedModel()
    out = llamacpp.LlamaCppBackend._stream_with_rule(model, [], {})
    assert model.consumed == 12 and model.closed
    choice = out["choices"][0]
    assert choice["finish_reason"] == "stop_rule"
    assert json.loads(choice["message"]["content"]) == {"objects": ["trees", "bench"]}


@pytest.fixture(scope="module")
def smollm2():
    pytest.importorskip("llama_cpp")
    return llamacpp.from_spec({"backend": "llamacpp", "model": "smollm2"}, "smollm2")


def test_real_smollm2_reply_with_rule_and_grammar_is_valid_and_repeat_free(smollm2) -> None:
    caption = "Trees, trees and more trees line a road with trees, next to a bench."
    params = {"max_new_tokens": 64, "temperature": 0.0, "seed": 0, "stop_rule": "object-list"}
    request = extraction_request(caption, params, True, "object-list")
    assert request.params["grammar"] == OBJECTS_GBNF and "json_schema" not in request.params
    first, again = smollm2.generate([request, request])
    names = json.loads(first.text)["objects"]
    assert len({n.strip().lower() for n in names}) == len(names)
    assert first.text == again.text  # deterministic


def test_object_list_language_matches_the_gbnf_layout() -> None:
    step = llamacpp_greedy.object_list_step
    assert step(None, b'{"objects": ["a b", "c"]}')[0] == "done"
    assert step(None, b'{"objects": []}')[0] == "done"
    assert step(None, b'{"objects": ["a", "b')[0] == "name"  # a valid prefix
    for bad in (
        b'{"objects":[',
        b'{"objects": [""',
        b'{"objects": ["a","b"]}',
        b'{"objects": []}x',
    ):
        assert step(None, bad) is None
    twelve = b'{"objects": [' + b", ".join(b'"x"' for _ in range(12))
    assert step(None, twelve + b"]}")[0] == "done" and step(None, twelve + b",") is None


def test_greedy_constraint_gives_the_gbnf_replies(smollm2) -> None:
    """``object-list-greedy`` (Python check on the best candidates) = llama.cpp's GBNF sampler."""
    captions = [
        "A man riding a wave on top of a surfboard, with seagulls over the beach.",
        "Two giraffes stand near a wooden fence, trees, trees and more trees behind them.",
    ]
    params = {"max_new_tokens": 48, "temperature": 0.0, "seed": 0}
    gbnf = smollm2.generate([extraction_request(c, params, True, "object-list") for c in captions])
    greedy = smollm2.generate(
        [extraction_request(c, params, True, "object-list-greedy") for c in captions]
    )
    assert [r.text for r in greedy] == [r.text for r in gbnf]
    assert all(r.meta["finish_reason"] in ("stop", "length") for r in greedy)


def test_greedy_grammar_gives_the_grammar_sampler_replies(monkeypatch) -> None:
    """``greedy_grammar`` (the best token checked first, the vocabulary scanned only when it is
    rejected) = llama.cpp's grammar sampler over the whole vocabulary, for a JSON schema, a
    per-sentence Tri-HE span schema and a GBNF grammar; both branches of the check are taken."""
    pytest.importorskip("llama_cpp")
    from halluscope.benchmarks.trihe.triplets import sentence_schema

    made: list[llamacpp_greedy.GreedyGrammar] = []

    class Recording(llamacpp_greedy.GreedyGrammar):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(llamacpp_greedy, "GreedyGrammar", Recording)
    spec = {"backend": "llamacpp", "model": "smollm2"}
    full = llamacpp.from_spec({**spec, "greedy_grammar": False}, "smollm2")
    greedy = llamacpp.from_spec(spec, "smollm2")
    params = {"max_new_tokens": 40, "temperature": 0.0, "seed": 0}
    sentence = "A brown dog sits on a red sofa next to the window."
    chat = ({"role": "user", "content": f"Give subject, relation and object of: {sentence}"},)
    requests = [
        extraction_request("A man riding a wave on a surfboard near seagulls.", params, True),
        extraction_request("Giraffes by a fence, trees, trees and trees.", params, True),
        extraction_request("A cat on a laptop keyboard.", params, True, "object-list"),
        Request(
            "t",
            messages=chat,
            params={**params, "json_schema": sentence_schema(sentence)},
            task="chat",
        ),
    ]
    want = full.generate(requests)
    assert not made  # the baseline never builds the processor
    got = greedy.generate(requests)
    assert [(r.text, r.meta["finish_reason"]) for r in got] == [
        (r.text, r.meta["finish_reason"]) for r in want
    ]
    assert all(not r.meta.get("error") for r in got) and len(made) == len(requests)
    assert sum(g.full_scans for g in made) > 0  # the fallback branch ran
    assert sum(g.full_scans for g in made) < sum(g._accepted for g in made)  # and the fast one


def test_q8_0_is_derived_once_checksummed_and_rederived_when_mismatched(tmp_path) -> None:
    pytest.importorskip("llama_cpp")
    source = llamacpp.bundled_model_path("smollm2")
    path = llamacpp.derived_weights(source, "Q8_0", tmp_path)
    check = path.with_name(path.name + ".sha256")
    digest = check.read_text(encoding="ascii").split()[0]
    assert digest == llamacpp.file_sha256(path) and path.name.endswith(".Q8_0.gguf")
    stamp = path.stat().st_mtime_ns
    assert llamacpp.derived_weights(source, "Q8_0", tmp_path) == path
    assert path.stat().st_mtime_ns == stamp  # reused, not derived again
    check.write_text("0" * 64 + "\n", encoding="ascii")
    assert llamacpp.derived_weights(source, "Q8_0", tmp_path) == path
    assert check.read_text(encoding="ascii").split()[0] == digest  # same bytes derived again
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, check.name])


def test_requests_without_new_params_keep_their_cache_key() -> None:
    """Key computed from the plain code path (the extractor without the speed options) of the
    shipped SmolLM2 for params.yaml's ``extract.llm``: a fixed digest."""
    from halluscope.stages.llm import LLMSettings

    config = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    # the extractor's settings without the speed options (the demo sets them)
    block = {**config["extract"]["llm"], "grammar": "schema", "stop_rule": "none"}
    settings = LLMSettings.from_block(config, block, "extract.llm")
    assert settings.grammar == "schema" and "stop_rule" not in settings.params
    identity = {
        "backend": "llamacpp",
        "name": "smollm2",
        "sha256": llamacpp.file_sha256(llamacpp.bundled_model_path("smollm2")),
    }
    request = extraction_request("A man rides a horse on a beach.", settings.params, True)
    assert request.params == {
        "max_new_tokens": 64,
        "temperature": 0.0,
        "seed": 0,
        "json_schema": request.params["json_schema"],
    }
    key = cache_key(identity, request, f"v1/{PROMPT_VERSION}")
    assert key == "ba65fd53d8a186154c8a62c0d23d31d64d7bcb6f1922998433095b3dd4c607ca"
    fast = extraction_request(
        "A man rides a horse on a beach.",
        {**settings.params, "stop_rule": "object-list"},
        True,
        "object-list",
    )
    assert cache_key(identity, fast, f"v1/{PROMPT_VERSION}") != key


def test_identity_records_derived_weights_only(tmp_path, monkeypatch) -> None:
    pytest.importorskip("llama_cpp")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    shipped = llamacpp.from_spec({"backend": "llamacpp", "model": "smollm2"}, "smollm2")
    q8 = llamacpp.from_spec(
        {"backend": "llamacpp", "model": "smollm2", "weights": "Q8_0"}, "smollm2"
    )
    assert set(shipped.identity) == {"backend", "name", "sha256"}
    assert q8.identity["weights"] == "Q8_0" and q8.identity["sha256"] != shipped.identity["sha256"]
    assert (tmp_path / "halluscope" / "models").is_dir()
    bad = Request(
        request_id="r",
        messages=({"role": "user", "content": "x"},),
        params={"stop_rule": "nope"},
        task="chat",
    )
    with pytest.raises(ValueError, match="stop_rule"):
        shipped._kwargs(bad)
