"""LLM-augmented object extraction: CAOS Algorithm 1, steps 2-4.

Why: a CHAIR-style parser only sees the 80 MSCOCO classes (and sometimes misses those), so the
CAOS paper ("Augmenting object identification using LLM") adds the objects an instruction-following
LLM lists from the caption, prompted with five in-context examples, and tallies them with the
caption's words "to weed-out any potential hallucinations by the LLM". This module does exactly
that, reproducibly:

- L1: :class:`~halluscope.objects.parser.ObjectParser` (rule-based MSCOCO mentions);
- L2: the LLM's answer to a 5-shot prompt (:data:`FEW_SHOT`, written for halluscope) asking for
  ``{"objects": [...]}``; schema-constrained when the backend supports ``json_schema``
  (``llamacpp`` does), or, with ``grammar`` ``object-list`` / ``object-list-greedy``
  (:data:`GRAMMARS`), held to the few-shot layout by a cheaper hand-written grammar. A reply
  that is not such JSON gives no L2 objects for that caption and is counted (``valid: false``);
- tally (:func:`tally`): every L2 name must occur in the caption (token sequence,
  case-insensitive, plurals allowed through the ``pattern`` singular and the noun lemma,
  multi-word names as sequences). Rejected, with the reason recorded: names absent from the
  caption (``not_in_caption``: the LLM's hallucinations), words for the picture rather than an
  object in it (``not_object``, :data:`NOT_OBJECTS`: image, photo, scene, mood...), phrases
  rather than names (``phrase``: "person wearing a spacesuit") and names that only occur inside
  a longer L2 name (``overlapped``);
- lexicon L2 (optional): the nouns of an out-of-domain lexicon, each match kept only where
  :class:`~halluscope.objects.nouns.NounCheck` reads it as an object in that caption (not the
  modal "can", the modifier in "coffee table", the photograph in "the picture shows");
- L = L1 united with L2 in caption order. An L2 occurrence overlapping an L1 (or lexicon)
  mention is that object and is not duplicated; a name with no other occurrence is listed under
  ``covered``. An L2 mention whose head word maps to an MSCOCO class through the synonym table
  is in-domain (``in_domain: true``, the class as name, ``source: "llm"``): an MSCOCO object the
  rule-based pass missed. The rest are the out-of-domain candidates (``in_domain: false``,
  ``source: "llm"``) for the oracle. Every occurrence is kept, like L1 keeps duplicates.

Out-of-domain names are the caption's words with the last word reduced to its noun lemma
(``seagulls`` -> ``seagull``, ``reading glasses`` stays), lower case.

All LLM calls go through :class:`~halluscope.models.cache.ResponseCache` with the template
version ``<params template_version>/<PROMPT_VERSION>``, one request per distinct caption, so
reruns and killed runs resume from the cache.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from halluscope.models.answers import AnswersFailed, answer_all
from halluscope.models.base import Backend, Request
from halluscope.models.cache import ResponseCache
from halluscope.models.stop_rules import list_cut
from halluscope.objects.lexicon import LexiconMatcher, word_forms
from halluscope.objects.normalize import lemmatize
from halluscope.objects.nouns import REASONS, NounCheck
from halluscope.objects.parser import Mention, ObjectParser, scan_tokens, tokenize

PROMPT_VERSION = "caos-5shot-1"
"""Bump when :data:`SYSTEM_PROMPT`, :data:`FEW_SHOT` or the message layout changes (the cache key
includes the messages anyway; the version names the change)."""

SYSTEM_PROMPT = (
    "You list the physical objects mentioned in an image caption. Answer only with JSON "
    '{"objects": [...]} using the words of the caption. List every object noun, including '
    "people and animals; keep multi-word names together. Do not list colours, adjectives, "
    "actions, moods, times of day, or words for the picture itself (image, photo, scene)."
)

#: The five in-context examples (caption, objects), written for halluscope. Together they show:
#: out-of-domain objects (awning, typewriter, seagulls), plurals kept as written, multi-word
#: names (fire truck, traffic cone, reading glasses), adjectives and time words that are not
#: objects ("night", "sunny", "striped"), words for the picture or its mood that are not objects
#: ("image", "background", "atmosphere", "close-up"), and terse word-list captions.
FEW_SHOT: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "A smiling woman in a yellow raincoat walks a small dog past a striped awning and a "
        "crate of lemons.",
        ("woman", "raincoat", "dog", "awning", "crate", "lemons"),
    ),
    (
        "A fire truck is parked beside a traffic cone and a street lamp on a quiet night.",
        ("fire truck", "traffic cone", "street lamp"),
    ),
    (
        "The image shows two horses grazing in a field of tall grass, with mountains in the "
        "background. The atmosphere feels calm.",
        ("horses", "field", "grass", "mountains"),
    ),
    (
        "A close-up of a vintage typewriter with a sheet of paper and a pair of reading glasses "
        "on a wooden desk.",
        ("typewriter", "paper", "reading glasses", "desk"),
    ),
    (
        "Sunny beach, surfboard, seagulls, calm waves.",
        ("beach", "surfboard", "seagulls", "waves"),
    ),
)

#: Constrains the reply to ``{"objects": [strings]}`` (short names, a bounded list) so that a
#: small model cannot ramble past ``max_new_tokens`` inside the JSON.
OBJECTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "objects": {
            "type": "array",
            "items": {"type": "string", "maxLength": 40},
            "maxItems": 12,
        }
    },
    "required": ["objects"],
    "additionalProperties": False,
}

#: The hand-written alternative to :data:`OBJECTS_SCHEMA` (``grammar: object-list``): exactly
#: the layout of the few-shot answers (``json.dumps``: ``{"objects": ["a", "b"]}``, no optional
#: whitespace), at most 12 names. Cheaper per token than the schema-derived grammar, and every
#: reply it allows is valid JSON of the same shape.
OBJECTS_GBNF = r"""root ::= "{\"objects\": [" ( item ( ", " item ){0,11} )? "]}"
item ::= "\"" char+ "\""
char ::= [^"\\\x00-\x1f]
"""

#: ``schema``: :data:`OBJECTS_SCHEMA` as a llama.cpp grammar; ``object-list``: :data:`OBJECTS_GBNF`;
#: ``object-list-greedy``: the same language checked by the backend on the greedy candidates
#: (``constraint: object-list``; llamacpp, temperature 0).
GRAMMARS = ("schema", "object-list", "object-list-greedy")

#: Stop rules (``extract.llm.stop_rule``, request param ``stop_rule``; llamacpp streams the reply):
#: ``object-list`` ends the list at the first repeated name; ``object-list-vocab`` also before the
#: first name that leaves the caption's vocabulary (:func:`object_list_vocab_cut`; the caption
#: travels in the request param ``stop_text``). See :mod:`halluscope.models.stop_rules`.
STOP_RULES = ("none", "object-list", "object-list-vocab")

#: Words for the picture, its parts or its mood: never objects *in* the image.
NOT_OBJECTS = frozenset(
    (
        "image picture photo photograph pic snapshot shot scene view caption frame composition "
        "background foreground close-up closeup mood atmosphere feeling moment setting "
        "essence impact message detail details color colour left right top bottom middle "
        "center centre side front back object objects thing things"
    ).split()
)

_LEADING = frozenset(
    (
        "a an the some any this that these those one two three four five six seven eight nine "
        "ten several many few various multiple pair of"
    ).split()
)
_PHRASE_WORDS = frozenset(
    "a an the and or with without on in at by near next to from under over behind beside "
    "wearing holding sitting standing is are".split()
)
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.IGNORECASE)


def build_messages(caption: str) -> list[dict[str, str]]:
    """System prompt, the five examples as user/assistant turns, then the caption to read."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}]
    for example, objects in FEW_SHOT:
        messages.append({"role": "user", "content": f"Caption: {example}"})
        messages.append({"role": "assistant", "content": json.dumps({"objects": list(objects)})})
    messages.append({"role": "user", "content": f"Caption: {caption.strip()}"})
    return messages


def parse_reply(text: str) -> list[str] | None:
    """The object names of an LLM reply, or ``None`` when it is not ``{"objects": [...]}`` JSON.

    Accepts code fences, text around the first JSON value, and a bare JSON list; non-string
    items are dropped. Anything else is invalid (``None``), never guessed from free text.
    """
    if not isinstance(text, str):
        return None
    body = _FENCE.sub("", text.strip())
    value: Any = None
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
        if not starts:
            return None
        try:
            value, _ = json.JSONDecoder().raw_decode(body, min(starts))
        except json.JSONDecodeError:
            return None
    if isinstance(value, Mapping):
        value = value.get("objects")
    if not isinstance(value, list):
        return None
    return [item for item in value if isinstance(item, str)]


def clean_name(name: str) -> str:
    """Lower case, words only, leading articles/numerals/"pair of" removed."""
    words = _WORD.findall(name.lower())
    while words and words[0] in _LEADING:
        words.pop(0)
    return " ".join(words)


def canonical_name(surface: str) -> str:
    """Name of an out-of-domain mention: caption words, lower case, last word's noun lemma."""
    words = _WORD.findall(surface.lower())
    if not words:
        return surface.lower().strip()
    words[-1] = lemmatize(words[-1])
    return " ".join(words)


@lru_cache(maxsize=64)
def _caption_forms(caption: str) -> frozenset[str]:
    return frozenset(f for t in scan_tokens(caption)[0] for f in word_forms(t))


def leaves_caption(caption: str, name: str) -> bool:
    """Whether ``name`` leaves the caption's vocabulary: it has words (after :func:`clean_name`)
    and none of them matches a caption token the way :func:`tally` matches words (lower case,
    same tokeniser, a match when the raw word, pattern singular or noun lemma of one equals one
    of the other's: "Trees" and "tree" match).

    The tally keeps a name only when *all* its words occur, in sequence, so a name that leaves
    the caption is one the tally rejects (``not_in_caption``); the converse does not hold ("red
    car" with only "car" in the caption stays in the vocabulary and is rejected by the tally).
    Names with no word left after cleaning ("the", "a") are not judged here; names without a
    letter ("2") are judged like any other (the tally rejects both as ``empty``).
    """
    words = [t.text for t in tokenize(clean_name(name))]
    if not words:
        return False
    forms = _caption_forms(caption)
    return not any(word_forms(w) & forms for w in words)


def object_list_vocab_cut(
    text: str, final: bool = False, params: Mapping[str, Any] | None = None
) -> str | None:
    """The ``object-list-vocab`` stop rule: the ``{"objects": [...]}`` reply closed (``]}``)
    before its first repeated name (as ``object-list``: lower case, spaces stripped) or before
    its first name that :func:`leaves_caption` of ``params["stop_text"]``, whichever comes
    first; with ``final`` (the token cap) a list that never closed is closed after its last
    complete name. ``None``: go on."""
    caption = str((params or {}).get("stop_text") or "")

    def key(item: Any) -> Any:
        return item.strip().lower()

    return list_cut(text, final, key, lambda item: leaves_caption(caption, item))


def request_id(caption: str) -> str:
    """Request id of a caption (its text hash: identical captions share one request)."""
    return "llm-extract/" + hashlib.sha256(caption.encode("utf-8")).hexdigest()[:16]


def extraction_request(
    caption: str, gen_params: Mapping[str, Any], constrained: bool, grammar: str = "schema"
) -> Request:
    """The text-only chat request for one caption: when ``constrained``, ``json_schema``
    (``grammar="schema"``) or the GBNF :data:`OBJECTS_GBNF` (``grammar="object-list"``). With
    ``stop_rule: object-list-vocab`` in ``gen_params`` the caption is also the request param
    ``stop_text`` (the vocabulary the rule checks names against; part of the cache key)."""
    if grammar not in GRAMMARS:
        raise ValueError(f"extract.llm.grammar: unknown {grammar!r}; valid: {', '.join(GRAMMARS)}")
    params = dict(gen_params)
    if params.get("stop_rule") == "object-list-vocab":
        params["stop_text"] = caption.strip()
    if constrained and grammar == "object-list":
        params["grammar"] = OBJECTS_GBNF
    elif constrained and grammar == "object-list-greedy":
        params["constraint"] = "object-list"
    elif constrained:
        params["json_schema"] = OBJECTS_SCHEMA
    return Request(
        request_id=request_id(caption),
        messages=tuple(build_messages(caption)),
        params=params,
        task="chat",
        meta={"stage": "extract"},
    )


@dataclass
class L2Reply:
    """What the LLM said about one caption: its object names, or ``valid=False``."""

    valid: bool
    raw: list[str] = field(default_factory=list)


@dataclass
class Tally:
    """L2 names checked against the caption: kept mentions (caption order) and the audit trail."""

    kept: list[Mention] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)
    covered: list[str] = field(default_factory=list)


def _reject_reason(name: str) -> str | None:
    words = name.split()
    if not words or not any(ch.isalpha() for ch in name):
        return "empty"
    if name in NOT_OBJECTS or words[-1] in NOT_OBJECTS:
        return "not_object"
    if len(words) > 3 or any(w in _PHRASE_WORDS for w in words):
        return "phrase"
    return None


def tally(caption: str, names: Sequence[str], taken: Sequence[tuple[int, int]] = ()) -> Tally:
    """Check the LLM's names against the caption's words (the CAOS "tally").

    Each cleaned name is matched on its own (case-insensitive token sequence, plurals allowed).
    A name is rejected when it is empty, a word for the picture (``not_object``), a phrase
    rather than a name (``phrase``: more than three words or a function word such as "a",
    "with", "wearing"), or absent from the caption (``not_in_caption``). Occurrences overlapping
    ``taken`` (character spans found by an earlier source) are dropped; a name with no other
    occurrence is ``covered``. Remaining overlaps between L2 names go to the longer mention; a
    name that loses all its occurrences that way is ``overlapped``.
    """
    result = Tally()
    cleaned: list[str] = []
    for raw in names:
        name = clean_name(raw)
        reason = _reject_reason(name)
        if reason is not None:
            result.rejected.append({"name": raw, "reason": reason})
        elif name not in cleaned:
            cleaned.append(name)

    def overlap(m: Mention, spans: Iterable[tuple[int, int]]) -> bool:
        return any(m.start < end and start < m.end for start, end in spans)

    free: list[tuple[Mention, int]] = []
    for index, name in enumerate(cleaned):
        found = LexiconMatcher([name]).find(caption)
        if not found:
            result.rejected.append({"name": name, "reason": "not_in_caption"})
            continue
        mine = [m for m in found if not overlap(m, taken)]
        if not mine:
            result.covered.append(name)
        free.extend((m, index) for m in mine)
    accepted: list[Mention] = []
    for m, _ in sorted(free, key=lambda f: (-(f[0].end - f[0].start), f[0].start, f[1])):
        if not overlap(m, [(a.start, a.end) for a in accepted]):
            accepted.append(m)
    kept_names = {m.class_name for m in accepted}
    for name in dict.fromkeys(cleaned[i] for _, i in free):
        if name not in kept_names:
            result.rejected.append({"name": name, "reason": "overlapped"})
    result.kept = sorted(accepted, key=lambda m: m.start)
    return result


class LLMObjectExtractor:
    """Merge L1 (rule), optional lexicon L2 and LLM L2 for many captions (one LLM call each)."""

    def __init__(
        self,
        parser: ObjectParser,
        backend: Backend | None,
        cache: ResponseCache | None,
        gen_params: Mapping[str, Any] | None = None,
        template_version: str = "v1",
        constrained: bool = True,
        batch_size: int = 4,
        lexicon: LexiconMatcher | None = None,
        grammar: str = "schema",
        nouns: NounCheck | None = None,
        audit: bool = False,
    ) -> None:
        if backend is not None and cache is None:
            raise ValueError("the LLM extractor needs a ResponseCache for its backend")
        self.parser = parser
        self.backend = backend
        self.cache = cache
        self.gen_params = dict(gen_params or {})
        self.template_version = f"{template_version}/{PROMPT_VERSION}"
        self.constrained = constrained
        self.grammar = grammar
        self.batch_size = batch_size
        self.lexicon = lexicon
        self.nouns = nouns
        self.audit = audit
        self.stats: dict[str, int] = {
            "captions": 0,
            "llm_requests": 0,
            "invalid_json": 0,
            "failed": 0,
            "l2_raw": 0,
            "l2_rejected": 0,
            "l2_covered": 0,
            "l2_added": 0,
        }
        if lexicon is not None:
            self.stats["lexicon_kept"] = 0
            if nouns is not None:
                self.stats.update({f"lexicon_rejected_{reason}": 0 for reason in REASONS})

    # -- LLM -------------------------------------------------------------------------------------

    def ask(self, captions: Iterable[str]) -> dict[str, L2Reply]:
        """The parsed LLM reply for each distinct caption (cache first, misses to the backend)."""
        distinct = list(dict.fromkeys(captions))
        if self.backend is None or self.cache is None:
            return {}
        requests = [
            extraction_request(c, self.gen_params, self.constrained, self.grammar) for c in distinct
        ]
        self.stats["llm_requests"] += len(requests)
        try:
            responses = answer_all(
                self.backend,
                requests,
                self.cache,
                self.template_version,
                batch_size=self.batch_size,
                what="captions",
                context=f" for the LLM extractor {self.backend.identity.get('name')!r}",
            )
        except AnswersFailed as err:
            self.stats["failed"] += len(err.failed)
            raise
        out: dict[str, L2Reply] = {}
        for caption, response in zip(distinct, responses, strict=True):
            names = parse_reply(response.text)
            out[caption] = L2Reply(False) if names is None else L2Reply(True, names)
        return out

    # -- merge -----------------------------------------------------------------------------------

    def candidates(self, caption: str) -> tuple[list[Mention], list[Mention]]:
        """The rule-based mentions of ``caption`` and the lexicon matches that overlap none of
        them (before the noun check), each in caption order."""
        rule = self.parser.parse(caption)
        if self.lexicon is None:
            return rule, []
        spans = [(m.start, m.end) for m in rule]
        return rule, [m for m in self.lexicon.find(caption) if not _overlaps(m, spans)]

    def merge(
        self,
        caption: str,
        l2: L2Reply | None,
        found: tuple[list[Mention], list[Mention]] | None = None,
    ) -> dict[str, Any]:
        """The record fields for one caption: ``objects`` (L in caption order) and ``llm``
        (with ``audit``, also ``lexicon_rejected``: the lexicon matches the noun check dropped,
        with the reason). ``found``: :meth:`candidates` of ``caption`` when already known."""
        self.stats["captions"] += 1
        rule, lexical = self.candidates(caption) if found is None else found
        objects: list[tuple[int, int, dict[str, Any]]] = []
        spans: list[tuple[int, int]] = []
        for m in rule:
            spans.append((m.start, m.end))
            objects.append((m.start, m.position, _obj(m.class_name, m, True, "rule")))
        rejected: list[dict[str, Any]] = []
        for m in lexical:
            reason = None
            if self.nouns is not None:
                reason = self.nouns.reason(caption, m.start, m.end, m.class_name)
            if reason is not None:
                self.stats[f"lexicon_rejected_{reason}"] += 1
                rejected.append({**_obj(m.class_name, m, False, "lexicon"), "reason": reason})
                continue
            self.stats["lexicon_kept"] += 1
            spans.append((m.start, m.end))
            objects.append((m.start, m.position, _obj(m.class_name, m, False, "lexicon")))
        record: dict[str, Any] = {}
        if l2 is not None:
            if not l2.valid:
                self.stats["invalid_json"] += 1
            checked = tally(caption, l2.raw, spans)
            for m in checked.kept:
                cls = head_class(self.parser, m.class_name)
                if cls is None:
                    name = canonical_name(m.surface)
                    cls = head_class(self.parser, name)
                if cls is not None:
                    objects.append((m.start, m.position, _obj(cls, m, True, "llm")))
                else:
                    objects.append((m.start, m.position, _obj(name, m, False, "llm")))
            self.stats["l2_raw"] += len(l2.raw)
            self.stats["l2_rejected"] += len(checked.rejected)
            self.stats["l2_covered"] += len(checked.covered)
            self.stats["l2_added"] += len(checked.kept)
            record["llm"] = {
                "covered": checked.covered,
                "raw": list(l2.raw),
                "rejected": checked.rejected,
                "valid": l2.valid,
            }
        objects.sort(key=lambda o: (o[0], o[1]))
        record["objects"] = [o for _, _, o in objects]
        if self.audit:
            record["lexicon_rejected"] = rejected
        return record

    def extract(self, captions: Sequence[str], use_llm: bool = True) -> list[dict[str, Any]]:
        """Record fields (``objects`` and, with the LLM, ``llm``) for each caption, in order.

        The candidates are found once per distinct caption, and the noun check tags the
        lexicon matches of all of them in one batch."""
        l2 = self.ask(captions) if use_llm else {}
        found = self.prepare(captions)
        return [self.merge(c, l2.get(c) if use_llm else None, found[c]) for c in captions]

    def prepare(self, captions: Sequence[str]) -> dict[str, tuple[list[Mention], list[Mention]]]:
        """:meth:`candidates` of each distinct caption, after the noun check has tagged the
        windows around all their lexicon matches in one batch (rule ``noun_tags`` calls this to
        tag a file exactly as its extract job would)."""
        found = {c: self.candidates(c) for c in dict.fromkeys(captions)}
        if self.nouns is not None:
            self.nouns.prepare({c: [(m.start, m.end) for m in f[1]] for c, f in found.items()})
        return found


def head_class(parser: ObjectParser, name: str) -> str | None:
    """The MSCOCO class of a name whose head (last) word is an MSCOCO object, else ``None``.

    The parser reads the name first, so its bigram rules apply (``toilet seat`` -> ``toilet``,
    ``train track`` -> nothing); then the synonym table is looked up directly with the raw and the
    lemmatised head, which recovers words a reference table's normalisation loses (the pattern
    singular turns ``bus`` into ``bu``). ``red sofa`` -> ``couch``; ``dog leash`` -> ``None``.
    """
    from halluscope.objects.parser import tokenize

    tokens = tokenize(name)
    if not tokens:
        return None
    last = tokens[-1]
    for mention in parser.parse(name):
        if mention.start <= last.start < mention.end:
            return mention.class_name
    words = [t.text for t in tokens]
    for size in (2, 1):
        if len(words) < size:
            continue
        tail = words[-size:]
        for head in dict.fromkeys((tail[-1], lemmatize(tail[-1]))):
            cls = parser.synonyms.get(" ".join([*tail[:-1], head]))
            if cls is not None:
                return cls
    return None


def _overlaps(m: Mention, spans: Iterable[tuple[int, int]]) -> bool:
    return any(m.start < end and start < m.end for start, end in spans)


def _obj(name: str, mention: Mention, in_domain: bool, source: str) -> dict[str, Any]:
    return {
        "name": name,
        "surface": mention.surface,
        "position": mention.position,
        "in_domain": in_domain,
        "source": source,
    }
