"""NOPE answer metrics (Lovenia et al., ``../shared/papers/nope.txt``, §4.3 and Table 3).

Three scores per answer, each against the question's ground-truth ``reference``:

* **Exact-match accuracy** -- 1 if the normalised answer equals the normalised reference (any of
  them when a record lists several), else 0. Normalisation is the official VQA evaluation's
  (GT-Vision-Lab/VQA, ``PythonEvaluationTools/vqaEvaluation/vqaEval.py``): newlines and tabs to
  spaces, strip, ``processPunctuation`` then ``processDigitArticle`` (lower case, number words
  ``none``/``zero``..``ten`` to digits, articles ``a an the`` removed, contractions restored).
  The official code only punctuation-processes its (already normalised) human answers; we run the
  whole pipeline on both sides because our references are free text. Note the VQA map
  ``none -> 0``: "none" and "0" and "zero" all match each other, as in VQA (and "no one" becomes
  "no 1" on both sides, which still matches).
* **METEOR** -- METEOR 1.5 (Banerjee & Lavie 2005) through pycocoevalcap's jar on Java
  (``-l en -norm``), one segment per answer scored against its reference(s), on the
  VQA-normalised strings (so that a trailing period or an article does not cost partial credit
  that exact match ignores). The reported value is the **mean of the per-answer segment scores**,
  not METEOR's corpus-level aggregate: a mean over records equals the paper's "weighted average
  according to each task size" (§4.3) when several tasks are pooled.
* **NegP accuracy** (NegP questions only) -- 1 if the answer *is* a negative indefinite pronoun:
  after lower-casing, VQA punctuation processing and stripping surrounding non-word characters,
  the whole answer must be one of :data:`NEGP_ANSWERS`. "There is no spoon" scores 0, as the
  paper's Limitations section states; "no" alone is not a NegP.

``score_answers`` reports the three scores for NegP questions and accuracy + METEOR for the other
questions, each overall and broken down by question type and object-scene relevance. All values
are fractions in [0, 1] (the paper prints percentages).
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "ARTICLES",
    "CONTRACTIONS",
    "MANUAL_NUMBER_MAP",
    "NEGP_ANSWERS",
    "NEGP_PRONOUNS",
    "NEGP_ZERO_ANSWERS",
    "PUNCTUATION",
    "RELEVANCE_LEVELS",
    "MeteorScorer",
    "MeteorUnavailableError",
    "exact_match",
    "is_negp_answer",
    "negp_normalize",
    "normalize_answer",
    "normalize_relevance",
    "process_digit_article",
    "process_punctuation",
    "score_answers",
    "validate_record",
]

# ---------------------------------------------------------------------------------------------
# Negative indefinite pronouns
# ---------------------------------------------------------------------------------------------

NEGP_PRONOUNS: tuple[str, ...] = ("none", "nothing", "nobody", "no one", "nowhere", "neither")
"""The negative indefinite pronouns (NegP) that count as a NegP answer.

Source: NOPE §1 lists "none", "no one", "nobody", "nowhere", "neither" (after Quirk et al. 1985);
Appendix B, Table 6 uses "none", "nothing", "nowhere", "no one", "nobody" as the ground-truth
answers of the question templates, and Appendix A (Table 4) also uses "nothing" and "neither".
"""

NEGP_ZERO_ANSWERS: tuple[str, ...] = ("zero", "0")
"""Counting answers that Table 6 (template 4, "How many <OBJECT> ...?" -> "zero / 0 / none")
accepts as the NegP ground truth; counted as NegP answers unless ``include_zero=False``."""

NEGP_ANSWERS: tuple[str, ...] = NEGP_PRONOUNS + NEGP_ZERO_ANSWERS
"""Every answer form :func:`is_negp_answer` accepts by default."""

RELEVANCE_LEVELS: tuple[str, ...] = ("closely_related", "loosely_related", "unrelated")
"""Object-scene relevance (NOPE §3.1 footnote 1, §3.4 "Object-Scene Relevance"): the descriptor
used when the LLM listed the object -- "closely related", "loosely related" or "completely
unrelated" to the caption (Table 10 prints them as Related / Partially related / Unrelated)."""

_RELEVANCE_ALIASES = {
    "closely related": "closely_related",
    "closely_related": "closely_related",
    "related": "closely_related",
    "hard": "closely_related",
    "loosely related": "loosely_related",
    "loosely_related": "loosely_related",
    "partially related": "loosely_related",
    "unrelated": "unrelated",
    "completely unrelated": "unrelated",
    "completely_unrelated": "unrelated",
}

# ---------------------------------------------------------------------------------------------
# VQA answer normalisation (official vqaEval.py, GT-Vision-Lab/VQA, Python 3 version)
# ---------------------------------------------------------------------------------------------

# fmt: off
CONTRACTIONS: dict[str, str] = {
    "aint": "ain't", "arent": "aren't", "cant": "can't", "couldve": "could've",
    "couldnt": "couldn't", "couldn'tve": "couldn't've", "couldnt've": "couldn't've",
    "didnt": "didn't", "doesnt": "doesn't", "dont": "don't", "hadnt": "hadn't",
    "hadnt've": "hadn't've", "hadn'tve": "hadn't've", "hasnt": "hasn't", "havent": "haven't",
    "hed": "he'd", "hed've": "he'd've", "he'dve": "he'd've", "hes": "he's", "howd": "how'd",
    "howll": "how'll", "hows": "how's", "Id've": "I'd've", "I'dve": "I'd've", "Im": "I'm",
    "Ive": "I've", "isnt": "isn't", "itd": "it'd", "itd've": "it'd've", "it'dve": "it'd've",
    "itll": "it'll", "let's": "let's", "maam": "ma'am", "mightnt": "mightn't",
    "mightnt've": "mightn't've", "mightn'tve": "mightn't've", "mightve": "might've",
    "mustnt": "mustn't", "mustve": "must've", "neednt": "needn't", "notve": "not've",
    "oclock": "o'clock", "oughtnt": "oughtn't", "ow's'at": "'ow's'at", "'ows'at": "'ow's'at",
    "'ow'sat": "'ow's'at", "shant": "shan't", "shed've": "she'd've", "she'dve": "she'd've",
    "she's": "she's", "shouldve": "should've", "shouldnt": "shouldn't",
    "shouldnt've": "shouldn't've", "shouldn'tve": "shouldn't've", "somebody'd": "somebodyd",
    "somebodyd've": "somebody'd've", "somebody'dve": "somebody'd've",
    "somebodyll": "somebody'll", "somebodys": "somebody's", "someoned": "someone'd",
    "someoned've": "someone'd've", "someone'dve": "someone'd've", "someonell": "someone'll",
    "someones": "someone's", "somethingd": "something'd", "somethingd've": "something'd've",
    "something'dve": "something'd've", "somethingll": "something'll", "thats": "that's",
    "thered": "there'd", "thered've": "there'd've", "there'dve": "there'd've",
    "therere": "there're", "theres": "there's", "theyd": "they'd", "theyd've": "they'd've",
    "they'dve": "they'd've", "theyll": "they'll", "theyre": "they're", "theyve": "they've",
    "twas": "'twas", "wasnt": "wasn't", "wed've": "we'd've", "we'dve": "we'd've",
    "weve": "we've", "werent": "weren't", "whatll": "what'll", "whatre": "what're",
    "whats": "what's", "whatve": "what've", "whens": "when's", "whered": "where'd",
    "wheres": "where's", "whereve": "where've", "whod": "who'd", "whod've": "who'd've",
    "who'dve": "who'd've", "wholl": "who'll", "whos": "who's", "whove": "who've",
    "whyll": "why'll", "whyre": "why're", "whys": "why's", "wont": "won't",
    "wouldve": "would've", "wouldnt": "wouldn't", "wouldnt've": "wouldn't've",
    "wouldn'tve": "wouldn't've", "yall": "y'all", "yall'll": "y'all'll", "y'allll": "y'all'll",
    "yall'd've": "y'all'd've", "y'alld've": "y'all'd've", "y'all'dve": "y'all'd've",
    "youd": "you'd", "youd've": "you'd've", "you'dve": "you'd've", "youll": "you'll",
    "youre": "you're", "youve": "you've",
}
# fmt: on
"""The official contractions map (keys with capitals never match: the text is lower-cased)."""

# fmt: off
MANUAL_NUMBER_MAP: dict[str, str] = {
    "none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10",
}
# fmt: on
"""The official ``manualMap``: number words (and "none") to digits."""

ARTICLES: tuple[str, ...] = ("a", "an", "the")

# fmt: off
PUNCTUATION: tuple[str, ...] = (
    ";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`",
    ",", "?", "!",
)
# fmt: on
"""The official ``punct`` list (":" and "'" are deliberately kept, as in vqaEval.py)."""

# ``(?!<=\d)`` is the official pattern verbatim: a look-ahead for the literal "<=" (a typo for a
# look-behind), so in effect every period not followed by a digit is removed ("2.5" survives).
_PERIOD_STRIP = re.compile(r"(?!<=\d)(\.)(?!\d)")
_COMMA_STRIP = re.compile(r"(\d)(,)(\d)")
# The official code passes ``re.UNICODE`` (= 32) as the positional *count* of ``sub``: at most 32
# periods are stripped. Kept for parity; no real answer has more.
_PERIOD_STRIP_COUNT = int(re.UNICODE)


def process_punctuation(text: str) -> str:
    """Official ``processPunctuation``: drop or space out punctuation, strip sentence periods.

    A mark is deleted when it touches a space anywhere in the *input* (or the input has a digit
    comma like "1,000"), else replaced by a space ("no-one" -> "no one", "dogs, cats" ->
    "dogs cats").
    """
    out = text
    has_digit_comma = _COMMA_STRIP.search(text) is not None
    for mark in PUNCTUATION:
        if (mark + " " in text or " " + mark in text) or has_digit_comma:
            out = out.replace(mark, "")
        else:
            out = out.replace(mark, " ")
    return _PERIOD_STRIP.sub("", out, count=_PERIOD_STRIP_COUNT)


def process_digit_article(text: str) -> str:
    """Official ``processDigitArticle``: lower case, number words to digits, no articles."""
    words = []
    for word in text.lower().split():
        word = MANUAL_NUMBER_MAP.get(word, word)
        if word not in ARTICLES:
            words.append(word)
    return " ".join(CONTRACTIONS.get(word, word) for word in words)


def normalize_answer(text: str) -> str:
    """The full VQA answer normalisation applied before exact matching."""
    text = text.replace("\n", " ").replace("\t", " ").strip()
    return process_digit_article(process_punctuation(text))


def _references(reference: str | Sequence[str]) -> list[str]:
    return [reference] if isinstance(reference, str) else list(reference)


def exact_match(answer: str, reference: str | Sequence[str]) -> bool:
    """True when the normalised answer equals a normalised reference ("Two dogs." == "2 dogs")."""
    normalised = normalize_answer(answer)
    return any(normalised == normalize_answer(ref) for ref in _references(reference))


_EDGE_NON_WORD = re.compile(r"^[\W_]+|[\W_]+$")


def negp_normalize(text: str) -> str:
    """Lower case, VQA punctuation processing, single spaces, no surrounding quotes or marks.

    Unlike :func:`normalize_answer` it keeps number words and articles, so that "none" stays a
    pronoun instead of becoming the digit 0.
    """
    text = process_punctuation(text.replace("\n", " ").replace("\t", " ").strip().lower())
    return _EDGE_NON_WORD.sub("", " ".join(text.split()))


def is_negp_answer(answer: str, include_zero: bool = True) -> bool:
    """Is the whole answer a negative indefinite pronoun (:data:`NEGP_PRONOUNS`)?

    ``include_zero`` also accepts the Table 6 counting answers "zero" and "0".
    """
    allowed = NEGP_ANSWERS if include_zero else NEGP_PRONOUNS
    return negp_normalize(answer) in allowed


def normalize_relevance(value: Any) -> str | None:
    """Map a relevance label (canonical key or one of the paper's descriptors) to its key."""
    if value is None:
        return None
    key = " ".join(str(value).strip().lower().replace("-", " ").split())
    if key in _RELEVANCE_ALIASES:
        return _RELEVANCE_ALIASES[key]
    raise ValueError(
        f"unknown object-scene relevance {value!r}; expected one of {', '.join(RELEVANCE_LEVELS)}"
    )


# ---------------------------------------------------------------------------------------------
# METEOR 1.5 through pycocoevalcap
# ---------------------------------------------------------------------------------------------


class MeteorUnavailableError(RuntimeError):
    """METEOR cannot run here (no ``java`` on PATH, or the jar process died)."""


def _clean_segment(text: str) -> str:
    """METEOR's stdio protocol is line based and uses ``|||`` as separator."""
    return " ".join(text.replace("|||", " ").split())


class MeteorScorer:
    """A running METEOR 1.5 process (pycocoevalcap's jar); use as a context manager.

    Starting the JVM and loading the paraphrase table takes seconds, so one scorer should serve a
    whole evaluation. ``score`` returns one METEOR segment score per (hypothesis, references).
    """

    def __init__(self) -> None:
        if shutil.which("java") is None:
            raise MeteorUnavailableError(
                "METEOR needs a Java runtime: no 'java' on PATH. Install one (e.g. "
                "'apt-get install openjdk-17-jre-headless') or skip METEOR (--no-meteor)"
            )
        from pycocoevalcap.meteor.meteor import Meteor

        try:
            self._meteor: Any = Meteor()
        except OSError as err:  # pragma: no cover - java vanished between which() and Popen
            raise MeteorUnavailableError(f"could not start METEOR on Java: {err}") from None

    def score(self, pairs: Sequence[tuple[str, Sequence[str]]]) -> list[float]:
        """METEOR of each hypothesis against its references (empty hypothesis -> 0.0)."""
        if not pairs:
            return []
        gts: dict[int, list[str]] = {}
        res: dict[int, list[str]] = {}
        for index, (hypothesis, references) in enumerate(pairs):
            refs = [_clean_segment(r) for r in references]
            if not refs or not all(refs):
                raise ValueError(f"METEOR segment {index}: every reference must be non-empty")
            gts[index] = refs
            res[index] = [_clean_segment(hypothesis)]
        try:
            _, scores = self._meteor.compute_score(gts, res)
        except (ValueError, BrokenPipeError, OSError) as err:
            raise MeteorUnavailableError(
                f"the METEOR jar failed ({err}): {self._stderr_tail()}"
            ) from None
        if len(scores) != len(pairs) or not all(math.isfinite(s) for s in scores):
            raise MeteorUnavailableError(f"METEOR returned unusable scores: {scores[:5]}...")
        return [float(s) for s in scores]

    def _stderr_tail(self) -> str:
        process: subprocess.Popen = self._meteor.meteor_p
        if process.poll() is None:
            return "process still running"
        return process.stderr.read().decode("utf-8", "replace")[-2000:] or "no stderr"

    def close(self) -> None:
        """Stop the Java process (pycocoevalcap only stops it when garbage-collected)."""
        meteor = getattr(self, "_meteor", None)
        if meteor is None:
            return
        process: subprocess.Popen = meteor.meteor_p
        if process.poll() is None:
            try:
                process.stdin.close()
            except OSError:
                pass
            process.kill()
        process.wait()
        # pycocoevalcap's __del__ takes this lock; a failed compute_score leaves it held.
        meteor.lock = threading.Lock()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> MeteorScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------
# Scoring a set of answers
# ---------------------------------------------------------------------------------------------

_REQUIRED = ("question_id", "is_negp", "reference", "answer")


def validate_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """Check one answer record and return its clean form; errors name the question id and field.

    ``reference`` may be a string or a list of acceptable strings; ``relevance`` is mapped by
    :func:`normalize_relevance`; ``question_type`` and ``relevance`` may be absent or null.
    """
    if not isinstance(record, Mapping):
        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
    missing = [key for key in _REQUIRED if key not in record]
    if missing:
        raise ValueError(
            f"missing field(s) {', '.join(missing)}; expected question_id, question_type, "
            "relevance, is_negp, reference, answer"
        )
    qid = record["question_id"]
    where = f"question_id {qid!r}"
    if not isinstance(qid, (str, int)) or isinstance(qid, bool):
        raise ValueError(f"{where}: question_id must be a string or an integer")
    if not isinstance(record["is_negp"], bool):
        raise ValueError(f"{where}: is_negp must be true or false, got {record['is_negp']!r}")
    refs = record["reference"]
    refs = [refs] if isinstance(refs, str) else refs
    if (
        not isinstance(refs, list)
        or not refs
        or not all(isinstance(r, str) and r.strip() for r in refs)
    ):
        raise ValueError(f"{where}: reference must be a non-empty string or list of strings")
    if not isinstance(record["answer"], str):
        raise ValueError(f"{where}: answer must be a string, got {record['answer']!r}")
    qtype = record.get("question_type")
    if qtype is not None and not isinstance(qtype, str):
        raise ValueError(f"{where}: question_type must be a string or null, got {qtype!r}")
    try:
        relevance = normalize_relevance(record.get("relevance"))
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    return {
        "question_id": qid,
        "is_negp": record["is_negp"],
        "references": refs,
        "answer": record["answer"],
        "question_type": qtype,
        "relevance": relevance,
    }


def _summary(rows: list[dict[str, Any]], negp: bool, with_meteor: bool) -> dict[str, Any]:
    """Means of the per-answer scores of ``rows`` (``None`` for an empty group)."""
    n = len(rows)
    out: dict[str, Any] = {"n": n}
    out["accuracy"] = sum(r["exact_match"] for r in rows) / n if n else None
    if with_meteor:
        out["meteor"] = sum(r["meteor"] for r in rows) / n if n else None
    if negp:
        out["negp_accuracy"] = sum(r["negp_answer"] for r in rows) / n if n else None
    return out


def _group(rows: list[dict[str, Any]], key: str, negp: bool, meteor: bool) -> dict[str, Any]:
    """Breakdown by ``key``; rows whose value is null are left out (they have no such label)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row[key] is not None:
            groups.setdefault(row[key], []).append(row)
    return {name: _summary(groups[name], negp, meteor) for name in sorted(groups)}


def _section(rows: list[dict[str, Any]], negp: bool, meteor: bool) -> dict[str, Any]:
    section = _summary(rows, negp, meteor)
    section["by_question_type"] = _group(rows, "question_type", negp, meteor)
    section["by_relevance"] = _group(rows, "relevance", negp, meteor)
    return section


def score_answers(
    records: Iterable[Mapping[str, Any]],
    *,
    meteor: bool | MeteorScorer = True,
    negp_include_zero: bool = True,
    per_answer: bool = True,
) -> dict[str, Any]:
    """Score VQA answers the NOPE way (see the module docstring for every definition).

    ``records`` carry ``question_id``, ``question_type`` (str or null), ``relevance`` (one of
    :data:`RELEVANCE_LEVELS`, a paper descriptor, or null), ``is_negp`` (the ground truth is a
    NegP), ``reference`` (str or list of acceptable strings) and ``answer`` (the model's text).
    ``meteor``: ``True`` starts a :class:`MeteorScorer` (Java required), ``False`` leaves METEOR
    out, or pass a running scorer to reuse it. Returns ``{"overall", "negp", "non_negp",
    "definitions", "answers"}``; ``negp`` adds ``negp_accuracy``; each section has ``n``,
    ``accuracy``, ``meteor`` and ``by_question_type`` / ``by_relevance`` breakdowns.
    """
    checked = []
    seen: set[Any] = set()
    for index, record in enumerate(records):
        try:
            row = validate_record(record)
        except ValueError as err:
            raise ValueError(f"record {index + 1}: {err}") from None
        if row["question_id"] in seen:
            raise ValueError(
                f"record {index + 1}: duplicate question_id {row['question_id']!r}; each question "
                "must be scored once"
            )
        seen.add(row["question_id"])
        checked.append(row)

    rows: list[dict[str, Any]] = []
    for row in checked:
        norm_answer = normalize_answer(row["answer"])
        norm_refs = [normalize_answer(ref) for ref in row["references"]]
        rows.append(
            {
                "question_id": row["question_id"],
                "question_type": row["question_type"],
                "relevance": row["relevance"],
                "is_negp": row["is_negp"],
                "normalized_answer": norm_answer,
                "normalized_reference": norm_refs,
                "exact_match": int(norm_answer in norm_refs),
                "negp_answer": int(is_negp_answer(row["answer"], negp_include_zero)),
            }
        )

    with_meteor = meteor is not False
    if with_meteor:
        # A reference that normalises to nothing (e.g. "the") is scored on its raw text instead.
        pairs = [
            (
                row["normalized_answer"],
                [
                    n or raw.strip()
                    for n, raw in zip(row["normalized_reference"], raw_refs, strict=True)
                ],
            )
            for row, raw_refs in zip(rows, (c["references"] for c in checked), strict=True)
        ]
        if isinstance(meteor, MeteorScorer):
            scores = meteor.score(pairs)
        else:
            with MeteorScorer() as scorer:
                scores = scorer.score(pairs)
        for row, value in zip(rows, scores, strict=True):
            row["meteor"] = value

    negp_rows = [r for r in rows if r["is_negp"]]
    other_rows = [r for r in rows if not r["is_negp"]]
    answers = []
    if per_answer:
        for row in rows:
            entry = dict(row)
            if not row["is_negp"]:
                entry.pop("negp_answer")
            answers.append(entry)
    return {
        "overall": _section(rows, False, with_meteor),
        "negp": _section(negp_rows, True, with_meteor),
        "non_negp": _section(other_rows, False, with_meteor),
        "definitions": {
            "accuracy": "exact match after the official VQA answer normalisation "
            "(processPunctuation + processDigitArticle) of answer and reference",
            "meteor": (
                "mean of per-answer METEOR 1.5 segment scores (pycocoevalcap jar, -l en -norm) "
                "on the VQA-normalised strings"
                if with_meteor
                else "not computed"
            ),
            "negp_accuracy": "the whole answer is a negative indefinite pronoun",
            "negp_answers": list(NEGP_ANSWERS if negp_include_zero else NEGP_PRONOUNS),
            "relevance_levels": list(RELEVANCE_LEVELS),
            "scale": "fractions in [0, 1]",
        },
        "answers": answers,
    }
