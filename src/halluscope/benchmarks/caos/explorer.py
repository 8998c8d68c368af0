"""CAOS's part of the explorer page: every caption, its objects marked by kind, and its scores.

Read from the files the score stage reads and writes, the way it reads them: the object list L
(``results/objects``), the oracle's decisions (``results/oracle``) and the items' ground truth
give each mention its kind through :func:`~halluscope.benchmarks.caos.score.caption_objects`,
the scorer's own function; the counts and CAOS values are the score files' cells
(``results/scores/<profile>/<embedder>/<model>/<instruction>.{captions,objects}.csv``). Per
caption those are CAOS_T / CAOS_X / CAOS_K; per hallucinated object the file holds its
similarities ``sim_T``, ``sim_X`` and ``sim_K<k>``, whose means over a caption's hallucinated
objects are the caption's CAOS_T, CAOS_X and CAOS_K. A caption whose hallucination count
disagrees with the score file is an error: one of the files is older than the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halluscope.explorer.records import (
    Caption,
    Contribution,
    Mark,
    csv_rows,
    integer,
    need,
    number,
    object_kind,
)
from halluscope.io import InputError, iter_jsonl_numbered

TITLE = "CAOS captions"
CAPTION_SCORES = ("CAOS_T", "CAOS_X", "CAOS_K")


def options(config: Mapping[str, Any]) -> dict[str, Any]:
    """The models, instructions (with their text), embedders and k the captions depend on."""
    instructions = config["generate"]["instructions"]
    return {
        "models": list(config["generate"]["models"]),
        "instructions": {i: str(config["instructions"][i]) for i in instructions},
        "embedders": list(config["embed"]["embedders"]),
        "k": int(config["caos"]["k"]),
    }


def _paths(profile: str, model: str, instruction: str, embedders: list[str]) -> dict[str, str]:
    paths = {
        "responses": f"results/responses/{profile}/{model}/{instruction}.jsonl",
        "objects": f"results/objects/{profile}/{model}/{instruction}.jsonl",
        "oracle": f"results/oracle/{profile}/{model}/{instruction}.jsonl",
    }
    for embedder in embedders:
        stem = f"results/scores/{profile}/{embedder}/{model}/{instruction}"
        paths[f"captions {embedder}"] = f"{stem}.captions.csv"
        paths[f"objects {embedder}"] = f"{stem}.objects.csv"
    return paths


def files(options: Mapping[str, Any], profile: str) -> list[str]:
    """Captions, object lists, oracle decisions and score files of every model x instruction."""
    return [
        path
        for model in options["models"]
        for instruction in options["instructions"]
        for path in _paths(profile, model, instruction, options["embedders"]).values()
    ]


def contribution(
    options: Mapping[str, Any], profile: str, items: Mapping[str, Mapping[str, Any]]
) -> Contribution:
    """Every caption of every model x instruction, in that order."""
    embedders, k = list(options["embedders"]), int(options["k"])
    captions = [
        caption
        for model in options["models"]
        for instruction in options["instructions"]
        for caption in _captions(
            _paths(profile, model, instruction, embedders), model, instruction, embedders, k, items
        )
    ]
    return Contribution(
        TITLE,
        captions=captions,
        mark_values=tuple(f"{e} {s}" for e in embedders for s in ("sim_T", "sim_X", f"sim_K{k}")),
        caption_values=tuple(f"{e} {s}" for e in embedders for s in CAPTION_SCORES),
        instructions=dict(options["instructions"]),
        note=(
            "objects: results/objects, kinds by the ground truth and the oracle "
            "(results/oracle); counts and CAOS: results/scores (per caption CAOS_T/X/K, per "
            f"hallucinated object sim_T/X/K{k}, whose means over the caption are its CAOS)"
        ),
    )


def _texts(path: str) -> dict[str, str]:
    out = {}
    for line, record in iter_jsonl_numbered(path):
        where = f"{path}:{line}"
        out[str(need(record, "image_id", where))] = str(need(record, "text", where))
    return out


def _decisions(path: str) -> dict[tuple[str, str], bool | None]:
    """The oracle's decisions as the score stage loads them (captions/oracle.load_decisions)."""
    from halluscope.benchmarks.caos.captions.oracle import load_decisions

    try:
        return load_decisions(path)
    except (KeyError, TypeError) as err:
        raise InputError(f"{path}: a decision without field {err}") from None


def _score_rows(path: str) -> dict[str, tuple[str, dict[str, str]]]:
    """Per image id: (``FILE:LINE``, row) of a captions.csv."""
    return {
        need(row, "image_id", f"{path}:{line}"): (f"{path}:{line}", row)
        for line, row in csv_rows(path)
    }


def _object_rows(path: str) -> dict[tuple[str, int], tuple[str, dict[str, str]]]:
    """Per (image id, position): (``FILE:LINE``, row) of an objects.csv."""
    out = {}
    for line, row in csv_rows(path):
        where = f"{path}:{line}"
        out[need(row, "image_id", where), integer(row, "position", where)] = (where, row)
    return out


def _captions(
    paths: dict[str, str],
    model: str,
    instruction: str,
    embedders: list[str],
    k: int,
    items: Mapping[str, Mapping[str, Any]],
) -> list[Caption]:
    from halluscope.benchmarks.caos.metric import distinct_objects
    from halluscope.benchmarks.caos.score import caption_objects
    from halluscope.objects.parser import TokenSpans, scan_tokens

    texts = _texts(paths["responses"])
    decisions = _decisions(paths["oracle"])
    scores = {e: _score_rows(paths[f"captions {e}"]) for e in embedders}
    objects = {e: _object_rows(paths[f"objects {e}"]) for e in embedders}
    out = []
    for line, record in iter_jsonl_numbered(paths["objects"]):
        where = f"{paths['objects']}:{line}"
        image_id = str(need(record, "image_id", where))
        if image_id not in items:
            raise InputError(f"{where}: image {image_id!r} is not among the profile's items")
        if image_id not in texts:
            raise InputError(f"{where}: image {image_id!r} has no caption in {paths['responses']}")
        gt = set(items[image_id].get("gt_objects") or [])
        try:
            mentions = caption_objects(record, gt, decisions)
        except (KeyError, TypeError, ValueError) as err:
            raise InputError(f"{where}: an object without field {err}") from None
        n_hallucinated = sum(o.present is False for o in distinct_objects(mentions))
        rows = {}
        for embedder in embedders:
            if image_id not in scores[embedder]:
                raise InputError(
                    f"{paths[f'captions {embedder}']}: no row for image {image_id!r}, whose "
                    f"objects are in {where}: the score file is older than the object list"
                )
            rows[embedder] = scores[embedder][image_id]
        row_where, row = rows[embedders[0]] if embedders else (where, {"n_hallucinated": "0"})
        counted = integer(row, "n_hallucinated", row_where)
        if counted != n_hallucinated:
            raise InputError(
                f"{row_where}: n_hallucinated {counted}, but {where} with the ground truth and "
                f"{paths['oracle']} gives {n_hallucinated}: the score file is older than the "
                "object list or the oracle's decisions"
            )
        text = texts[image_id]
        words, chunks, firsts = scan_tokens(text)
        spans = TokenSpans(text, chunks, firsts)
        marks, scored = [], set()
        for obj, mention in zip(record["objects"], mentions, strict=True):
            start, end = _span(text, len(words), spans, obj, mention.position, where)
            values: tuple[float | None, ...] = ()
            if mention.present is False and mention.name not in scored:
                scored.add(mention.name)
                values = _object_values(objects, embedders, k, image_id, mention)
            kind = object_kind(mention.in_domain, mention.present)
            marks.append(Mark(start, end, mention.name, kind, values))
        caption_values = tuple(
            number(rows[e][1], score, rows[e][0]) for e in embedders for score in CAPTION_SCORES
        )
        out.append(
            Caption(
                image_id, model, instruction, text, tuple(marks), n_hallucinated, caption_values
            )
        )
    if embedders and len(scores[embedders[0]]) != len(out):
        raise InputError(
            f"{paths[f'captions {embedders[0]}']}: {len(scores[embedders[0]])} captions, "
            f"{paths['objects']}: {len(out)}: the score file is older than the object list"
        )
    return out


def _object_values(
    objects: dict[str, dict[tuple[str, int], tuple[str, dict[str, str]]]],
    embedders: list[str],
    k: int,
    image_id: str,
    mention: Any,
) -> tuple[float | None, ...]:
    """sim_T, sim_X and sim_K<k> of a hallucinated object per embedder (None: no row, as for
    a name without a vector, which the scorer skips)."""
    values: list[float | None] = []
    for embedder in embedders:
        found = objects[embedder].get((image_id, mention.position))
        if found is None or found[1].get("name") != mention.name:
            values += [None, None, None]
            continue
        where, row = found
        values += [number(row, column, where) for column in ("sim_T", "sim_X", f"sim_K{k}")]
    return tuple(values)


def _span(
    text: str, n_tokens: int, spans: Any, obj: Mapping[str, Any], position: int, where: str
) -> tuple[int, int]:
    """The characters of a mention: from its first token (``position``, an index into the
    parser's tokens, whose ``spans`` the extraction's parser computes the same way) over its
    surface text."""
    if not 0 <= position < n_tokens:
        raise InputError(
            f"{where}: object {obj.get('name')!r} at token {position}, but its caption has "
            f"{n_tokens} tokens"
        )
    start, end = spans.span(position, position)
    surface = str(obj.get("surface") or "")
    if surface and text[start : start + len(surface)].lower() == surface.lower():
        return start, start + len(surface)
    return start, end
