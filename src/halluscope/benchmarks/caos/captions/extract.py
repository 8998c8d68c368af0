"""Extract stage: the ordered object list L of each response (CAOS Algorithm 1, steps 2-4).

``method`` picks the sources of L, always in caption order:

- ``rule``: the rule-based MSCOCO parser only (L1, CHAIR-style);
- ``rule+lexicon``: L1 plus out-of-domain nouns of a lexicon (L2 without an LLM), each match
  kept only where spaCy's tagger reads it as an object in that caption
  (:mod:`halluscope.objects.nouns`; the windows around the matches of every distinct caption are
  tagged in one batch per file, by rule ``noun_tags`` for all of a model's files in one process,
  :func:`tag_nouns`, whose store the extract jobs read);
- ``rule+llm``: L1 plus the objects an LLM lists from the caption, tallied with the caption's
  words (the CAOS paper's setting, :mod:`halluscope.objects.llm_extract`);
- ``rule+lexicon+llm``: both L2 sources.

Earlier sources win overlaps: an L2 mention overlapping an L1 mention is dropped (the MSCOCO
reading wins), an LLM mention overlapping a lexicon mention too. When the LLM is configured but
not applied to this file (``extract.llm_instructions`` leaves its instruction out, which the demo
does to stay within its time budget) the method falls back to the same method without ``llm``,
and the records carry no ``llm`` field.

Output records: ``{"image_id", "objects": [{"name", "surface", "position", "in_domain",
"source"}]}`` plus, with the LLM, ``"llm": {"raw", "rejected", "covered", "valid"}`` (what the
LLM said, the names weeded out and why, the names already found by an earlier source, whether the
reply was valid JSON) for auditing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.io import InputError, iter_jsonl_numbered, read_jsonl, write_json, write_jsonl
from halluscope.settings import StageSettings, param
from halluscope.stage_command import stage
from halluscope.stages.llm import LLMSettings

METHODS = ("rule", "rule+lexicon", "rule+llm", "rule+lexicon+llm")


@dataclass(frozen=True)
class ExtractSettings(StageSettings):
    """What one extract job reads from params: the method (``extract.method``), the rule parser's
    synonyms and word normalisation, the out-of-domain lexicon, and the extractor LLM of this
    job's instruction (:func:`instruction_llm`; ``None``: no LLM for this file)."""

    method: str
    synonyms: str
    variant: str
    lexicon: str
    llm: LLMSettings | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any], instruction: str) -> ExtractSettings:
        ext = config["extract"]
        llm = instruction_llm(config, instruction)
        return cls(ext["method"], ext["synonyms"], ext["variant"], ext["ood_lexicon"], llm)

    @classmethod
    def jobs(cls, config: Mapping[str, Any]) -> list[dict[str, str]]:
        return [{"instruction": i} for i in config["generate"]["instructions"]]


@dataclass(frozen=True)
class NounTagSettings(StageSettings):
    """What rule ``noun_tags`` reads: the keys that decide which lexicon matches a caption has
    (the method, the rule parser whose matches win overlaps, the lexicon)."""

    method: str = param("extract.method")
    synonyms: str = param("extract.synonyms")
    variant: str = param("extract.variant")
    lexicon: str = param("extract.ood_lexicon")


def instruction_llm(config: Mapping[str, Any], instruction: str) -> LLMSettings | None:
    """The extractor LLM (``extract.llm``) of one instruction's extract job, or ``None`` when
    the method has no LLM or ``extract.llm_instructions`` leaves the instruction out.

    Part of the job's :class:`ExtractSettings`, and of the job priority of CAOS's rules
    (``benchmarks/caos/common.smk``).
    """
    ext = config["extract"]
    if "llm" not in str(ext.get("method", "")).split("+"):
        return None
    chosen = ext.get("llm_instructions", "all")
    if chosen != "all" and instruction not in chosen:
        return None
    return LLMSettings.from_block(config, ext["llm"], "extract.llm")


def build_extractor(synonyms: str, variant: str, lexicon: str):
    """Return ``extract(text) -> list[dict]`` for the rule+lexicon method (no LLM)."""
    extractor = _extractor(synonyms, variant, lexicon, "rule+lexicon", None, None)

    def extract(text: str) -> list[dict]:
        return extractor.merge(text, None)["objects"]

    return extract


def extract_texts(
    texts: Sequence[str],
    synonyms: str = "builtin",
    variant: str = "pattern",
    lexicon: str = "builtin",
    audit: bool = False,
) -> list[dict[str, Any]]:
    """The record fields of the ``rule+lexicon`` method for each caption, in order: what the
    extract stage writes for them (one batch, the noun check tagging each distinct caption's
    matches once). ``audit`` adds ``lexicon_rejected``: the matches the noun check dropped, with
    the reason (``halluscope objects`` shows them)."""
    extractor = _extractor(synonyms, variant, lexicon, "rule+lexicon", None, None)
    extractor.audit = audit
    return extractor.extract(list(texts), use_llm=False)


def _extractor(
    synonyms: str,
    variant: str,
    lexicon: str,
    method: str,
    llm: LLMSettings | None,
    cache_dir: Path | None,
    noun_tags: Path | None = None,
):
    from halluscope.data.fetch import resolve_input
    from halluscope.objects.coco import load_synonyms
    from halluscope.objects.lexicon import LexiconMatcher
    from halluscope.objects.llm_extract import LLMObjectExtractor
    from halluscope.objects.nouns import NounCheck
    from halluscope.objects.ood_nouns import load_lexicon
    from halluscope.objects.parser import ObjectParser

    # builtin: halluscope's own table; a registered file (chair/synonyms.txt, CHAIR's list,
    # which the published CHAIR numbers use) is read from the mirror or its pinned download.
    table = None if synonyms == "builtin" else resolve_input(synonyms)
    parser = ObjectParser(load_synonyms(table), variant=variant)
    matcher = LexiconMatcher(load_lexicon(lexicon)) if "lexicon" in method.split("+") else None
    nouns = None
    if matcher is not None:
        from halluscope.objects.noun_tags import read_store

        nouns = NounCheck(known=read_store(noun_tags) if noun_tags is not None else None)
    if llm is None:
        return LLMObjectExtractor(parser, None, None, lexicon=matcher, nouns=nouns)
    from halluscope.models.base import make_backend
    from halluscope.models.cache import ResponseCache

    if cache_dir is None:
        raise ValueError("extract: the LLM method needs a response cache folder (--cache)")
    return LLMObjectExtractor(
        parser,
        make_backend(llm.spec, model_name=llm.model_id),
        ResponseCache(cache_dir, mode=llm.cache_mode),
        gen_params=dict(llm.params),
        template_version=llm.template_version,
        constrained=llm.json_schema,
        batch_size=llm.batch_size,
        lexicon=matcher,
        grammar=llm.grammar,
        nouns=nouns,
    )


def _read_responses(responses: Path) -> tuple[list[Any], list[str]]:
    """The image ids and texts of a responses file, in order."""
    ids, texts = [], []
    for number, rec in iter_jsonl_numbered(responses):
        text = rec.get("text")
        if not isinstance(text, str):
            raise InputError(f"{responses}:{number}: expected a string 'text' field")
        if "image_id" not in rec:
            raise InputError(f"{responses}:{number}: expected an 'image_id' field")
        ids.append(rec["image_id"])
        texts.append(text)
    return ids, texts


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"extract.method: unknown method {method!r}; valid: {', '.join(METHODS)}")


@stage("extract")
def run(
    settings: ExtractSettings,
    responses: Path,
    out: Path,
    cache: Path | None = None,
    noun_tags: Path | None = None,
) -> dict[str, int]:
    """The ordered object list of each response (rule, lexicon or LLM extraction).

    One object record per response, in response order; returns the extraction counts (the
    rule's log). ``settings.llm`` (``None`` = do not use the LLM for this file) is the extractor
    LLM (:func:`instruction_llm`), asked through the response cache folder ``cache``.
    ``noun_tags``: the store of rule ``noun_tags`` (:func:`tag_nouns`); the noun check tags only
    the windows it lacks.
    """
    method, llm = settings.method, settings.llm
    _check_method(method)
    use_llm = "llm" in method.split("+") and llm is not None
    base = method.replace("+llm", "")
    extractor = _extractor(
        settings.synonyms,
        settings.variant,
        settings.lexicon,
        method if use_llm else base,
        llm if use_llm else None,
        cache,
        noun_tags,
    )
    ids, texts = _read_responses(responses)
    fields = extractor.extract(texts, use_llm=use_llm)
    write_jsonl(out, ({"image_id": i, **f} for i, f in zip(ids, fields, strict=True)))
    stats = dict(extractor.stats)
    stats["method"] = method if use_llm else base  # type: ignore[assignment]
    if extractor.cache is not None:
        stats["cache_hits"] = extractor.cache.hits
        stats["cache_misses"] = extractor.cache.misses
    if extractor.nouns is not None:
        stats["noun_windows_tagged"] = extractor.nouns.stats["windows_tagged"]
    return stats


@stage("extract-nouns")
def tag_nouns(responses: list[Path], /, *, settings: NounTagSettings, out: Path) -> dict[str, int]:
    """The noun check's tags of many responses files, in one process (read by extract).

    Tags the noun check's windows of every responses file, each file as its extract job would
    (:meth:`LLMObjectExtractor.prepare` with a fresh noun check: the same windows in the same
    batches), and writes the store the extract jobs read (:mod:`halluscope.objects.noun_tags`).
    Without a lexicon in the method the store is empty and the tagger is not loaded."""
    from halluscope.objects.noun_tags import merge_tagged, write_store
    from halluscope.objects.nouns import NounCheck

    _check_method(settings.method)
    store: dict[str, Any] = {}
    if "lexicon" in settings.method.split("+"):
        extractor = _extractor(
            settings.synonyms, settings.variant, settings.lexicon, "rule+lexicon", None, None
        )
        for path in responses:
            extractor.nouns = NounCheck()
            extractor.prepare(_read_responses(path)[1])
            merge_tagged(store, extractor.nouns.tagged)
    written = write_store(out, store)
    return {"files": len(responses), "windows": written, "left_out": len(store) - written}


@stage("extract-report")
def report(objects: list[Path], /, *, out: Path) -> None:
    """Pooled extraction counts over object files.

    Objects per source and domain, and the LLM's audit trail (replies, invalid JSON, names
    rejected by reason, names covered by an earlier source)."""
    counts: dict[str, Any] = {
        "files": len(objects),
        "captions": 0,
        "objects": {},
        "llm": {
            "captions": 0,
            "invalid_json": 0,
            "raw_names": 0,
            "covered": 0,
            "rejected": {},
            "added_out_of_domain": 0,
            "added_in_domain": 0,
        },
    }
    llm = counts["llm"]
    for path in objects:
        for rec in read_jsonl(path):
            counts["captions"] += 1
            for obj in rec.get("objects", []):
                key = f"{obj['source']}/{'in' if obj['in_domain'] else 'out'}_domain"
                counts["objects"][key] = counts["objects"].get(key, 0) + 1
                if obj["source"] == "llm":
                    llm["added_in_domain" if obj["in_domain"] else "added_out_of_domain"] += 1
            audit = rec.get("llm")
            if not isinstance(audit, Mapping):
                continue
            llm["captions"] += 1
            llm["invalid_json"] += not audit.get("valid", False)
            llm["raw_names"] += len(audit.get("raw", []))
            llm["covered"] += len(audit.get("covered", []))
            for rejected in audit.get("rejected", []):
                reason = str(rejected.get("reason"))
                llm["rejected"][reason] = llm["rejected"].get(reason, 0) + 1
    if llm["captions"]:
        from halluscope.determinism import llama_provenance

        counts["llm_build"] = llama_provenance()  # which build produced the replies
    write_json(out, counts)
