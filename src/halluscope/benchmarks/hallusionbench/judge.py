"""The rule-based judge: VLMEvalKit's yes/no extraction, then the reference's three verdicts.

Why a rule judge: the reference (``utils.py``, ``evaluate_by_chatgpt``) asks GPT-4 whether a
free-text answer agrees with the reference answer; VLMEvalKit first extracts yes / no by rule
and calls a model only when the rule finds neither. The rule alone needs no key and no model,
and is deterministic.

How words are matched (VLMEvalKit's ``process_punctuation`` + ``YOrN_Extraction``, reproduced
with their quirks, since they decide which answers count):

1. the answer is lower-cased;
2. each of the 21 marks ``; / [ ] " { } ( ) = + \\ _ - > < @ ` , ? !`` in turn is deleted
   everywhere when the lower-cased answer has it before or after a space, or has a comma
   between two digits anywhere, and is replaced by a space otherwise (the test reads the
   lower-cased answer, not the text as edited so far);
3. every ``.`` not followed by a digit is deleted, the first 32 only (VLMEvalKit passes
   ``re.UNICODE``, 32, as ``re.sub``'s ``count``);
4. the text is split at whitespace; a word is ``yes`` or ``no`` only when it is exactly that
   token, so ``no.`` past the 32nd period, ``yes:``, ``'yes'``, ``**yes**``, ``yes\u2019``,
   ``not`` and ``nope`` are not yes / no;
5. ``yes`` present and ``no`` absent: yes; ``no`` present and ``yes`` absent: no; both or
   neither: uncertain.
"""

from __future__ import annotations

import re

#: The marks of step 2, in VLMEvalKit's order.
PUNCTUATION = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<",
               "@", "`", ",", "?", "!")  # fmt: skip
_DIGIT_COMMA = re.compile(r"(\d)(,)(\d)")
# VLMEvalKit's (?!<=\d)(\.)(?!\d): its first look-ahead never fails at a period
_PERIOD = re.compile(r"\.(?!\d)")
_PERIOD_LIMIT = int(re.UNICODE)  # 32: the count VLMEvalKit passes by position

YES, NO, UNCERTAIN = "yes", "no", "uncertain"

#: The reference's verdict codes (``gpt4v_output_gpt_check``): "0" wrong, "1" correct,
#: "2" uncertain.
WRONG, CORRECT, UNSURE = 0, 1, 2


def words(answer: str) -> list[str]:
    """The answer's words as the extraction sees them (steps 1-4 of the module docstring)."""
    text = answer.lower()
    out = text
    digit_comma = _DIGIT_COMMA.search(text) is not None
    for mark in PUNCTUATION:
        if mark + " " in text or " " + mark in text or digit_comma:
            out = out.replace(mark, "")
        else:
            out = out.replace(mark, " ")
    out = _PERIOD.sub("", out, count=_PERIOD_LIMIT)
    return out.split()


def extract(answer: str) -> str:
    """``yes``, ``no`` or ``uncertain`` (step 5)."""
    found = set(words(answer))
    if "yes" in found and "no" not in found:
        return YES
    if "no" in found and "yes" not in found:
        return NO
    return UNCERTAIN


def verdict(answer: str, gt_answer: str) -> int:
    """The reference's verdict of one answer against ``gt_answer`` ("1" yes, "0" no):
    :data:`CORRECT` when the extracted word is the truth, :data:`WRONG` when it is the other
    one, :data:`UNSURE` when neither or both were found."""
    said = extract(answer)
    if said == UNCERTAIN:
        return UNSURE
    return CORRECT if (said == YES) == (gt_answer == "1") else WRONG


def same(answer: str, other: str) -> bool:
    """Whether two answers give the same yes / no (the "same" check of the failure analysis).

    Our reading: the reference asks GPT-4 whether the two responses conflict; by rule, two
    answers agree when both extract to the same word, and an uncertain one agrees with none
    (the reference's default verdict, "0", when GPT-4 says neither same nor different)."""
    said = extract(answer)
    return said != UNCERTAIN and said == extract(other)
