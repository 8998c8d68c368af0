"""PhD Index (Liu et al., CVPR 2025) and the yes/no answer parser it needs.

PhD asks every item twice, once with a question whose answer is yes and once with one whose
answer is no. For a set of answers:

* ``recall_yes`` = answers parsed "yes" among questions labelled yes / questions labelled yes;
* ``recall_no`` = answers parsed "no" among questions labelled no / questions labelled no;
* PhD Index (field ``overall``) = ``2 * recall_yes * recall_no / (recall_yes + recall_no)``,
  the harmonic mean of the two recalls (upstream README, "Metric"), 0 when both are 0; a model
  that always says yes (or always no) scores 0. It is ``None`` when the set has no question of
  one of the labels (a recall is undefined);
* ``yes_ratio`` = answers parsed "yes" / all answers (unparsed ones included);
* ``unparsed`` = answers the parser could not read. They count as wrong: they stay in the
  recall denominators and are never a yes or a no.

Scores are fractions in [0, 1], as the paper reports them. ``overall`` pools every answer of the
set; :func:`phd_report` also gives each mode, each task and each mode x task, and
``mean_over_modes`` (the unweighted mean of the per-mode indices).

Parser (upstream publishes none), :data:`PARSER_NAME`: lower-case the answer; (1) if its first
word (letters only, punctuation and markdown ignored) is ``yes`` or ``no``, that is the answer;
(2) otherwise, if the first sentence (up to the first ``.``, ``!`` or ``?`` followed by a space,
or the first line break) contains the whole word ``yes`` or the whole word ``no`` but not both,
that is the answer; (3) otherwise the answer is unparsed. Why: PhD questions are yes/no and
instruction-tuned models nearly always open with the word, so (1) decides almost every answer
without reading content; (2) catches "Answer: No." and "There is no dog in the image."; unlike
POPE's original rule, nothing defaults to yes, so a model that rambles is not rewarded with the
"yes" recall, and how often the parser gave up is reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

PARSER_NAME = "first-word-then-first-sentence"

_WORD = re.compile(r"[a-z]+")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_YES_NO = re.compile(r"\b(yes|no)\b")


def parse_yes_no(answer: str | None) -> Literal["yes", "no"] | None:
    """``"yes"``, ``"no"`` or ``None`` (unparsed), by the rule in the module docstring."""
    if not answer:
        return None
    text = answer.lower()
    first = _WORD.search(text)
    if first is None:
        return None
    if first.group() in ("yes", "no"):
        return first.group()  # type: ignore[return-value]
    end = _SENTENCE_END.search(text)
    sentence = text[: end.start()] if end else text
    found = set(_YES_NO.findall(sentence))
    if len(found) == 1:
        return found.pop()  # type: ignore[return-value]
    return None


@dataclass(frozen=True)
class PhdAnswer:
    """One answered PhD question."""

    id: str
    mode: str
    task: str
    label: Literal["yes", "no"]
    answer: str

    @property
    def prediction(self) -> Literal["yes", "no"] | None:
        return parse_yes_no(self.answer)


def phd_index(recall_yes: float | None, recall_no: float | None) -> float | None:
    """Harmonic mean of the two recalls; 0 when both are 0, ``None`` if one is undefined."""
    if recall_yes is None or recall_no is None:
        return None
    total = recall_yes + recall_no
    return 0.0 if total == 0 else 2 * recall_yes * recall_no / total


def phd_scores(pairs: Iterable[tuple[str, str | None]]) -> dict[str, Any]:
    """Scores of (label, prediction) pairs: overall (PhD Index), recalls, yes_ratio, counts."""
    n = n_yes = n_no = hit_yes = hit_no = said_yes = unparsed = 0
    for label, pred in pairs:
        if label not in ("yes", "no"):
            raise ValueError(f"label must be 'yes' or 'no', got {label!r}")
        n += 1
        said_yes += pred == "yes"
        unparsed += pred is None
        if label == "yes":
            n_yes += 1
            hit_yes += pred == "yes"
        else:
            n_no += 1
            hit_no += pred == "no"
    recall_yes = hit_yes / n_yes if n_yes else None
    recall_no = hit_no / n_no if n_no else None
    return {
        "overall": phd_index(recall_yes, recall_no),
        "recall_yes": recall_yes,
        "recall_no": recall_no,
        "yes_ratio": said_yes / n if n else None,
        "n": n,
        "n_yes": n_yes,
        "n_no": n_no,
        "unparsed": unparsed,
    }


def phd_report(answers: list[PhdAnswer]) -> dict[str, Any]:
    """Overall, per mode, per task and per mode x task (nested ``{mode: {task: ...}}``)."""
    preds = [(a, a.prediction) for a in answers]
    modes = sorted({a.mode for a in answers})
    tasks = sorted({a.task for a in answers})

    def scores(keep) -> dict[str, Any]:
        return phd_scores((a.label, p) for a, p in preds if keep(a))

    report = scores(lambda a: True)
    report["by_mode"] = {m: scores(lambda a, m=m: a.mode == m) for m in modes}
    report["by_task"] = {t: scores(lambda a, t=t: a.task == t) for t in tasks}
    report["by_mode_task"] = {
        m: {
            t: scores(lambda a, m=m, t=t: a.mode == m and a.task == t)
            for t in tasks
            if any(a.mode == m and a.task == t for a in answers)
        }
        for m in modes
    }
    per_mode = [report["by_mode"][m]["overall"] for m in modes]
    report["mean_over_modes"] = (
        sum(per_mode) / len(per_mode) if per_mode and None not in per_mode else None
    )
    report["parser"] = PARSER_NAME
    return report
