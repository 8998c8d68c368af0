"""Backend interface, response cache, simulated LVLMs and the generation loop."""

from __future__ import annotations

import json
import multiprocessing as mp
import random
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from halluscope.models import (
    CacheMissError,
    Request,
    Response,
    ResponseCache,
    cache_key,
    generate_captions,
    make_backend,
    user_message,
)
from halluscope.models.sim import (
    OOD_POOL,
    PRESETS,
    SimulatedLVLM,
    compose_text,
    frequency_order,
    instruction_style,
    resolve_preset,
)

# Table 3 of the CAOS paper (caos.txt, Appendix A).
INSTRUCTIONS = {
    "i01": "Provide a brief description of the given image.",
    "i02": "Question: Generate a short caption of the image. Answer: ",
    "i03": "Create a short textual summary for the image.",
    "i04": "Generate a concise description for the image.",
    "i05": "Write a succinct summary capturing the essence of the image.",
    "i06": "Craft a brief narrative that encapsulates the scene depicted in the image.",
    "i07": "Summarize the image with a few descriptive words.",
    "i08": "Compose a short, evocative caption for the image.",
    "i09": "Describe the image using minimal words but maximum impact.",
    "i10": "Formulate a concise and descriptive caption for the image.",
    "i11": "Write a short, impactful description for the image.",
    "i12": "Sum up the image in a few words, capturing its essence effectively.",
    "i13": "Craft a brief but descriptive caption for the image.",
    "i14": "Write a concise summary that encapsulates the image\u2019s message or mood.",
}

# Visible non-MSCOCO objects for the synthetic items (no MSCOCO synonyms among them).
OTHER_WORDS = ("napkin", "spacesuit", "flag", "helmet", "plate", "sign", "lamp", "tree")


def synthetic_items(n: int = 60, seed: int = 7) -> list[dict]:
    """Items like ``results/data/{profile}/items.jsonl`` with random MSCOCO and other objects."""
    rng = random.Random(seed)
    classes = sorted(frequency_order())
    items = []
    for index in range(n):
        gt = sorted(rng.sample(classes, rng.randint(1, 5)))
        other = sorted(rng.sample(OTHER_WORDS, rng.randint(0, 3)))
        relations = [[gt[0], "next to", other[0]]] if other else []
        if len(gt) > 1:
            relations.append([gt[0], "near", gt[1]])
        items.append(
            {
                "image_id": f"img{index:03d}",
                "image": None,
                "image_sha256": f"{index:064x}",
                "gt_objects": gt,
                "other_objects": other,
                "relations": relations,
                "caption": "",
                "source": {},
            }
        )
    return items


def caption_requests(items: Sequence[dict], instruction: str, seed: int = 0) -> list[Request]:
    return [
        Request(
            request_id=item["image_id"],
            image_id=item["image_id"],
            image_sha256=item["image_sha256"],
            messages=(user_message(instruction),),
            params={"seed": seed, "max_new_tokens": 64},
            task="caption",
        )
        for item in items
    ]


def sim(profile: str, items: Sequence[dict], name: str | None = None) -> SimulatedLVLM:
    return make_backend({"backend": "sim", "name": name or profile, "preset": profile}, items=items)


class CountingBackend:
    """Echo backend that records what it was asked (and can fail on purpose)."""

    def __init__(self, name: str = "echo", fail_ids: Sequence[str] = ()):
        self.calls: list[str] = []
        self.fail_ids = set(fail_ids)
        self._name = name

    @property
    def identity(self) -> dict:
        return {"name": self._name, "revision": "r1"}

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for request in requests:
            self.calls.append(request.request_id)
            meta = {"error": "boom"} if request.request_id in self.fail_ids else {}
            text = f"echo {request.image_id}: {request.prompt}"
            out.append(Response(request.request_id, text, self._name, self.identity, meta))
        return out


# ------------------------------------------------------------------------------------------
# cache keys


def base_request(**changes) -> Request:
    fields = {
        "request_id": "r1",
        "image_id": "img1",
        "image_path": "/somewhere/img1.png",
        "image_sha256": "ab" * 32,
        "messages": (user_message("Describe the image."),),
        "params": {"max_new_tokens": 64, "temperature": 0.0, "top_p": 1.0, "seed": 0},
        "task": "caption",
        "meta": {"instruction_id": "i01"},
    }
    fields.update(changes)
    return Request(**fields)


IDENTITY = {"name": "m", "revision": "r1"}


def test_cache_key_changes_with_every_input_part():
    key = cache_key(IDENTITY, base_request(), "v1")
    params = base_request().params
    variants = {
        "model name": cache_key({"name": "m2", "revision": "r1"}, base_request(), "v1"),
        "model revision": cache_key({"name": "m", "revision": "r2"}, base_request(), "v1"),
        "message text": cache_key(
            IDENTITY, base_request(messages=(user_message("Describe it."),)), "v1"
        ),
        "extra message": cache_key(
            IDENTITY,
            base_request(messages=(("system", "Be brief."), user_message("Describe the image."))),
            "v1",
        ),
        "message role": cache_key(
            IDENTITY, base_request(messages=(("system", "Describe the image."),)), "v1"
        ),
        "image hash": cache_key(IDENTITY, base_request(image_sha256="cd" * 32), "v1"),
        "max_new_tokens": cache_key(
            IDENTITY, base_request(params={**params, "max_new_tokens": 65}), "v1"
        ),
        "temperature": cache_key(
            IDENTITY, base_request(params={**params, "temperature": 0.7}), "v1"
        ),
        "top_p": cache_key(IDENTITY, base_request(params={**params, "top_p": 0.9}), "v1"),
        "seed": cache_key(IDENTITY, base_request(params={**params, "seed": 1}), "v1"),
        "new param": cache_key(IDENTITY, base_request(params={**params, "num_beams": 1}), "v1"),
        "task": cache_key(IDENTITY, base_request(task="yesno"), "v1"),
        "template version": cache_key(IDENTITY, base_request(), "v2"),
    }
    assert all(re.fullmatch(r"[0-9a-f]{64}", k) for k in [key, *variants.values()])
    for part, other in variants.items():
        assert other != key, f"the cache key ignores the {part}"
    assert len(set(variants.values())) == len(variants)


def test_cache_key_ignores_names_paths_and_meta():
    key = cache_key(IDENTITY, base_request(), "v1")
    assert cache_key(IDENTITY, base_request(request_id="other"), "v1") == key
    assert cache_key(IDENTITY, base_request(image_path="/elsewhere/x.png"), "v1") == key
    assert cache_key(IDENTITY, base_request(image_id="renamed"), "v1") == key
    assert cache_key(IDENTITY, base_request(meta={"instruction_id": "i99"}), "v1") == key
    # param order does not matter (canonical JSON)
    params = dict(reversed(list(base_request().params.items())))
    assert cache_key(IDENTITY, base_request(params=params), "v1") == key


def test_cache_key_hashes_image_content_not_path(tmp_path: Path):
    a, b, c = tmp_path / "a.png", tmp_path / "b.png", tmp_path / "c.png"
    a.write_bytes(b"same pixels")
    b.write_bytes(b"same pixels")
    c.write_bytes(b"other pixels")
    key_a = cache_key(IDENTITY, base_request(image_sha256=None, image_path=str(a)), "v1")
    key_b = cache_key(IDENTITY, base_request(image_sha256=None, image_path=str(b)), "v1")
    key_c = cache_key(IDENTITY, base_request(image_sha256=None, image_path=str(c)), "v1")
    assert key_a == key_b != key_c
    # without any image file the image id stands in, so two images never share a key
    no_file = {"image_sha256": None, "image_path": None}
    assert cache_key(IDENTITY, base_request(image_id="x", **no_file), "v1") != cache_key(
        IDENTITY, base_request(image_id="y", **no_file), "v1"
    )


def test_cache_refuses_secrets():
    with pytest.raises(ValueError, match="api_key"):
        cache_key(IDENTITY, base_request(params={"api_key": "sk-123"}), "v1")
    with pytest.raises(ValueError, match="Authorization"):
        cache_key({"name": "m", "headers": {"Authorization": "Bearer x"}}, base_request(), "v1")
    # generation params that merely contain "token" are fine
    cache_key(IDENTITY, base_request(params={"max_new_tokens": 5, "max_tokens": 5}), "v1")


# ------------------------------------------------------------------------------------------
# cache storage and modes


def test_cache_put_get_layout_and_counters(tmp_path: Path):
    cache = ResponseCache(tmp_path / "cache", "live")
    key = cache_key(IDENTITY, base_request(), "v1")
    assert cache.get(key) is None and cache.misses == 1 and cache.hits == 0
    response = Response("r1", "A cat.", "m", IDENTITY, {"injected": []})
    assert cache.put(key, response)
    path = tmp_path / "cache" / key[:2] / f"{key}.json"
    assert path.is_file()
    assert cache.get(key) == response and cache.hits == 1
    # failures are never stored
    other = cache_key(IDENTITY, base_request(task="yesno"), "v1")
    assert not cache.put(other, Response("r2", "", "m", IDENTITY, {"error": "timeout"}))
    assert cache.get(other) is None
    assert not list((tmp_path / "cache").rglob("*.tmp"))
    with pytest.raises(ValueError, match="cache mode"):
        ResponseCache(tmp_path, "offline")  # type: ignore[arg-type]


def _writer(root: str, worker: int, rounds: int) -> None:
    cache = ResponseCache(root, "live")
    for round_ in range(rounds):
        for index in range(40):
            key = f"{index:064x}"
            text = "x" * (2000 + 37 * index)  # large enough to be written in several chunks
            cache.put(key, Response(f"r{index}", text, "m", IDENTITY, {"w": worker, "r": round_}))


def _reader(root: str, seconds: float, errors) -> None:
    import time

    cache = ResponseCache(root, "live")
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for index in range(40):
            try:
                response = cache.get(f"{index:064x}")
            except Exception as err:  # noqa: BLE001 - any failure is reported to the test
                errors.put(repr(err))
                return
            if response is not None and len(response.text) != 2000 + 37 * index:
                errors.put(f"half entry for key {index}")
                return


def test_cache_survives_concurrent_writers(tmp_path: Path):
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    root = str(tmp_path / "cache")
    errors = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(root, w, 15)) for w in range(2)]
    procs.append(ctx.Process(target=_reader, args=(root, 2.0, errors)))
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=120)
        assert proc.exitcode == 0
    assert errors.empty(), errors.get()
    files = sorted((tmp_path / "cache").rglob("*.json"))
    assert len(files) == 40
    for path in files:
        entry = json.loads(path.read_text(encoding="utf-8"))
        assert entry["response"]["meta"]["r"] == 14
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.name.endswith(".tmp")]


def test_modes_live_replay_record(tmp_path: Path):
    items = synthetic_items(5)
    requests = caption_requests(items, INSTRUCTIONS["i01"])
    backend = CountingBackend()
    live = ResponseCache(tmp_path, "live")
    first = live.resolve(backend, requests, "v1", batch_size=2)
    assert len(backend.calls) == 5 and live.misses == 5
    again = ResponseCache(tmp_path, "live").resolve(backend, requests, "v1")
    assert again == first and len(backend.calls) == 5  # all hits, backend untouched

    replay = ResponseCache(tmp_path, "replay")
    assert replay.resolve(backend, requests, "v1") == first and replay.hits == 5
    missing = caption_requests(items, INSTRUCTIONS["i02"])
    with pytest.raises(CacheMissError, match=r"'img000'.*live"):
        replay.resolve(backend, missing, "v1")
    assert len(backend.calls) == 5  # replay never reaches the backend

    record = ResponseCache(tmp_path, "record")
    record.resolve(backend, requests, "v1")
    assert len(backend.calls) == 10 and record.hits == 0  # record always asks the backend


def test_failed_answers_are_not_cached_and_rerun_retries_only_them(tmp_path: Path):
    items = synthetic_items(4)
    out = tmp_path / "out.jsonl"
    cache = ResponseCache(tmp_path / "cache", "live")
    failing = CountingBackend(fail_ids=["echo/i01/img002"])
    with pytest.raises(RuntimeError, match="1 of 4 requests failed"):
        generate_captions(
            failing, cache, items, "i01", "Describe.", "echo", {}, out, "v1", progress=False
        )
    assert not out.exists()
    healthy = CountingBackend()
    stats = generate_captions(
        healthy, cache, items, "i01", "Describe.", "echo", {}, out, "v1", progress=False
    )
    assert healthy.calls == ["echo/i01/img002"]
    assert stats == {"items": 4, "hits": 3, "misses": 1, "failed": 0}


# ------------------------------------------------------------------------------------------
# generation loop


def test_generate_captions_writes_ordered_sorted_jsonl_and_resumes(tmp_path: Path):
    items = synthetic_items(12)
    backend = sim("sim-verbose", items)
    params = {"seed": 0, "max_new_tokens": 128, "temperature": 0.0}
    out1, out2 = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    stats = generate_captions(
        backend, ResponseCache(tmp_path / "c1"), items, "i01", INSTRUCTIONS["i01"],
        "sim-verbose", params, out1, "v1", batch_size=5, progress=False,
    )  # fmt: skip
    assert stats["items"] == 12 and stats["misses"] == 12
    lines = out1.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["image_id"] for r in records] == [i["image_id"] for i in items]
    assert all(list(r) == sorted(r) for r in records)
    assert set(records[0]) == {"image_id", "instruction_id", "model", "text", "meta"}
    assert records[0]["instruction_id"] == "i01" and records[0]["model"] == "sim-verbose"

    # a run killed after the first batch resumes from the cache and writes the same bytes
    killed = Proxy(sim("sim-verbose", items), crash_on_batch=2)
    with pytest.raises(KeyboardInterrupt):
        generate_captions(
            killed, ResponseCache(tmp_path / "c2"), items, "i01", INSTRUCTIONS["i01"],
            "sim-verbose", params, out2, "v1", batch_size=5, progress=False,
        )  # fmt: skip
    assert not out2.exists()
    assert len(list((tmp_path / "c2").rglob("*.json"))) == 5
    resumed = Proxy(sim("sim-verbose", items))
    stats = generate_captions(
        resumed, ResponseCache(tmp_path / "c2"), items, "i01", INSTRUCTIONS["i01"],
        "sim-verbose", params, out2, "v1", batch_size=5, progress=True,
    )  # fmt: skip
    assert stats["hits"] == 5 and stats["misses"] == 7
    assert len(resumed.calls) == 7
    assert out2.read_bytes() == out1.read_bytes()


class Proxy:
    """A model's identity and answers, counting calls; raises on batch ``crash_on_batch``."""

    def __init__(self, model: SimulatedLVLM, crash_on_batch: int = 0):
        self.model, self.crash_on_batch = model, crash_on_batch
        self.batches = 0
        self.calls: list[str] = []

    @property
    def identity(self) -> dict:
        return self.model.identity

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        self.batches += 1
        if self.batches == self.crash_on_batch:
            raise KeyboardInterrupt("simulated kill")
        self.calls.extend(r.request_id for r in requests)
        return self.model.generate(requests)


# ------------------------------------------------------------------------------------------
# simulated LVLMs


def all_captions(model: SimulatedLVLM, items: Sequence[dict], seed: int = 0) -> list[Response]:
    out: list[Response] = []
    for instruction in INSTRUCTIONS.values():
        out.extend(model.generate(caption_requests(items, instruction, seed)))
    return out


def test_same_seed_same_captions_other_seed_or_model_differs():
    items = synthetic_items(20)
    a = all_captions(sim("sim-verbose", items), items)
    b = all_captions(sim("sim-verbose", items), items)
    assert [r.text for r in a] == [r.text for r in b]
    assert [r.meta for r in a] == [r.meta for r in b]
    other_seed = all_captions(sim("sim-verbose", items), items, seed=1)
    assert sum(x.text != y.text for x, y in zip(a, other_seed, strict=True)) > len(a) // 2
    renamed = all_captions(sim("sim-verbose", items, name="sim-verbose-b"), items)
    assert sum(x.text != y.text for x, y in zip(a, renamed, strict=True)) > len(a) // 2
    precise = all_captions(sim("sim-precise", items), items)
    assert sum(x.text != y.text for x, y in zip(a, precise, strict=True)) > len(a) * 0.8


def test_profiles_differ_clearly():
    items = synthetic_items(60)
    stats = {}
    for profile in PRESETS:
        responses = all_captions(sim(profile, items), items)
        injected = [h for r in responses for h in r.meta["injected"]]
        kinds = {k: sum(h["kind"] == k for h in injected) / max(1, len(injected)) for k in
                 ("frequent", "cooccur", "ood")}  # fmt: skip
        stats[profile] = {
            "halluc": len(injected) / len(responses),
            "length": sum(len(r.meta["mentioned"]) + len(r.meta["injected"]) for r in responses)
            / len(responses),
            **kinds,
        }
    assert stats["sim-precise"]["halluc"] < 0.3
    assert stats["sim-verbose"]["halluc"] > 3 * stats["sim-precise"]["halluc"]
    assert stats["sim-frequent"]["halluc"] > 3 * stats["sim-precise"]["halluc"]
    assert stats["sim-verbose"]["length"] > 1.5 * stats["sim-precise"]["length"]
    assert stats["sim-verbose"]["cooccur"] > 0.45
    assert stats["sim-frequent"]["frequent"] > 0.8
    assert stats["sim-ood"]["ood"] > 0.65
    assert stats["sim-precise"]["ood"] == 0.0


def test_frequent_hallucinations_come_from_the_top_classes():
    items = synthetic_items(40)
    top = frequency_order()
    for response in all_captions(sim("sim-frequent", items), items):
        gt = next(i for i in items if i["image_id"] == response.request_id)["gt_objects"]
        absent = [c for c in top if c not in gt]
        frequent = [h["name"] for h in response.meta["injected"] if h["kind"] == "frequent"]
        injected = {h["name"] for h in response.meta["injected"]}
        for name in frequent:  # the top 5 absent classes, others only once all 5 are used
            assert name in absent[:5] or set(absent[:5]) <= injected


def _word_in(word: str, text: str) -> bool:
    return re.search(rf"(?<![a-z]){re.escape(word)}(?![a-z])", text.lower()) is not None


def test_meta_truth_matches_the_text():
    items = synthetic_items(40)
    by_id = {i["image_id"]: i for i in items}
    for profile in PRESETS:
        for response in all_captions(sim(profile, items), items):
            item, meta = by_id[response.request_id], response.meta
            for hall in meta["injected"]:
                assert _word_in(hall["name"], response.text), (hall, response.text)
                assert hall["name"] not in item["gt_objects"]
                assert hall["name"] not in item["other_objects"]
                assert (hall["kind"] == "ood") == (hall["name"] not in frequency_order())
            for name in meta["mentioned"] + meta["mentioned_other"]:
                assert _word_in(name, response.text)
            assert sorted(meta["mentioned"] + meta["omitted"]) == item["gt_objects"]
            names = [h["name"] for h in meta["injected"]]
            assert len(names) == len(set(names))


def _synonym_tables() -> list[dict[str, str]]:
    tables = []
    try:
        from halluscope.objects.coco import load_synonyms

        tables.append(load_synonyms(None))
    except ImportError:
        pass
    reference = Path(__file__).resolve().parents[2] / "shared" / "data" / "chair" / "synonyms.txt"
    if reference.is_file():
        mapping = {}
        for line in reference.read_text(encoding="utf-8").splitlines():
            entries = line.strip().split(", ")
            for entry in entries:
                mapping[entry] = entries[0]
        tables.append(mapping)
    return tables


def _chair_like_parse(text: str, synonyms: dict[str, str]) -> set[str]:
    """Greedy bigram-then-word lookup of lower-cased tokens (what CHAIR does, minus singularize)."""
    tokens = re.findall(r"[a-z]+", text.lower())
    found, i = set(), 0
    while i < len(tokens):
        pair = " ".join(tokens[i : i + 2])
        if i + 1 < len(tokens) and pair in synonyms:
            found.add(synonyms[pair])
            i += 2
            continue
        if tokens[i] in synonyms:
            found.add(synonyms[tokens[i]])
        i += 1
    return found


def test_a_chair_style_parser_recovers_the_injected_truth():
    tables = _synonym_tables()
    if not tables:
        pytest.skip("no MSCOCO synonym table available")
    items = synthetic_items(40)
    for synonyms in tables:
        for profile in PRESETS:
            for response in all_captions(sim(profile, items), items):
                meta = response.meta
                expected = set(meta["mentioned"]) | {
                    h["name"] for h in meta["injected"] if h["kind"] != "ood"
                }
                assert _chair_like_parse(response.text, synonyms) == expected, response.text


def test_template_and_ood_words_are_not_mscoco_synonyms_or_lexicon_nouns():
    tables = _synonym_tables()
    words = set().union(*(set(t) for t in tables)) if tables else set()
    assert not set(OOD_POOL) & words
    chunks = [("a zzz", "zzz"), ("a qqq", "qqq"), ("a vvv", "vvv")]
    template_words: set[str] = set()
    for instruction in INSTRUCTIONS.values():
        style = instruction_style(instruction)
        for variant in range(6):
            for n in (0, 1, 3):
                text = compose_text(chunks[:n], style, variant)
                template_words |= set(re.findall(r"[a-z]+", text.lower())) - {"zzz", "qqq", "vvv"}
    assert not template_words & words, sorted(template_words & words)
    try:
        from halluscope.objects.ood_nouns import OOD_NOUNS
    except ImportError:
        return
    assert set(OOD_POOL) <= set(OOD_NOUNS), sorted(set(OOD_POOL) - set(OOD_NOUNS))
    assert not template_words & set(OOD_NOUNS), sorted(template_words & set(OOD_NOUNS))


def test_instruction_styles_follow_table_3():
    styles = {k: instruction_style(v) for k, v in INSTRUCTIONS.items()}
    assert styles["i07"]["form"] == styles["i09"]["form"] == styles["i12"]["form"] == "terse"
    assert styles["i02"]["form"] == styles["i08"]["form"] == "caption"
    assert styles["i06"]["form"] == "narrative"
    assert styles["i01"]["factor"] < styles["i13"]["factor"]
    assert styles["i14"]["mood"] and not styles["i01"]["mood"]
    items = synthetic_items(30)
    model = sim("sim-verbose", items)
    mean_len = {
        key: sum(len(r.text) for r in model.generate(caption_requests(items, text))) / len(items)
        for key, text in INSTRUCTIONS.items()
    }
    assert mean_len["i07"] < mean_len["i01"] < mean_len["i13"] + 40
    assert len({r.text for r in all_captions(model, items[:1])}) >= 10


def test_oracle_and_yesno_answers():
    items = synthetic_items(30)
    exact = make_backend(
        {"backend": "sim", "name": "oracle", "preset": "sim-precise",
         "overrides": {"oracle_error_rate": 0.0, "yes_bias": 1.0, "yesno_miss_rate": 0.0}},
        items=items,
    )  # fmt: skip
    asked = []
    for item in items:
        for obj in [item["gt_objects"][0], *item["other_objects"], "giraffe", "lighthouse"]:
            truth = obj in item["gt_objects"] or obj in item["other_objects"]
            asked.append((item, obj, truth))
    oracle = exact.generate(
        [
            Request(f"o{i}", item["image_id"], messages=(user_message(
                f"Does the image contain {obj}? Please respond with only Present or Absent."),),
                task="oracle")
            for i, (item, obj, _) in enumerate(asked)
        ]
    )  # fmt: skip
    assert [r.text for r in oracle] == ["Present" if t else "Absent" for _, _, t in asked]
    yesno = exact.generate(
        [
            Request(f"y{i}", item["image_id"], messages=(user_message(
                f"Is there a {obj} in the image?"),), task="yesno")
            for i, (item, obj, _) in enumerate(asked)
        ]
    )  # fmt: skip
    assert all(r.text.startswith("Yes") for r in yesno)  # yes_bias = 1: always yes

    noisy = sim("sim-frequent", items)  # yes_bias 0.5
    absent = [
        Request(f"a{i}{c}", item["image_id"], messages=(user_message(
            f"Is there a {c} in the image?"),), task="yesno")
        for i, item in enumerate(items)
        for c in frequency_order()[:20] if c not in item["gt_objects"]
    ]  # fmt: skip
    share = sum(r.text.startswith("Yes") for r in noisy.generate(absent)) / len(absent)
    assert 0.4 < share < 0.6
    with pytest.raises(ValueError, match="cannot find the object"):
        noisy.generate([Request("q", items[0]["image_id"], messages=(user_message("Hm?"),),
                                task="oracle")])  # fmt: skip
    with pytest.raises(ValueError, match="task 'chat'"):
        noisy.generate([Request("q", items[0]["image_id"], messages=(user_message("Hi"),),
                                task="chat")])  # fmt: skip
    with pytest.raises(ValueError, match="not among its"):
        noisy.generate(caption_requests([{**items[0], "image_id": "nope"}], "Describe."))


def test_identity_changes_with_profile_and_annotations():
    items = synthetic_items(5)
    base = sim("sim-verbose", items).identity
    assert base["name"] == "sim-verbose" and base["revision"].startswith("sim")
    assert sim("sim-verbose", items).identity == base
    changed = make_backend(
        {"backend": "sim", "preset": "sim-verbose", "overrides": {"hallucination_rate": 0.5}},
        items=items, model_name="sim-verbose",
    )  # fmt: skip
    assert changed.identity["revision"] != base["revision"]
    edited = [dict(items[0], gt_objects=["cat"]), *items[1:]]
    assert sim("sim-verbose", edited).identity["revision"] != base["revision"]


# ------------------------------------------------------------------------------------------
# registry and profiles


def test_unknown_backend_names_the_valid_ones():
    with pytest.raises(
        ValueError, match=r"unknown model backend 'nonesuch'.*valid backends: .*sim"
    ):
        make_backend({"backend": "nonesuch"})
    with pytest.raises(ValueError, match="valid backends"):
        make_backend({"preset": "sim-precise"})


def test_unknown_profile_or_field_errors():
    items = synthetic_items(2)
    with pytest.raises(ValueError, match=r"unknown sim preset 'sim-bogus'.*sim-precise"):
        make_backend({"backend": "sim", "preset": "sim-bogus"}, items=items)
    with pytest.raises(ValueError, match=r"unknown field\(s\) \['halucination_rate'\]"):
        resolve_preset("sim-precise", {"halucination_rate": 0.2})
    with pytest.raises(ValueError, match="omission_rate must be a number in"):
        resolve_preset("sim-precise", {"omission_rate": 1.5})
    with pytest.raises(ValueError, match="needs the dataset items"):
        make_backend({"backend": "sim", "preset": "sim-precise"})
    # every field can be overridden, including the style weights
    profile = resolve_preset("sim-precise", {"style_weights": {"ood": 1.0}, "max_objects": 9})
    assert profile["style_weights"] == {"frequent": 0.0, "cooccur": 0.0, "ood": 1.0}
    assert profile["max_objects"] == 9
    assert PRESETS["sim-precise"]["max_objects"] == 3  # built-ins are not mutated
