"""``Request.answer_key``: the ground truth a test instrument answers from.

It is part of the response-cache key only when set and only for backends that read it
(``reads_answer_key``); every other backend never receives it and keeps the cache keys it had
before answer keys existed. The stages build their sims without items: the answer keys carry
what the sim needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from halluscope.models import Request, Response, ResponseCache, cache_key, make_backend
from halluscope.models.answers import AnswersFailed, answer_all
from halluscope.models.base import image_request, item_answer_key, reads_answer_key
from halluscope.models.cache import key_payload

ITEM = {
    "image_id": "cat",
    "image": None,
    "image_sha256": "ab" * 32,
    "gt_objects": ["cat"],
    "other_objects": ["blanket"],
    "relations": [["cat", "on", "blanket"]],
    "caption": "A cat on a blanket.",
}


class Recorder:
    """A backend that does not read answer keys and records the requests it gets."""

    def __init__(self, fail: Sequence[str] = ()) -> None:
        self.seen: list[Request] = []
        self.fail = set(fail)

    @property
    def identity(self) -> dict:
        return {"backend": "recorder", "name": "r", "revision": "1"}

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        self.seen.extend(requests)
        return [
            Response(r.request_id, "Yes.", "r", self.identity,
                     {"error": "boom"} if r.request_id in self.fail else {})
            for r in requests
        ]  # fmt: skip


def ask(answer_key=None, **changes) -> Request:
    fields = {"params": {"seed": 0}, "task": "yesno", "meta": {"question_id": "q1"}}
    return image_request(
        ITEM, "m/q1", "Is there a dog in the image?", **{**fields, **changes}, answer_key=answer_key
    )


def test_answer_key_is_in_the_key_only_when_set() -> None:
    identity = {"backend": "x", "name": "m"}
    plain = ask()
    keyed = ask(item_answer_key(ITEM, label="no"))
    assert "answer_key" not in key_payload(identity, plain, "v1")
    assert key_payload(identity, keyed, "v1")["answer_key"] == {
        "gt_objects": ["cat"], "other_objects": ["blanket"],
        "relations": [["cat", "on", "blanket"]], "label": "no",
    }  # fmt: skip
    assert cache_key(identity, plain, "v1") != cache_key(identity, keyed, "v1")
    other_truth = ask(item_answer_key(ITEM, label="yes"))
    assert cache_key(identity, keyed, "v1") != cache_key(identity, other_truth, "v1")


def test_answer_key_must_be_json_and_is_detached() -> None:
    truth = {"triplets": [("cat", "on", "blanket")]}
    request = ask(truth)
    truth["triplets"].append(("x", "y", "z"))
    assert request.answer_key == {"triplets": [["cat", "on", "blanket"]]}
    with pytest.raises(ValueError, match="answer_key must be a JSON value"):
        ask({"bad": {1, 2}})
    with pytest.raises(ValueError, match="secret-looking key"):
        key_payload({"name": "m"}, ask({"api_key": "x"}), "v1")


def test_backends_that_do_not_read_answer_keys_never_get_them(tmp_path: Path) -> None:
    backend = Recorder()
    assert not reads_answer_key(backend)
    cache = ResponseCache(tmp_path)
    answer_all(backend, [ask(item_answer_key(ITEM, label="no"))], cache, "v1")
    assert [r.answer_key for r in backend.seen] == [None]
    # the stored key is the one of the request without an answer key
    assert cache.get(cache_key(backend.identity, ask(), "v1")) is not None
    again = Recorder()
    answer_all(again, [ask(item_answer_key(ITEM, label="yes"))], cache, "v1")
    assert again.seen == []  # a hit: the answer key does not change a real backend's key


def test_sim_reads_answer_keys_and_keys_on_them(tmp_path: Path) -> None:
    sim = make_backend({"backend": "sim", "preset": "sim-precise"}, answer_keys=True)
    assert reads_answer_key(sim)
    cache = ResponseCache(tmp_path)
    first = answer_all(sim, [ask(item_answer_key(ITEM))], cache, "v1")
    assert first[0].meta["truth"] is False and first[0].meta["object"] == "dog"
    dog = {**ITEM, "gt_objects": ["cat", "dog"]}
    second = answer_all(sim, [ask(item_answer_key(dog))], cache, "v1")
    assert second[0].meta["truth"] is True  # a new answer key is a new question, not a hit
    assert cache.hits == 0 and cache.misses == 2
    with pytest.raises(ValueError, match="carries no answer key"):
        sim.generate([ask()])


def test_sim_built_from_items_answers_like_the_answer_key() -> None:
    from_items = make_backend({"backend": "sim", "preset": "sim-verbose"}, items=[ITEM])
    from_keys = make_backend({"backend": "sim", "preset": "sim-verbose"}, answer_keys=True)
    caption = image_request(
        ITEM, "c", "Describe the image in detail.", params={"seed": 3}, task="caption", meta={}
    )
    keyed = image_request(
        ITEM, "c", "Describe the image in detail.", params={"seed": 3}, task="caption", meta={},
        answer_key=item_answer_key(ITEM),
    )  # fmt: skip
    [a] = from_items.generate([caption])
    [b] = from_keys.generate([keyed])
    assert (a.text, a.meta) == (b.text, b.meta)


def test_answer_all_raises_after_caching_the_successes(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    requests = [
        image_request(ITEM, f"q{i}", f"Is there a dog {i} in the image?", params={},
                      task="yesno", meta={})
        for i in range(3)
    ]  # fmt: skip
    with pytest.raises(AnswersFailed, match=r"1 of 3 POPE answers failed \(first: 'q1'") as err:
        answer_all(Recorder(fail=["q1"]), requests, cache, "v1", what="POPE answers")
    assert [r.request_id for r in err.value.failed] == ["q1"]
    retry = Recorder()
    answer_all(retry, requests, cache, "v1")
    assert [r.request_id for r in retry.seen] == ["q1"]
