"""Out-of-domain object matcher: find the nouns of a lexicon in a caption without an LLM.

The CAOS pipeline needs objects beyond the 80 MSCOCO classes (the L2 list). With an LLM
extractor unavailable, the objects an annotation lists (``other_objects``) or any noun lexicon
can be matched directly. Matching uses the CHAIR tokenisation of
:func:`~halluscope.objects.parser.tokenize`, so mention positions are comparable with the
rule-based parser's positions.

A token matches a lexicon word when any normalised form of one equals any form of the other:
the raw word, the pattern singular and the lemma. This keeps pattern's quirks from hiding words
(``dress`` -> ``dres`` but ``dresses`` -> ``dress``). Multi-word entries (``traffic cone``) are
matched as token sequences; the longest entry wins, matches do not overlap, caption order.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from halluscope.objects.normalize import lemmatize, singularize
from halluscope.objects.parser import Mention, TokenSpans, scan_tokens, tokenize

__all__ = ["LexiconMatcher", "find_objects", "word_forms"]


@lru_cache(maxsize=200_000)
def _forms(word: str) -> frozenset[str]:
    return frozenset((word, singularize(word), lemmatize(word)))


def word_forms(word: str) -> frozenset[str]:
    """The forms a token is matched by (raw, pattern singular, lemma): two tokens match when
    their form sets meet."""
    return _forms(word)


class LexiconMatcher:
    """Precompiled matcher for one lexicon (reuse it for many captions)."""

    def __init__(self, lexicon: Iterable[str]) -> None:
        # form of an entry's first word -> [(entry, word-form set of each of its words)]
        self._index: dict[str, list[tuple[str, tuple[frozenset[str], ...]]]] = {}
        seen: set[str] = set()
        for entry in lexicon:
            words = tuple(t.text for t in tokenize(entry))
            if not words or entry in seen:
                continue
            seen.add(entry)
            forms = tuple(_forms(w) for w in words)
            for form in forms[0]:
                self._index.setdefault(form, []).append((entry, forms))
        # token -> matching entries (longest first); token -> whether any entry starts there
        self._by_token: dict[str, list[tuple[str, tuple[frozenset[str], ...]]]] = {}
        self._starts: dict[str, bool] = {}

    def find(self, caption: str) -> list[Mention]:
        """Lexicon mentions of ``caption`` in caption order; ``class_name`` is the lexicon entry."""
        texts, chunks, firsts = scan_tokens(caption)
        starts = self._starts
        candidates = [i for i, t in enumerate(texts) if starts.get(t, True)]
        out: list[Mention] = []
        spans: TokenSpans | None = None
        resume = 0
        n = len(texts)
        for i in candidates:
            if i < resume:
                continue
            entries = self._entries_for(texts[i])
            if not entries:
                continue
            best: tuple[str, int] | None = None
            for entry, forms in entries:  # longest first
                size = len(forms)
                if i + size <= n and all(forms[k] & _forms(texts[i + k]) for k in range(1, size)):
                    best = (entry, size)
                    break
            if best is None:
                continue
            entry, size = best
            if spans is None:
                spans = TokenSpans(caption, chunks, firsts)
            start, end = spans.span(i, i + size - 1)
            word = " ".join(singularize(t) for t in texts[i : i + size])
            out.append(Mention(caption[start:end], word, entry, i, start, end))
            resume = i + size
        return out

    def _entries_for(self, token: str) -> list[tuple[str, tuple[frozenset[str], ...]]]:
        """Entries whose first word matches ``token``, longest first (cached per token)."""
        entries = self._by_token.get(token)
        if entries is None:
            found: dict[str, tuple[frozenset[str], ...]] = {}
            for form in _forms(token):
                for entry, forms in self._index.get(form, ()):
                    found[entry] = forms
            entries = sorted(found.items(), key=lambda e: (-len(e[1]), e[0]))
            if len(self._by_token) < 500_000:
                self._by_token[token] = entries
                self._starts[token] = bool(entries)
        return entries


@lru_cache(maxsize=8)
def _matcher(lexicon: tuple[str, ...]) -> LexiconMatcher:
    return LexiconMatcher(lexicon)


def find_objects(caption: str, lexicon: Iterable[str]) -> list[Mention]:
    """Mentions of the ``lexicon`` nouns in ``caption`` (single and multi-word, plurals,
    case-insensitive), in caption order, with token positions as in the object parser.

    The compiled matcher of the last few lexicons is cached, so calling this once per caption
    with the same lexicon is cheap.
    """
    return _matcher(tuple(lexicon)).find(caption)
