"""Batched decoding in the ``llamacpp`` backend gives the replies of one request at a time, byte
for byte (issue 37), with the real SmolLM2 and the demo's request shapes.

Why these checks: a reply must not depend on how many sequences share the context, on the
thread count or on which requests are decoded together. It may depend on the request before it:
the one-at-a-time ``Llama`` keeps the previous request's KV and evaluates only what follows the
common prefix, and how a position was evaluated changes its bits (measured), so the batched path
replays that history. Each order is therefore compared with the one-at-a-time path run in the
same order, from a fresh state, in the cache's batches of 4.
"""

from __future__ import annotations

import dataclasses
import types
from pathlib import Path

import pytest
import yaml

pytest.importorskip("llama_cpp")

from halluscope.models import Request, user_message
from halluscope.models.llamacpp import LlamaCppBackend, bundled_model_path, from_spec
from halluscope.objects.llm_extract import extraction_request

ROOT = Path(__file__).resolve().parents[1]
SPEC = {"backend": "llamacpp", "model": "smollm2", "n_ctx": 2048, "seed": 0, "weights": "Q8_0"}
EXTRACT = {"max_new_tokens": 64, "temperature": 0.0, "seed": 0, "stop_rule": "object-list-vocab"}
BATCH = 4  # the demo's extract.llm.batch_size: what one generate() call receives


def make(n_seq: int, threads: int = 1) -> LlamaCppBackend:
    try:
        bundled_model_path("smollm2")
    except ValueError as err:
        pytest.skip(str(err))
    return from_spec({**SPEC, "n_seq": n_seq, "n_threads": threads}, "smollm2")


def captions() -> list[str]:
    data = yaml.safe_load((ROOT / "data/demo/annotations.yaml").read_text(encoding="utf-8"))
    return [" ".join(image["caption"].split()) for image in data["images"]]


def chat(request_id: str, *messages: dict, **params) -> Request:
    params = {"temperature": 0.0, "max_new_tokens": 16, "seed": 0, **params}
    return Request(request_id=request_id, messages=messages, params=params, task="chat")


@pytest.fixture(scope="module")
def requests() -> list[Request]:
    """The demo's LLM extraction requests (object-list constraint, ``object-list-vocab`` stop
    rule: streamed), two schema-constrained ones (JSON-schema grammar, not streamed), an
    identical prompt after a one-token reply (the ``Llama`` samples it from the kept logits), a
    seeded sampled one, and one over the context (an error answer that leaves no history)."""
    texts = captions()
    out = [extraction_request(c, EXTRACT, True, "object-list-greedy") for c in texts]
    schema = {"max_new_tokens": 24, "temperature": 0.0, "seed": 0}
    for caption in texts[:2]:  # another request id: the extraction's is the caption's hash
        request = extraction_request(caption, schema, True, "schema")
        out.append(dataclasses.replace(request, request_id=f"schema/{request.request_id}"))
    hello = user_message("Name three fruits.")
    out += [chat("one-token", hello, max_new_tokens=1), chat("same-prompt", hello)]
    out += [chat("sampled", hello, temperature=0.8, seed=3)]
    out += [chat("too-long", user_message("word " * 2100))]
    return out


def fresh(backend: LlamaCppBackend) -> None:
    """Forget the history of this process's model (as a new process would start)."""
    model, _ = backend._llama()
    model.reset()
    backend.batched_context().forget()


def replies(backend: LlamaCppBackend, requests: list[Request], batched: bool) -> list[tuple]:
    """The answers in the cache's batches, from a fresh state: through ``generate`` (for
    ``n_seq: 1`` the one-at-a-time path) or, ``batched``, the batched path for any ``n_seq``."""
    fresh(backend)
    answer = backend.generate_batched if batched else backend.generate
    out = []
    for start in range(0, len(requests), BATCH):
        out += answer(requests[start : start + BATCH])
    return [(r.request_id, r.text, r.meta) for r in out]


ORDERS = {"given": lambda rs: list(rs), "reversed": lambda rs: list(reversed(rs))}


@pytest.fixture(scope="module")
def reference(requests):
    """The one-at-a-time path (``n_seq: 1``, one thread) in an order (computed once each)."""
    done: dict[str, list[tuple]] = {}

    def get(order: str) -> list[tuple]:
        if order not in done:
            done[order] = replies(make(1), ORDERS[order](requests), batched=False)
        return done[order]

    return get


def test_the_request_set_covers_each_path(reference) -> None:
    answers = {rid: (text, meta) for rid, text, meta in reference("given")}
    assert sum(rid.startswith("llm-extract/") for rid in answers) == len(captions())
    assert sum(rid.startswith("schema/") for rid in answers) == 2
    assert answers["one-token"][1]["completion_tokens"] == 1
    assert "error" in answers["too-long"][1] and answers["too-long"][0] == ""
    assert all("error" not in meta for rid, (_, meta) in answers.items() if rid != "too-long")


# Every n_seq meets both thread counts and both orders, and every thread count both orders
# (pairwise, not the 12-case product: each case decodes the whole request set, about 12 s).
# The default tier: one case, one thread, in the order whose reference the request-set test
# computes anyway (a second order's reference costs as much as a case).
MATRIX = [(4, 1, "given"), (16, 1, "reversed"), (1, 1, "given"), (1, 2, "reversed")]
MATRIX += [(4, 2, "reversed"), (16, 2, "given")]
FAST = MATRIX[:1]


@pytest.mark.parametrize(
    ("n_seq", "threads", "order"),
    [pytest.param(*case, marks=() if case in FAST else pytest.mark.slow) for case in MATRIX],
    ids=[f"n{n}-t{t}-{o}" for n, t, o in MATRIX],
)
def test_batched_replies_are_byte_identical(requests, reference, n_seq, threads, order) -> None:
    backend = make(n_seq, threads)
    assert replies(backend, ORDERS[order](requests), batched=True) == reference(order)
    assert backend.batched_context().copied_tokens > 0  # prompts started from their predecessor


def test_a_prompt_continuing_the_previous_reply() -> None:
    """A NOPE-style rewrite whose prompt holds its listing's reply: one-at-a-time, its KV
    prefix is the listing's (evaluated token by token); the batched path waits for the listing
    and continues from its sequence, in one batch and across calls."""
    ask = user_message("List three animals, one per line.")
    (listing,) = make(1).generate([chat("listing", ask, max_new_tokens=24)])
    follow = (ask, {"role": "assistant", "content": listing.text}, user_message("And a fourth?"))
    pair = [chat("listing", ask, max_new_tokens=24), chat("rewrite", *follow)]
    one = make(1)
    fresh(one)
    expected = [(r.text, r.meta) for r in one.generate(pair[:1]) + one.generate(pair[1:])]
    batched = make(4)
    fresh(batched)
    together = [(r.text, r.meta) for r in batched.generate(pair)]
    fresh(batched)
    apart = [(r.text, r.meta) for r in batched.generate(pair[:1]) + batched.generate(pair[1:])]
    assert together == expected and apart == expected


def test_the_context_keeps_the_conditions_of_identical_bytes() -> None:
    import llama_cpp.llama_cpp as lib

    from halluscope.models.llamacpp_batched import BatchedContext

    context = make(4).batched_context()
    assert lib.llama_n_ctx_seq(context.ctx.ctx) == SPEC["n_ctx"]  # the one-at-a-time context
    assert lib.llama_n_seq_max(context.ctx.ctx) == 5  # a stream each, + the predecessor's
    params = lib.llama_context_default_params()
    params.flash_attn_type = lib.LLAMA_FLASH_ATTN_TYPE_ENABLED
    with pytest.raises(ValueError, match="flash attention"):
        BatchedContext(types.SimpleNamespace(context_params=params), 4)  # type: ignore[arg-type]


def test_threads_follow_the_job_unless_the_spec_sets_them(monkeypatch) -> None:
    monkeypatch.setenv("HALLUSCOPE_THREADS", "2")
    assert from_spec(SPEC, "smollm2").n_threads == 2
    assert from_spec({**SPEC, "n_threads": 1}, "smollm2").n_threads == 1
    monkeypatch.delenv("HALLUSCOPE_THREADS")
    assert from_spec(SPEC, "smollm2").n_threads == 1
    monkeypatch.setenv("HALLUSCOPE_THREADS", "two")
    with pytest.raises(ValueError, match="HALLUSCOPE_THREADS"):
        from_spec(SPEC, "smollm2")


def test_n_seq_is_not_part_of_the_identity() -> None:
    assert make(1).identity == make(8).identity
    with pytest.raises(ValueError, match="n_seq"):
        make(0)
