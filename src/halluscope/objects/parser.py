"""CHAIR-style rule-based MSCOCO object parser (the rule-based object list L1).

The algorithm is the reference CHAIR one (Rohrbach et al. 2018, ``utils/chair.py`` of
LisaAnne/Hallucination, as used by OPERA/HALC):

1. lower-case the caption and word-tokenise it (NLTK ``word_tokenize``; reimplemented below
   because NLTK's punkt model cannot be downloaded here);
2. normalise every token (``pattern``: ``pattern.en.singularize``; ``lemmatizer``: a WordNet-like
   noun lemmatiser), see :mod:`halluscope.objects.normalize`;
3. merge bigrams of the double-word table greedily from left to right (``hot dog``,
   ``baby elephant`` -> ``elephant``, ``toilet seat`` -> ``toilet``, ``train track`` -> a
   non-object);
4. drop every ``seat`` when ``toilet`` also occurs (a toilet seat is not a chair);
5. keep the words that are synonyms of a class and map them to the class; duplicates are kept.

Each mention records the index of its (first) token in the token list and its character span in
the original caption, which CAOS needs for the caption order.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate, chain
from operator import add
from typing import NamedTuple

from halluscope.objects.coco import load_synonyms
from halluscope.objects.coco_synonyms import BUILTIN_NON_OBJECT_BIGRAMS, DOUBLE_WORDS
from halluscope.objects.normalize import get_normalizer

__all__ = ["Mention", "ObjectParser", "Token", "TokenSpans", "scan_tokens", "tokenize"]


class Token(NamedTuple):
    """One word token: its text (lower-cased, as NLTK returns it) and its span in the caption."""

    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Mention:
    """One object mention: ``surface`` is the caption text of the (merged) tokens, ``word`` the
    normalised word that matched, ``position`` the index of its first token."""

    surface: str
    word: str
    class_name: str
    position: int
    start: int
    end: int


# --------------------------------------------------------------------------------------------
# tokenizer: NLTK word_tokenize (punkt sentence split + Treebank-style word split) on captions
# --------------------------------------------------------------------------------------------

# Abbreviations punkt's English model knows (the common ones); a period after them does not end
# a sentence, so it stays attached to the token.
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st jr sr vs etc e.g i.e a.m p.m u.s u.k inc ltd co corp jan feb mar apr jun "
    "jul aug sep sept oct nov dec mt ft no approx dept est fig gov prof rev sen rep gen col lt "
    "sgt capt ave blvd rd ct d.c n.y n.j l.a calif conn mich ariz colo fla minn okla tenn tex "
    "wis nev ky ga md va bros cie".split()
)
_NUMBER = re.compile(r"-?[.,]?\d[\d,.-]*")
_CLOSERS = "\"')]}>"
_WHITESPACE = re.compile(r"\s+")
_MAYBE_FINAL = frozenset(".\"')]}>")

# (pattern, replacement) applied to a single whitespace-free chunk, in NLTK's order.
_STARTING_QUOTES = (
    (re.compile(r"([«“‘„]|`+)"), r" \1 "),
    (re.compile(r"(``)"), r" \1 "),
    (re.compile(r"([ (\[{<])(\"|'')"), r"\1 `` "),
    (re.compile(r"(?i)(')(?!re|ve|ll|m|t|s|d|n)(\w)\b"), r"\1 \2"),
)
_FINAL_PERIOD = re.compile(r"([^.])(\.)([\])}>\"']*)\s*$")
_PUNCTUATION = (
    (re.compile(r"([:,])([^\d])"), r" \1 \2"),
    (re.compile(r"([:,])$"), r" \1 "),
    (re.compile(r"\.{2,}"), r" \g<0> "),
    (re.compile(r"[;@#$%&]"), r" \g<0> "),
    (re.compile(r"[?!]"), r" \g<0> "),
    (re.compile(r"([^'])'(?= |$)"), r"\1 ' "),
    (re.compile(r"[*]"), r" \g<0> "),
    (re.compile(r"[\][(){}<>]"), r" \g<0> "),
    (re.compile(r"--"), r" -- "),
)
_ENDING_QUOTES = (
    (re.compile(r"([»”’])"), r" \1 "),
    (re.compile(r"''"), " '' "),
    (re.compile(r'"'), " '' "),
    (re.compile(r"([^' ])('[sS]|'[mM]|'[dD]|') "), r"\1 \2 "),
    (re.compile(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), r"\1 \2 "),
)
_CONTRACTIONS = tuple(
    re.compile(p)
    for p in (
        r"(?i)\b(can)(not)\b",
        r"(?i)\b(d)('ye)\b",
        r"(?i)\b(gim)(me)\b",
        r"(?i)\b(gon)(na)\b",
        r"(?i)\b(got)(ta)\b",
        r"(?i)\b(lem)(me)\b",
        r"(?i)\b(more)('n)\b",
        r"(?i)\b(wan)(na)(?=\s)",
        r"(?i) ('t)(is)\b",
        r"(?i) ('t)(was)\b",
    )
)
# Characters that can make the Treebank rules split a chunk; chunks without any are one token.
_SPLIT_CHARS = frozenset("\"'`«“‘„»”’:,.;@#$%&?!*[](){}<>-")
_QUOTE = re.compile(r"\"|''|``")
_CONTRACTION_HINT = re.compile(r"(?i)cannot|gimme|gonna|gotta|lemme|wanna")


def _ends_sentence(chunk: str, next_chunk: str | None) -> bool:
    """punkt's decision (on lower-cased text) whether a sentence ends after ``chunk``."""
    if next_chunk is None:
        return True
    core = chunk.rstrip(_CLOSERS)
    if not core.endswith("."):
        return core.endswith(("?", "!"))
    core = core[:-1]
    if not core or core.endswith("."):
        return False  # an ellipsis does not end a sentence before a lower-case word
    core = core.lstrip("\"'([{`")
    if core in _ABBREVIATIONS or core.rsplit("-", 1)[-1] in _ABBREVIATIONS:
        return False
    if _NUMBER.fullmatch(core) or (len(core) == 1 and core.isalpha()):
        # ordinals ("1.") and initials ("b.") end a sentence unless a lower-case word follows
        first = next_chunk[0]
        return not (first.islower() or first in ";:,.!?")
    return True


@lru_cache(maxsize=262_144)
def _split_chunk(chunk: str, final: bool) -> tuple[tuple[str, int, int], ...]:
    """Tokens of one whitespace-free chunk with offsets relative to the chunk."""
    if not _SPLIT_CHARS.intersection(chunk) and not _CONTRACTION_HINT.search(chunk):
        return ((chunk, 0, len(chunk)),)
    text = " " + chunk
    for pattern, repl in _STARTING_QUOTES:
        text = pattern.sub(repl, text)
    if final:
        text = _FINAL_PERIOD.sub(r"\1 \2 \3 ", text)
    for pattern, repl in _PUNCTUATION:
        text = pattern.sub(repl, text)
    text = " " + text + " "
    for pattern, repl in _ENDING_QUOTES:
        text = pattern.sub(repl, text)
    for pattern in _CONTRACTIONS:
        text = pattern.sub(r" \1 \2 ", text)
    out: list[tuple[str, int, int]] = []
    cursor = 0
    for tok in text.split():
        if tok in ("``", "''") and not chunk.startswith(tok, cursor):
            # converted double quote: align to the next quote character(s) of the chunk
            m = _QUOTE.search(chunk, cursor)
            begin = m.start() if m else cursor
            end = m.end() if m else cursor
        else:
            begin = chunk.find(tok, cursor)
            if begin < 0:  # cannot happen with the rules above; keep offsets monotone anyway
                begin, end = cursor, cursor
            else:
                end = begin + len(tok)
        out.append((tok, begin, end))
        cursor = end
    return tuple(out)


def _lower_with_map(text: str) -> tuple[str, list[int] | None]:
    """Lower-case ``text``; if that changes its length, also map lower-case to original indices."""
    low = text.lower()
    if len(low) == len(text):
        return low, None
    parts: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        lc = ch.lower()
        parts.append(lc)
        index.extend([i] * len(lc))
    index.append(len(text))
    return "".join(parts), index


def _chunks(low: str) -> list[tuple[str, int, bool]]:
    """Whitespace-free chunks of lower-cased text: (chunk, offset, ends its sentence)."""
    parts = low.split()
    out: list[tuple[str, int, bool]] = []
    pos = 0
    last = len(parts) - 1
    for i, chunk in enumerate(parts):
        pos = low.find(chunk, pos)
        nxt = parts[i + 1] if i < last else None
        final = chunk[-1] in _MAYBE_FINAL and _ends_sentence(chunk, nxt)
        out.append((chunk, pos, final))
        pos += len(chunk)
    return out


def tokenize(caption: str) -> list[Token]:
    """Lower-case and word-tokenise ``caption`` like ``nltk.word_tokenize(caption.lower())``.

    Offsets refer to ``caption`` itself. Differences with NLTK are limited to punkt's learned
    abbreviation list (only common abbreviations are known here) and exotic quote sequences.
    """
    low, index = _lower_with_map(caption)
    tokens: list[Token] = []
    for chunk, base, final in _chunks(low):
        for tok, s, e in _split_chunk(chunk, final):
            if index is None:
                tokens.append(Token(tok, base + s, base + e))
            else:
                tokens.append(Token(tok, index[base + s], index[base + e]))
    return tokens


_TEXT_CACHES: tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]] = ({}, {})


def scan_tokens(caption: str) -> tuple[list[str], list[str], list[int]]:
    """Fast path of :func:`tokenize` without offsets: the token texts, the lower-cased
    whitespace-free chunks and the index of each chunk's first token (see :func:`token_spans`)."""
    parts = caption.lower().split()
    last = len(parts) - 1
    texts: list[tuple[str, ...]] = []
    for i, chunk in enumerate(parts):
        final = chunk[-1] in _MAYBE_FINAL and _ends_sentence(
            chunk, parts[i + 1] if i < last else None
        )
        cache = _TEXT_CACHES[final]
        toks = cache.get(chunk)
        if toks is None:
            toks = tuple(t for t, _, _ in _split_chunk(chunk, final))
            if len(cache) < 1_000_000:
                cache[chunk] = toks
        texts.append(toks)
    return list(chain.from_iterable(texts)), parts, [0, *accumulate(map(len, texts))]


class TokenSpans:
    """Character spans of tokens found by :func:`scan_tokens` (computed only when needed)."""

    def __init__(self, caption: str, chunks: list[str], firsts: list[int]) -> None:
        low, self.index = _lower_with_map(caption)
        gaps = list(map(len, _WHITESPACE.findall(low)))
        lead = gaps.pop(0) if low[:1].isspace() else 0
        self.bases = list(accumulate(map(add, map(len, chunks), gaps), initial=lead))
        self.chunks = chunks
        self.firsts = firsts

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Span in the original caption from the start of token ``first`` to the end of ``last``."""
        start, end = _token_span(self.chunks, self.bases, self.firsts, first)
        if last != first:
            end = _token_span(self.chunks, self.bases, self.firsts, last)[1]
        if self.index is not None:
            start, end = self.index[start], self.index[end]
        return start, end


def _token_span(chunks: list[str], bases: list[int], firsts: list[int], i: int) -> tuple[int, int]:
    """Span in the lower-cased caption of token ``i`` (``firsts``: first token of each chunk)."""
    ci = bisect_right(firsts, i) - 1
    chunk = chunks[ci]
    nxt = chunks[ci + 1] if ci + 1 < len(chunks) else None
    final = chunk[-1] in _MAYBE_FINAL and _ends_sentence(chunk, nxt)
    _, s, e = _split_chunk(chunk, final)[i - firsts[ci]]
    return bases[ci] + s, bases[ci] + e


# --------------------------------------------------------------------------------------------
# parser
# --------------------------------------------------------------------------------------------


class ObjectParser:
    """Rule-based MSCOCO object parser.

    ``synonyms`` maps surface words to class names (:func:`halluscope.objects.coco.load_synonyms`);
    ``None`` (or the builtin mapping itself) uses halluscope's builtin table. ``variant`` names
    the word normalisation (``pattern`` or ``lemmatizer``). ``double_words`` overrides the
    bigram table.

    ``expand`` (default: ``True`` for the builtin table, ``False`` for a given table) adds every
    two-word synonym to the bigram table and registers the *normalised* form of every synonym
    and bigram, so that e.g. ``bus`` (normalised to ``bu`` by the pattern variant) is still
    found. The reference CHAIR does neither (its bigram list is hard-coded, see
    :data:`~halluscope.objects.coco_synonyms.DOUBLE_WORDS`), so a loaded reference table keeps
    its blind spots and reproduces published numbers.
    """

    def __init__(
        self,
        synonyms: Mapping[str, str] | None = None,
        variant: str = "pattern",
        double_words: Mapping[str, str] | None = None,
        expand: bool | None = None,
    ) -> None:
        # the builtin table passed explicitly (load_synonyms(None)) behaves like ``None``
        builtin = synonyms is None or dict(synonyms) == load_synonyms(None)
        self.variant = variant
        self.normalize: Callable[[str], str] = get_normalizer(variant)
        table = dict(load_synonyms(None) if synonyms is None else synonyms)
        expand = builtin if expand is None else expand
        doubles: dict[str, str] = dict(DOUBLE_WORDS if double_words is None else double_words)
        if double_words is None and builtin:
            for bigram in BUILTIN_NON_OBJECT_BIGRAMS:
                doubles.setdefault(bigram, bigram)
        if expand:
            # every two-word synonym becomes a bigram to merge (the reference hard-codes its list)
            for word in table:
                if word.count(" ") == 1 and word.strip() == word:
                    doubles.setdefault(word, word)
            for word, cls in list(table.items()):
                if word.strip() != word:
                    continue
                parts = word.split(" ")
                norm = " ".join(self.normalize(p) for p in parts)
                table.setdefault(norm, cls)
            for bigram, target in list(doubles.items()):
                parts = bigram.split(" ")
                if len(parts) == 2:
                    doubles.setdefault(" ".join(self.normalize(p) for p in parts), target)
        self.synonyms: dict[str, str] = table
        self.double_words: dict[str, str] = doubles
        # first word of a bigram -> {second word: merged word}, to avoid building strings
        self._bigrams: dict[str, dict[str, str]] = {}
        for bigram, target in doubles.items():
            first, _, second = bigram.partition(" ")
            if second and " " not in second:
                self._bigrams.setdefault(first, {})[second] = target
        # words that can start a mention or a bigram, or trigger the toilet/seat rule
        self._keys = frozenset(table) | frozenset(self._bigrams) | {"toilet", "seat"}
        self._cache: dict[str, tuple[str, ...]] = {}
        self._final_cache: dict[str, tuple[str, ...]] = {}

    def _chunk_words(self, chunk: str, final: bool) -> tuple[str, ...]:
        cache = self._final_cache if final else self._cache
        words = cache.get(chunk)
        if words is None:
            words = tuple(self.normalize(tok) for tok, _, _ in _split_chunk(chunk, final))
            if len(cache) < 1_000_000:
                cache[chunk] = words
        return words

    def _scan(self, caption: str) -> tuple[list[str], list[str], list[int]]:
        """Normalised words of all tokens, the lower-cased chunks and each chunk's first token."""
        parts = caption.lower().split()
        get = self._cache.get
        chunk_words = [get(c) for c in parts]
        last = len(parts) - 1
        todo = [
            i
            for i, (c, w) in enumerate(zip(parts, chunk_words, strict=True))
            if w is None or c[-1] in _MAYBE_FINAL
        ]
        for i in todo:
            chunk = parts[i]
            final = chunk[-1] in _MAYBE_FINAL and _ends_sentence(
                chunk, parts[i + 1] if i < last else None
            )
            chunk_words[i] = self._chunk_words(chunk, final)
        words = list(chain.from_iterable(chunk_words))
        firsts = [0, *accumulate(map(len, chunk_words))]
        return words, parts, firsts

    def merged_words(self, caption: str) -> list[tuple[str, int, int]]:
        """The normalised words after the bigram merge, with first and last token index.

        The word list equals the ``words`` field of the reference CHAIR outputs.
        """
        words, _, _ = self._scan(caption)
        merged: list[tuple[str, int, int]] = []
        i, n = 0, len(words)
        while i < n:
            word, last = self._merge_at(words, i)
            merged.append((word, i, last))
            i = last + 1
        return merged

    def _merge_at(self, words: list[str], i: int) -> tuple[str, int]:
        """The (possibly merged) word starting at token ``i`` and the index of its last token."""
        word = words[i]
        if i + 1 < len(words):
            seconds = self._bigrams.get(word)
            if seconds is not None:
                target = seconds.get(words[i + 1])
                if target is not None:
                    return target, i + 1
        return word, i

    def parse(self, caption: str) -> list[Mention]:
        """Object mentions of ``caption`` in caption order (duplicates kept)."""
        words, chunks, firsts = self._scan(caption)
        keys = self._keys
        merged: list[tuple[str, int, int]] = []
        has_toilet = has_seat = False
        resume = 0
        # Only tokens in ``keys`` can start a merge or a mention; the others are skipped in C.
        for i in [i for i, w in enumerate(words) if w in keys]:
            if i < resume:
                continue  # consumed as the second word of a bigram
            word, last = self._merge_at(words, i)
            if word == "toilet":
                has_toilet = True
            elif word == "seat":
                has_seat = True
            if word in self.synonyms:
                merged.append((word, i, last))
            resume = last + 1
        if not merged:
            return []
        spans = TokenSpans(caption, chunks, firsts)
        out: list[Mention] = []
        for word, first, last in merged:
            if has_toilet and has_seat and word == "seat":
                continue
            start, end = spans.span(first, last)
            out.append(Mention(caption[start:end], word, self.synonyms[word], first, start, end))
        return out

    def parse_many(self, captions: Iterable[str]) -> list[list[Mention]]:
        """:meth:`parse` for many captions (tokenisation and normalisation are cached)."""
        return [self.parse(c) for c in captions]

    def classes(self, caption: str) -> list[str]:
        """Class names mentioned in ``caption``, in caption order, duplicates kept."""
        return [m.class_name for m in self.parse(caption)]
