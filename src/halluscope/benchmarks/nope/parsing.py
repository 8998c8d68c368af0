"""Reading the LLM's replies: the listed objects (step 1) and the paraphrases (step 4).

Also the stop rules that end those replies early (``nope.llm.stop_rule``; request params
``stop_rule`` + ``stop_items``, applied by the ``llamacpp`` backend while it streams, see
:mod:`halluscope.models.stop_rules`). They act on numbered lists only (a reply without a
``N.`` mark so far goes on) and cut where the parse of the cut reply equals the parse of
every longer reply in its first ``stop_items`` entries: an entry counts once its first line is
final (a newline or the next mark follows it).

- ``nope-objects`` (:func:`listing_cut`): the listing ends after the entry that makes
  ``stop_items`` distinct usable names (:func:`parse_object_list` of the cut reply = the first
  ``stop_items`` names of the uncut one);
- ``nope-objects-repeat`` (:func:`listing_repeat_cut`): that, or before the first entry whose
  name repeats an earlier one (the uncut reply may list new names after it; those are lost);
- ``nope-questions`` (:func:`questions_cut`): the rewrite ends once the paraphrases 1 to
  ``stop_items`` are all read (:func:`parse_questions` gives the same list).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MAX_OBJECT_WORDS = 5
"""A listed "object" longer than this is a sentence, not an object name; it is dropped."""

# ---------------------------------------------------------------------------------------------
# Parsing the LLM's lists
# ---------------------------------------------------------------------------------------------

_NUMBER_MARK = re.compile(r"(?:^|(?<=\s))(\d{1,2})\s*[.):]\s+")
_BULLET = re.compile(r"^\s*(?:[-*\u2022\u2023\u25e6]|\d{1,2}\s*[.):])\s*")
_MARKUP = re.compile(r"[*_`#]+")
_PAREN = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_DESCRIPTION = re.compile(r"\s*(?::|\s[-\u2013\u2014]\s).*$")
_LEADING_ARTICLE = re.compile(r"^(?:(?:and|but|or|also|plus|a|an|the|some)\s+)+", re.IGNORECASE)


_NOT_OBJECTS = frozenset({"and", "or", "etc", "other", "others", "more", "some", "none", "nothing"})
"""Entries that are list filler, not object names."""

_SENTENCE_WORDS = frozenset({"is", "are", "was", "were", "be", "been", "not", "i", "you", "it"})
"""Words that mark an entry as a sentence ("The sandcastle is not a person"), not an object."""


def _numbered_items(text: str) -> list[tuple[int, str]]:
    """``(number, text)`` for each ``N.`` / ``N)`` item, inline or one per line."""
    marks = list(_NUMBER_MARK.finditer(text))
    items = []
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(text)
        items.append((int(mark.group(1)), text[mark.end() : end]))
    return items


def _clean_object(raw: str) -> str:
    """One list entry -> a lower-case object name ("" when nothing usable is left)."""
    text = raw.split("\n", 1)[0]
    text = _MARKUP.sub("", text)
    text = _PAREN.sub(" ", text)
    text = _DESCRIPTION.sub("", text)
    text = text.strip().strip(" ,;.!?\"'").strip()
    text = _LEADING_ARTICLE.sub("", text)
    return " ".join(text.lower().split())


def _usable(name: str) -> bool:
    """Whether a cleaned entry is an object name (see :func:`parse_object_list`)."""
    words = name.split()
    return not (
        not re.search(r"[a-z]", name)
        or name in _NOT_OBJECTS
        or len(words) > MAX_OBJECT_WORDS
        or _SENTENCE_WORDS.intersection(words)
    )


def parse_object_list(text: str, limit: int | None = None) -> list[str]:
    """Object names from an LLM answer, in order, de-duplicated, at most ``limit``.

    Accepts "1. Spices, 2. Canned fruits, ..." on one line (the paper's example), one item per
    line (numbered or bulleted) and plain comma-separated lists (also on a line of their own).
    Descriptions after ":" or " - ", parentheses, markdown and leading articles are removed;
    entries with more than :data:`MAX_OBJECT_WORDS` words, without a letter, list filler
    ("etc", "others") or with a sentence word ("is", "not"...) are dropped; a preamble
    ("Sure! Here are...:") is ignored when the list is numbered.
    """
    numbered = _numbered_items(text)
    if numbered:
        raw = [item for _, item in numbered]
    else:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) > 1 and sum(bool(_BULLET.match(line)) for line in lines) > 0:
            raw = [_BULLET.sub("", line) for line in lines if _BULLET.match(line)]
        elif len(lines) > 1:
            # one object per line, or a comma list under a preamble ("... are:\n\nA, b, c")
            raw = [
                part
                for line in lines
                if not line.rstrip().endswith(":")
                for part in (line.split(",") if "," in line else [line])
            ]
        else:
            line = lines[0] if lines else ""
            line = line.split(":", 1)[1] if ":" in line else line
            raw = line.split(",")
    out: list[str] = []
    for entry in raw:
        name = _clean_object(entry)
        if not _usable(name):
            continue
        if name not in out:
            out.append(name)
        if limit is not None and len(out) >= limit:
            break
    return out


def parse_questions(text: str, expected: int) -> list[str | None]:
    """The paraphrases aligned with the ``expected`` reference questions (``None`` = missing).

    Numbered items are placed by their number (1-based); without numbers, non-empty lines (bullets
    stripped) are taken in order. Each item is cut after its first line and its first "?" (small
    models append "The answer is ..." to the question).
    """

    def first_question(item: str) -> str:
        line = _MARKUP.sub("", item.strip().split("\n", 1)[0]).strip()
        return line[: line.index("?") + 1] if "?" in line else line

    out: list[str | None] = [None] * expected
    numbered = _numbered_items(text)
    if numbered:
        for number, item in numbered:
            line = first_question(item)
            if 1 <= number <= expected and out[number - 1] is None and line:
                out[number - 1] = line
        return out
    lines = [first_question(_BULLET.sub("", line)) for line in text.splitlines()]
    lines = [line for line in lines if line and not line.endswith(":")]
    for index, line in enumerate(lines[:expected]):
        out[index] = line
    return out


# ---------------------------------------------------------------------------------------------
# Stop rules (see the module docstring)
# ---------------------------------------------------------------------------------------------


def _final_items(text: str) -> list[tuple[int, str, int, int]]:
    """The numbered items of ``text`` whose first line is final, in order: ``(number, item text,
    start of its mark, end of its first line)``. Only the last item can still be open."""
    marks = list(_NUMBER_MARK.finditer(text))
    out = []
    for index, mark in enumerate(marks):
        last = index + 1 == len(marks)
        end = len(text) if last else marks[index + 1].start()
        body = text[mark.end() : end]
        newline = body.find("\n")
        if newline >= 0:
            out.append((int(mark.group(1)), body, mark.start(), mark.end() + newline))
        elif not last:
            out.append((int(mark.group(1)), body, mark.start(), end))
    return out


def _listing_cut(text: str, params: Mapping[str, Any] | None, repeat: bool) -> str | None:
    wanted = int((params or {}).get("stop_items") or 0)
    names: list[str] = []
    for _, body, start, line_end in _final_items(text):
        name = _clean_object(body)
        if not _usable(name):
            continue
        if name in names:
            if repeat:
                return text[:start].rstrip()
            continue
        names.append(name)
        if wanted and len(names) >= wanted:
            return text[:line_end].rstrip()
    return None


def listing_cut(
    text: str, final: bool = False, params: Mapping[str, Any] | None = None
) -> str | None:
    """The ``nope-objects`` stop rule: the numbered listing up to the end of the entry that
    makes ``params["stop_items"]`` distinct usable names; ``None`` before (and at the cap)."""
    return _listing_cut(text, params, repeat=False)


def listing_repeat_cut(
    text: str, final: bool = False, params: Mapping[str, Any] | None = None
) -> str | None:
    """The ``nope-objects-repeat`` stop rule: :func:`listing_cut`, or the listing before the
    first entry whose name repeats an earlier entry's, whichever comes first."""
    return _listing_cut(text, params, repeat=True)


def questions_cut(
    text: str, final: bool = False, params: Mapping[str, Any] | None = None
) -> str | None:
    """The ``nope-questions`` stop rule: the rewrite as soon as the numbered paraphrases 1 to
    ``params["stop_items"]`` are all read (each first line final, or cut at its "?" as
    :func:`parse_questions` cuts it); ``None`` before."""
    wanted = int((params or {}).get("stop_items") or 0)
    marks = list(_NUMBER_MARK.finditer(text))
    if wanted < 1 or not marks:
        return None
    filled = [False] * wanted
    for index, mark in enumerate(marks):
        last = index + 1 == len(marks)
        # the mark ate the white space after it: a newline in the item ends its first line
        body = text[mark.end() : len(text) if last else marks[index + 1].start()]
        first = body.split("\n", 1)[0]
        if last and "\n" not in body and "?" not in first:
            break  # this line may still grow
        number = int(mark.group(1))
        line = _MARKUP.sub("", first).strip()
        if 1 <= number <= wanted and line:
            filled[number - 1] = True
    return text.rstrip() if all(filled) else None
