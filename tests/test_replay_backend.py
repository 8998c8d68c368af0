"""The ``replay`` backend: recorded answers served through the same interface and cache."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from halluscope.io import InputError, read_jsonl
from halluscope.models import Request, ResponseCache, generate_captions, make_backend, user_message
from halluscope.models.replay import ReplayMissError, read_recording

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
POPE_CAPTIONS = SHARED / "pope" / "captions"

RECORDS = [
    {"question_id": 0, "image_id": 40468, "prompt": "Describe the image.", "text": "A surfer."},
    {"question_id": 1, "image_id": 10822, "prompt": "Describe the image.", "text": "Zebras."},
    {"question_id": 2, "image_id": 10822, "prompt": "Caption it.", "text": "Three zebras."},
]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def ask(image_id: str, prompt: str, request_id: str = "r", **meta: str) -> Request:
    return Request(
        request_id=request_id, image_id=image_id, messages=(user_message(prompt),), meta=meta
    )


def test_answers_identity_and_meta(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "rec.jsonl", RECORDS)
    backend = make_backend({"backend": "replay", "path": str(path)}, model_name="llava-pope")
    answers = backend.generate(
        [ask("10822", "Caption it.", "a"), ask("40468", "Describe the image.", "b")]
    )
    assert [a.text for a in answers] == ["Three zebras.", "A surfer."]
    assert [a.request_id for a in answers] == ["a", "b"]
    assert answers[0].model == "llava-pope"
    assert answers[0].meta == {"recording_line": 3, "recorded": {"question_id": 2}}
    assert backend.identity == {
        "backend": "replay",
        "name": "llava-pope",
        "recording_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "revision": "",
    }


@pytest.mark.parametrize("layout", ["jsonl", "array", "concatenated"])
def test_file_layouts_and_line_numbers(tmp_path: Path, layout: str) -> None:
    path = tmp_path / "rec.json"
    if layout == "jsonl":
        write_jsonl(path, RECORDS)
        lines = [1, 2, 3]
    elif layout == "array":
        path.write_text(json.dumps(RECORDS, indent=4), encoding="utf-8")
        lines = [2, 8, 14]
    else:  # pretty-printed objects one after the other, like POPE's Instruction1_llava.json
        path.write_text("\n".join(json.dumps(r, indent=4) for r in RECORDS), encoding="utf-8")
        lines = [1, 7, 13]
    assert [line for line, _ in read_recording(path)] == lines
    assert [record for _, record in read_recording(path)] == RECORDS
    backend = make_backend({"backend": "replay", "path": str(path), "name": "m"})
    [answer] = backend.generate([ask("10822", "Describe the image.")])
    assert answer.text == "Zebras." and answer.meta["recording_line"] == lines[1]


def test_instruction_id_records_and_prompt_map(tmp_path: Path) -> None:
    by_id = write_jsonl(
        tmp_path / "ids.jsonl",
        [{"image_id": "cat", "instruction_id": "i01", "text": "A cat."}],
    )
    backend = make_backend({"backend": "replay", "path": str(by_id), "name": "m"})
    [answer] = backend.generate([ask("cat", "Provide a brief description.", instruction_id="i01")])
    assert answer.text == "A cat."

    templated = write_jsonl(
        tmp_path / "tpl.jsonl",
        [{"image_id": 7, "prompt": ["Human: <image>", "Human: Describe.", "AI: "], "text": "Hi."}],
    )
    mapping = {"Describe the image.": "Human: <image>\nHuman: Describe.\nAI: "}
    spec = {"backend": "replay", "path": str(templated), "name": "m", "prompt_map": mapping}
    backend = make_backend(spec)
    assert backend.generate([ask("7", "Describe the image.")])[0].text == "Hi."
    assert backend.identity["prompt_map"] == mapping
    with pytest.raises(ReplayMissError, match="add a prompt_map entry"):
        make_backend({**spec, "prompt_map": None}).generate([ask("7", "Describe the image.")])


def test_missing_request_names_image_and_prompt(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "rec.jsonl", RECORDS)
    backend = make_backend({"backend": "replay", "path": str(path), "name": "m"})
    with pytest.raises(ReplayMissError) as caught:
        backend.generate([ask("10822", "Write a poem.")])
    message = str(caught.value)
    assert "'10822'" in message and "'Write a poem.'" in message and str(path) in message
    assert "Caption it." in message  # what the recording does have for that image
    with pytest.raises(ReplayMissError, match="no record for this image"):
        backend.generate([ask("999", "Describe the image.")])
    with pytest.raises(ReplayMissError, match="no image id"):
        backend.generate([Request(request_id="x", messages=(user_message("Describe"),))])


def test_duplicates_are_refused_with_both_lines(tmp_path: Path) -> None:
    records = [*RECORDS, {"image_id": "40468", "prompt": "Describe the image.", "text": "Other."}]
    path = write_jsonl(tmp_path / "dup.jsonl", records)
    with pytest.raises(InputError, match=r"dup\.jsonl:4: duplicate .*'40468'.*line 1"):
        make_backend({"backend": "replay", "path": str(path), "name": "m"})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"image_id": 1, "prompt": "p", "text": "t"}\n{"image_id": 2, "prompt": "p"}\n',
            ":2: 'text'",
        ),
        ('{"image_id": 1.5, "prompt": "p", "text": "t"}\n', ":1: 'image_id'"),
        (
            '{"image_id": 1, "prompt": "p", "text": "t"}\n{"image_id": 2, "caption": "c"}\n',
            ":2: a record with neither 'prompt' nor 'instruction_id'.* line 1 has one",
        ),
        ('{"image_id": 1, "caption": "a"}\n{"image_id": 1, "caption": "b"}\n', ":2: duplicate"),
        ('{"image_id": 1, "caption": 3}\n', ":1: 'caption' must be a string"),
        ('{"image_id": 1, "prompt": 3, "text": "t"}\n', ":1: 'prompt' must be"),
        (
            '{"image_id": 1, "prompt": "p", "text": "t"}\n\n{"image_id": 2,\n',
            ":3: malformed JSON \\(the record starting on this line is cut short",
        ),
        ("[1, 2]", ":1: expected a JSON object"),
        ("", "no records"),
    ],
)
def test_malformed_recordings_name_file_and_line(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=f"bad.jsonl{message}" if message[0] == ":" else message):
        make_backend({"backend": "replay", "path": str(path), "name": "m"})


def test_caption_file_answers_by_image_id(tmp_path: Path) -> None:
    """A caption file of one instruction ({"image_id", "caption"}) answers any prompt by image."""
    path = write_jsonl(
        tmp_path / "mine.jsonl",
        [{"image_id": 40468, "caption": "A dog on a bench."}, {"image_id": "7", "caption": "Cat."}],
    )
    backend = make_backend({"backend": "replay", "path": str(path), "name": "mine"})
    replies = backend.generate([ask("40468", "Describe the image."), ask("7", "Anything.")])
    assert [r.text for r in replies] == ["A dog on a bench.", "Cat."]
    assert "recorded" not in replies[0].meta  # the caption is the answer, not extra data
    with pytest.raises(ReplayMissError, match="no record for this image"):
        backend.generate([ask("8", "Describe the image.")])


def test_spec_validation(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs 'path'"):
        make_backend({"backend": "replay"})
    with pytest.raises(ValueError, match="unknown keys"):
        make_backend({"backend": "replay", "path": "x", "paht": "y"})
    with pytest.raises(InputError, match="not found"):
        make_backend({"backend": "replay", "path": str(tmp_path / "absent.jsonl")})


def test_through_the_cache_and_generation_loop(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "rec.jsonl", RECORDS)
    items = [{"image_id": "40468", "image": None}, {"image_id": "10822", "image": None}]
    out = tmp_path / "responses.jsonl"
    cache = ResponseCache(tmp_path / "cache")
    spec = {"backend": "replay", "path": str(path), "name": "llava-pope"}
    stats = generate_captions(
        make_backend(spec), cache, items, "i01", "Describe the image.", "llava-pope",
        {"seed": 0}, out, "v1", progress=False,
    )  # fmt: skip
    assert stats == {"items": 2, "hits": 0, "misses": 2, "failed": 0}
    assert [r["text"] for r in read_jsonl(out)] == ["A surfer.", "Zebras."]

    # An edited recording is a new identity: no stale answer comes back from the cache.
    write_jsonl(path, [{**RECORDS[0], "text": "A surfer, revised."}, *RECORDS[1:]])
    stats = generate_captions(
        make_backend(spec), cache, items, "i01", "Describe the image.", "llava-pope",
        {"seed": 0}, out, "v1", progress=False,
    )  # fmt: skip
    assert stats["hits"] == 0
    assert read_jsonl(out)[0]["text"] == "A surfer, revised."


@pytest.mark.skipif(not POPE_CAPTIONS.is_dir(), reason=f"{POPE_CAPTIONS} is absent")
@pytest.mark.parametrize(
    ("name", "prompt"),
    [
        ("Instruction1_llava.json", "Provide a brief description of the given image."),
        (
            "Instruction2_mplug.json",
            "The following is a conversation between a curious human and AI assistant. The "
            "assistant gives helpful, detailed, and polite answers to the user's questions.\n"
            "Human: <image>\nHuman: Generate a short caption of the image.\nAI: ",
        ),
    ],
)
def test_real_pope_caption_files(name: str, prompt: str) -> None:
    backend = make_backend({"backend": "replay", "path": str(POPE_CAPTIONS / name)})
    assert len(backend._by_prompt) == 2000
    [answer] = backend.generate([ask("40468", prompt)])
    assert "surf" in answer.text.lower()
    assert answer.meta["recorded"]["question_id"] == 0


# -- recordings in another benchmark's format: answer_field and key_fields ---------------------

SAMPLE_KEYS = ["category", "subcategory", "set_id", "figure_id", "question_id"]
SAMPLE = [  # HallusionBench's result sample: five ids, the answer in model_prediction
    {"category": "VD", "subcategory": "illusion", "set_id": "0", "figure_id": "0",
     "question_id": "0", "question": "Same size?", "model_prediction": "Yes."},
    {"category": "VD", "subcategory": "illusion", "set_id": "0", "figure_id": 1,
     "question_id": "0", "question": "Same size?", "model_prediction": "No."},
]  # fmt: skip


def sample_backend(path: Path, **spec: object):
    return make_backend(
        {"backend": "replay", "path": str(path), "answer_field": "model_prediction",
         "key_fields": SAMPLE_KEYS, **spec},
        model_name="gpt4v",
    )  # fmt: skip


def test_records_keyed_by_fields_answer_requests_with_those_meta_fields(tmp_path: Path) -> None:
    path = tmp_path / "sample.json"
    path.write_text(json.dumps(SAMPLE, indent=1), encoding="utf-8")
    backend = sample_backend(path)
    ids = dict(zip(SAMPLE_KEYS, ["VD", "illusion", "0", "1", "0"], strict=True))
    # the figure id is an integer in the recording and a string in the request: the same id
    answers = backend.generate([ask("HB-any", "another prompt text", "a", **ids)])
    assert answers[0].text == "No."
    assert answers[0].meta == {"recording_line": 11, "recorded": {"question": "Same size?"}}
    assert backend.identity["answer_field"] == "model_prediction"
    assert backend.identity["key_fields"] == SAMPLE_KEYS
    # without the two keys the identity is as before (no cache key of an old recording moves)
    plain = make_backend({"backend": "replay", "path": str(write_jsonl(tmp_path / "r.jsonl",
                                                                         RECORDS))})  # fmt: skip
    assert set(plain.identity) == {"backend", "name", "recording_sha256", "revision"}
    with pytest.raises(ReplayMissError, match="figure_id='7'"):
        backend.generate([ask("HB-any", "q", "b", **{**ids, "figure_id": "7"})])
    with pytest.raises(ReplayMissError, match="no question_id in its meta"):
        backend.generate([ask("HB-any", "q", "c", **{k: v for k, v in ids.items()
                                                     if k != "question_id"})])  # fmt: skip


def test_a_missing_answer_or_key_field_names_the_file_and_record(tmp_path: Path) -> None:
    path = tmp_path / "sample.jsonl"
    write_jsonl(path, [SAMPLE[0], {k: v for k, v in SAMPLE[1].items() if k != "model_prediction"}])
    with pytest.raises(InputError, match=r"sample.jsonl:2: missing 'model_prediction'"):
        sample_backend(path)
    write_jsonl(path, [SAMPLE[0], {k: v for k, v in SAMPLE[1].items() if k != "set_id"}])
    with pytest.raises(InputError, match=r"sample.jsonl:2: missing 'set_id', one of the key"):
        sample_backend(path)
    write_jsonl(path, [SAMPLE[0], SAMPLE[0]])
    with pytest.raises(InputError, match=r"sample.jsonl:2: duplicate record .*first at line 1"):
        sample_backend(path)
    write_jsonl(path, [{**SAMPLE[0], "model_prediction": 3}])
    with pytest.raises(InputError, match=r"sample.jsonl:1: 'model_prediction' must be a string"):
        sample_backend(path)
    # answer_field alone reads a record keyed as before, its answer in that field
    write_jsonl(path, [{"image_id": 7, "prompt": "Q?", "answer": "A."}])
    backend = make_backend({"backend": "replay", "path": str(path), "answer_field": "answer"})
    assert backend.generate([ask("7", "Q?")])[0].text == "A."
    with pytest.raises(ValueError, match="key_fields must list"):
        sample_backend(path, key_fields="category")


def test_the_public_hallusionbench_sample_replays_through_a_registered_path() -> None:
    """``path`` may be the registered data file; all 254 records load, keyed by the five ids."""
    from halluscope.data.fetch import default_mirror

    if not (default_mirror() / "hallusionbench/HallusionBench_result_sample.json").is_file():
        pytest.skip("hallusionbench/HallusionBench_result_sample.json is not in the data mirror")
    backend = sample_backend(Path("hallusionbench/HallusionBench_result_sample.json"))
    assert len(backend._by_fields) == 254
    ids = dict(zip(SAMPLE_KEYS, ["VD", "illusion", "0", "0", "0"], strict=True))
    answer = backend.generate([ask("HB-VD_illusion_0_0", "?", "a", **ids)])[0]
    assert answer.text.startswith("Yes, the right orange circle appears to be the same size")
