"""``replay`` backend: answers recorded elsewhere (e.g. the POPE caption files of five real LVLMs).

Why: published model outputs are data too. Scoring them through the same backend interface as a
live model means the same cache, generation loop and artifacts, and a run needs neither the model
nor a GPU.

Spec::

    {backend: replay, path: ../shared/data/pope/captions/Instruction1_llava.json,
     name: llava-pope, revision: "", prompt_map: {"<our instruction text>": "<recorded prompt>"}}

The recording is a JSONL file, a JSON array or concatenated JSON objects (the POPE files), one
record per answer: ``{"image_id", "prompt" | "instruction_id", "caption" | "text", ...}``
(``caption`` when the record has it, else ``text``: :func:`halluscope.io.caption_text`, the rule
of every reader).
``image_id`` is compared as a string (POPE's ``40468`` matches the item id ``"40468"``); a
``prompt`` given as a list of strings (mPLUG-Owl's files) is joined with newlines. A request is
answered by the record with its image id and

1. the request's prompt (the last user message), translated through ``prompt_map`` when given --
   recordings usually hold the model's own template ("Question: ... Answer: ") rather than the
   bare instruction, and the map says which recorded prompt stands for which instruction; else
2. the request's ``meta["instruction_id"]``, for recordings keyed by instruction id. (The cache key
   holds the prompt text, not the id: two instruction ids with the same text share one answer.)
3. the image id alone, for a caption file of one instruction (``{"image_id", "caption"}`` with
   neither ``prompt`` nor ``instruction_id``): a recording keys all its records this way or none.

Two keys read recordings in another benchmark's own format. ``answer_field`` names the record's
answer field (instead of ``caption`` / ``text``); ``key_fields`` lists record fields that key
every record instead of the image id and prompt: a request is answered by the record whose
fields equal the same keys of the request's ``meta`` (ids compared as trimmed strings, an
integer as its decimal). HallusionBench's upstream result sample, for one, is read with
``answer_field: model_prediction`` and ``key_fields: [category, subcategory, set_id, figure_id,
question_id]``, the five ids its answers stage puts in every request's ``meta``
(docs/hallusionbench.md). A record that lacks the answer field or a key field is refused, naming
the file, its line and the field. ``path`` may be a registered data file
(``hallusionbench/HallusionBench_result_sample.json``), resolved as every input is
(:func:`halluscope.data.fetch.resolve_input`).

A request the recording lacks raises :class:`ReplayMissError` naming the image id and the prompt;
two records with the same key are refused, naming both lines. The identity holds the sha256 of the
recording file (and the prompt map), so an edited recording never reuses stale cache entries.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from halluscope.io import InputError, caption_text, malformed_record
from halluscope.models.base import Request, Response, register_backend

_RESERVED = ("image_id", "prompt", "instruction_id", "text", "caption")


class ReplayMissError(LookupError):
    """A request has no answer in the recording."""


def _line_counter(text: str) -> Any:
    """``line(index)`` for increasing indices, counting newlines incrementally (large files)."""
    state = {"index": 0, "line": 1}

    def line(index: int) -> int:
        state["line"] += text.count("\n", state["index"], index)
        state["index"] = index
        return state["line"]

    return line


def read_recording(path: str | Path, data: bytes | None = None) -> list[tuple[int, Any]]:
    """``(line, record)`` pairs of a JSONL file, a JSON array or concatenated JSON documents.

    Line numbers are kept (unlike :func:`halluscope.io.read_json_records`) so that errors about a
    record can say where it is.
    """
    path = Path(path)
    if data is None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise InputError(f"{path}: replay recording not found") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise InputError(
            f"{path}:{line}: not valid UTF-8; expected a JSON/JSONL text file"
        ) from None
    decoder = json.JSONDecoder()
    line_of = _line_counter(text)
    records: list[tuple[int, Any]] = []

    def skip(index: int) -> int:
        while index < len(text) and text[index].isspace():
            index += 1
        return index

    def decode(index: int) -> tuple[Any, int]:
        try:
            return decoder.raw_decode(text, index)
        except json.JSONDecodeError as err:
            raise malformed_record(path, text, index, err) from None

    index = skip(1 if text.startswith("\ufeff") else 0)
    if index < len(text) and text[index] == "[":  # one JSON array: walk its elements
        index = skip(index + 1)
        while index < len(text) and text[index] != "]":
            start = index
            record, index = decode(index)
            records.append((line_of(start), record))
            index = skip(index)
            if index < len(text) and text[index] == ",":
                index = skip(index + 1)
            elif index >= len(text) or text[index] != "]":
                raise InputError(
                    f"{path}:{text.count(chr(10), 0, index) + 1}: malformed JSON array "
                    "(expected ',' or ']')"
                )
        if skip(index + 1) < len(text):
            raise InputError(f"{path}:{line_of(skip(index + 1))}: data after the JSON array")
        return records
    while index < len(text):
        start = index
        record, index = decode(index)
        records.append((line_of(start), record))
        index = skip(index)
    return records


def _prompt_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return None


class ReplayBackend:
    """Serves the answers of one recording file (see the module docstring)."""

    def __init__(
        self,
        path: str | Path,
        name: str | None = None,
        revision: str = "",
        prompt_map: Mapping[str, str] | None = None,
        answer_field: str | None = None,
        key_fields: Sequence[str] | None = None,
    ) -> None:
        self.path = Path(path)
        self.name = name or self.path.stem
        if answer_field is not None and (not isinstance(answer_field, str) or not answer_field):
            raise ValueError(
                f"replay model {self.name!r}: answer_field must name the records' answer field "
                f"(a non-empty string), got {answer_field!r}"
            )
        if key_fields is not None and not (
            isinstance(key_fields, Sequence)
            and not isinstance(key_fields, str)
            and key_fields
            and all(isinstance(k, str) and k for k in key_fields)
            and len(set(key_fields)) == len(key_fields)
        ):
            raise ValueError(
                f"replay model {self.name!r}: key_fields must list the record fields that key an "
                f"answer (distinct non-empty strings), got {key_fields!r}"
            )
        self.answer_field = answer_field
        self.key_fields = tuple(key_fields) if key_fields is not None else None
        self._by_fields: dict[tuple[str, ...], tuple[int, dict]] = {}
        if prompt_map is not None and not (
            isinstance(prompt_map, Mapping)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in prompt_map.items())
        ):
            raise ValueError(
                f"replay model {self.name!r}: prompt_map must map instruction texts to recorded "
                f"prompts (strings to strings), got {prompt_map!r}"
            )
        self.prompt_map = dict(prompt_map or {})
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            raise InputError(
                f"{self.path}: replay recording of model {self.name!r} not found"
            ) from None
        self.sha256 = hashlib.sha256(data).hexdigest()
        self._by_prompt: dict[tuple[str, str], tuple[int, dict]] = {}
        self._by_instruction: dict[tuple[str, str], tuple[int, dict]] = {}
        self._by_image: dict[str, tuple[int, dict]] = {}
        self._prompts_of: dict[str, list[str]] = {}
        for line, record in read_recording(self.path, data):
            if self.key_fields is not None:
                self._add_by_fields(line, record)
            else:
                self._add(line, record)
        if self.key_fields is not None and not self._by_fields:
            raise InputError(f"{self.path}: the replay recording has no records")
        keyed = [*self._by_prompt.values(), *self._by_instruction.values()]
        if self.key_fields is None and not keyed and not self._by_image:
            raise InputError(f"{self.path}: the replay recording has no records")
        if keyed and self._by_image:
            image_only = min(line for line, _ in self._by_image.values())
            raise InputError(
                f"{self.path}:{image_only}: a record with neither 'prompt' nor 'instruction_id', "
                f"in a recording whose line {min(line for line, _ in keyed)} has one; key every "
                "record by prompt or instruction_id, or none (a caption file of one instruction)"
            )
        self._identity: dict[str, Any] = {
            "backend": "replay",
            "name": self.name,
            "recording_sha256": self.sha256,
            "revision": str(revision),
        }
        if self.prompt_map:
            self._identity["prompt_map"] = dict(self.prompt_map)
        if self.answer_field is not None:
            self._identity["answer_field"] = self.answer_field
        if self.key_fields is not None:
            self._identity["key_fields"] = list(self.key_fields)

    def _text(self, record: Mapping[str, Any]) -> Any:
        """The record's answer: ``answer_field`` when set, else ``caption`` / ``text``."""
        if self.answer_field is not None:
            return record.get(self.answer_field)
        return caption_text(record)

    def _check_text(self, record: Mapping[str, Any], where: str) -> None:
        if self.answer_field is not None and self.answer_field not in record:
            raise InputError(
                f"{where}: missing {self.answer_field!r}, the answer field of replay model "
                f"{self.name!r} (its spec's answer_field)"
            )
        text = self._text(record)
        if not isinstance(text, str):
            field = self.answer_field or ("caption" if "caption" in record else "text")
            raise InputError(f"{where}: '{field}' must be a string, got {text!r}")

    def _add_by_fields(self, line: int, record: Any) -> None:
        """A record keyed by ``key_fields`` (see the module docstring)."""
        assert self.key_fields is not None
        where = f"{self.path}:{line}"
        if not isinstance(record, dict):
            raise InputError(f"{where}: expected a JSON object, got {type(record).__name__}")
        values = []
        for key in self.key_fields:
            if key not in record:
                raise InputError(
                    f"{where}: missing {key!r}, one of the key fields of replay model "
                    f"{self.name!r} ({', '.join(self.key_fields)})"
                )
            value = _key_value(record[key])
            if value is None:
                raise InputError(
                    f"{where}: {key!r} must be a string or integer, got {record[key]!r}"
                )
            values.append(value)
        self._check_text(record, where)
        key = tuple(values)
        if key in self._by_fields:
            raise InputError(
                f"{where}: duplicate record for {_fields_text(self.key_fields, key)} (first at "
                f"line {self._by_fields[key][0]}); a recording holds one answer per request"
            )
        self._by_fields[key] = (line, record)

    def _add(self, line: int, record: Any) -> None:
        where = f"{self.path}:{line}"
        if not isinstance(record, dict):
            raise InputError(f"{where}: expected a JSON object, got {type(record).__name__}")
        image_id = record.get("image_id")
        if isinstance(image_id, bool) or not isinstance(image_id, (str, int)):
            raise InputError(f"{where}: 'image_id' must be a string or integer, got {image_id!r}")
        self._check_text(record, where)
        prompt = _prompt_text(record.get("prompt")) if "prompt" in record else None
        instruction = record.get("instruction_id")
        if "prompt" in record and prompt is None:
            raise InputError(f"{where}: 'prompt' must be a string or a list of strings")
        if instruction is not None and not isinstance(instruction, str):
            raise InputError(f"{where}: 'instruction_id' must be a string, got {instruction!r}")
        image = str(image_id)
        if prompt is None and instruction is None:
            if image in self._by_image:
                raise InputError(
                    f"{where}: duplicate caption for image {image!r} (first at line "
                    f"{self._by_image[image][0]}); a caption file holds one caption per image"
                )
            self._by_image[image] = (line, record)
            return
        for table, kind, value in (
            (self._by_prompt, "prompt", prompt),
            (self._by_instruction, "instruction_id", instruction),
        ):
            if value is None:
                continue
            if (image, value) in table:
                raise InputError(
                    f"{where}: duplicate record for image {image!r} and {kind} {value!r} (first "
                    f"at line {table[image, value][0]}); a recording holds one answer per request"
                )
            table[image, value] = (line, record)
        self._prompts_of.setdefault(image, []).append(
            prompt if prompt is not None else f"instruction_id={instruction}"
        )

    @property
    def instruction_ids(self) -> list[str]:
        """The instruction ids the recording's records name (none for a prompt-keyed file or a
        caption file of one instruction), sorted."""
        return sorted({instruction for _, instruction in self._by_instruction})

    @property
    def image_ids(self) -> list[str]:
        """Every image id the recording answers, in file order."""
        keyed = sorted(
            [*self._by_prompt.items(), *self._by_instruction.items()], key=lambda kv: kv[1][0]
        )
        ids = [image for (image, _), _ in keyed]
        ids += [image for image, _ in sorted(self._by_image.items(), key=lambda kv: kv[1][0])]
        return list(dict.fromkeys(ids))

    @property
    def identity(self) -> dict:
        """Name plus the recording's sha256 (and the prompt map, which changes answers)."""
        return dict(self._identity)

    def _lookup_by_fields(self, request: Request) -> tuple[int, dict]:
        assert self.key_fields is not None
        missing = [k for k in self.key_fields if _key_value(request.meta.get(k)) is None]
        if missing:
            raise ReplayMissError(
                f"replay model {self.name!r} ({self.path}): request {request.request_id!r} has "
                f"no {', '.join(missing)} in its meta; the recording is keyed by "
                f"{', '.join(self.key_fields)} (key_fields)"
            )
        key = tuple(str(_key_value(request.meta[k])) for k in self.key_fields)
        found = self._by_fields.get(key)
        if found is None:
            raise ReplayMissError(
                f"replay model {self.name!r} ({self.path}): no recorded answer for "
                f"{_fields_text(self.key_fields, key)} (request {request.request_id!r})"
            )
        return found

    def lookup(self, request: Request) -> tuple[int, dict]:
        """``(line, record)`` answering ``request``; :class:`ReplayMissError` when absent."""
        if self.key_fields is not None:
            return self._lookup_by_fields(request)
        if request.image_id is None:
            raise ReplayMissError(
                f"replay model {self.name!r}: request {request.request_id!r} has no image id; "
                "recorded answers are looked up by image id and prompt"
            )
        image = str(request.image_id)
        prompt = request.prompt
        found = self._by_prompt.get((image, self.prompt_map.get(prompt, prompt)))
        instruction = request.meta.get("instruction_id")
        if found is None and instruction is not None:
            found = self._by_instruction.get((image, str(instruction)))
        if found is None:
            found = self._by_image.get(image)
        if found is not None:
            return found
        mapped = self.prompt_map.get(prompt)
        recorded = self._prompts_of.get(image, [])
        hint = (
            f"its prompts for this image: {sorted(set(recorded))[:3]!r}"
            if recorded
            else "it has no record for this image at all"
        )
        raise ReplayMissError(
            f"replay model {self.name!r} ({self.path}): no recorded answer for image {image!r} "
            f"and prompt {prompt!r}"
            + (f" (mapped to {mapped!r})" if mapped is not None else "")
            + (f" or instruction {instruction!r}" if instruction is not None else "")
            + f"; {hint}; add a prompt_map entry if the recording used another prompt text"
        )

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        """The recorded answer of every request, in order."""
        responses = []
        for request in requests:
            line, record = self.lookup(request)
            meta: dict[str, Any] = {"recording_line": line}
            reserved = (*_RESERVED, *(self.key_fields or ()), self.answer_field)
            extra = {k: v for k, v in record.items() if k not in reserved}
            if extra:
                meta["recorded"] = extra
            responses.append(
                Response(
                    request_id=request.request_id,
                    text=self._text(record),
                    model=self.name,
                    identity=self.identity,
                    meta=meta,
                )
            )
        return responses


def _key_value(value: Any) -> str | None:
    """A key field's value as it is compared: a trimmed string, an integer as its decimal
    (``0`` and ``"0"`` are the same id); None for any other value."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _fields_text(fields: Sequence[str], values: Sequence[str]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in zip(fields, values, strict=True))


_SPEC_KEYS = {"backend", "path", "name", "revision", "prompt_map", "answer_field", "key_fields"}


@register_backend("replay")
def from_spec(spec: Mapping[str, Any], model_name: str | None = None, **_: Any) -> ReplayBackend:
    """``{"backend": "replay", "path": ..., "name"?, "revision"?, "prompt_map"?, "answer_field"?,
    "key_fields"?}``.

    The model name is ``spec["name"]``, else the ``model_name`` context (the ``params.yaml`` model
    id), else the recording's file stem. ``path`` is a file, or a registered data file.
    """
    from halluscope.data.fetch import resolve_input

    unknown = sorted(set(spec) - _SPEC_KEYS)
    if unknown:
        raise ValueError(
            f"replay model spec has unknown keys {unknown}; valid keys: "
            f"{', '.join(sorted(_SPEC_KEYS))}"
        )
    if not isinstance(spec.get("path"), str) or not spec["path"]:
        raise ValueError(f"replay model spec needs 'path' (the recording file): {dict(spec)!r}")
    return ReplayBackend(
        resolve_input(spec["path"]),
        name=spec.get("name") or model_name,
        revision=str(spec.get("revision", "")),
        prompt_map=spec.get("prompt_map"),
        answer_field=spec.get("answer_field"),
        key_fields=spec.get("key_fields"),
    )
