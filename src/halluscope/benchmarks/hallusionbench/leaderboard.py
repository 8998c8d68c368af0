"""The published numbers of a model, set beside ours: what a reader compares a run with.

Why a module: users of the other harnesses cannot reconcile their local numbers with the
leaderboard (VLMEvalKit issues 825 and 595). The published numbers are over all 1,129
questions, judged by GPT-4 (or by hand); a run here may score a subset with another judge. So
each published row comes with our numbers, the difference, and the subset we scored, stated.

Two published tables at the pinned upstream commit (``tianyi-lab/HallusionBench@744007c``):

- ``leaderboard.json`` (registered, read at run time): aAcc, fAcc, qAcc and their mean
  ("overall") of the 9 newest models;
- the README's leaderboard table (not a registered file: its rows are :data:`README_ROWS`,
  copied from it): qAcc, fAcc, "Easy" and "Hard Question Acc" (``easy_aAcc`` / ``hard_aAcc``,
  pair accuracies, see docs/hallusionbench.md) and aAcc of 19 rows, GPT-4V among them, some
  models twice (GPT Eval and Human Eval).

The answers file is a known model's when the user names the model (``--model``) or when it is
byte for byte the registered public sample (GPT-4V's answers, :data:`KNOWN_ANSWERS`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from halluscope.io import InputError

UPSTREAM = "tianyi-lab/HallusionBench@744007c"
METRICS = ("aAcc", "fAcc", "qAcc", "easy_aAcc", "hard_aAcc")

#: (model, version, evaluation, aAcc, fAcc, qAcc, easy_aAcc, hard_aAcc): the README's table
#: at the pinned commit (its columns: Question Pair Acc, Figure Acc, Easy Question Acc, Hard
#: Question Acc, Question Acc), in its order.
README_ROWS: tuple[tuple[str, str, str, float, float, float, float, float], ...] = (
    ("GPT4V", "Sep 25, 2023 Version", "Human Eval", 67.58, 44.22, 31.42, 79.56, 38.37),
    ("GPT4V", "Sep 25, 2023 Version", "GPT Eval", 65.28, 39.88, 28.79, 75.60, 37.67),
    ("Claude 3", "", "GPT Eval", 56.86, 28.61, 21.76, 55.16, 41.40),
    ("LLaVA-1.5", "", "Human Eval", 47.12, 25.43, 9.45, 50.77, 29.07),
    ("LLaVA-1.5", "", "GPT Eval", 46.94, 24.86, 10.55, 49.67, 29.77),
    ("Gemini Pro Vision", "Dec, 2023 Version", "GPT Eval", 36.85, 8.67, 7.69, 35.60, 30.23),
    ("GUA_VL", "", "GPT Eval", 51.82, 23.12, 16.70, 53.63, 39.77),
    ("BLIP2-T5", "", "GPT Eval", 48.09, 20.52, 15.16, 45.49, 43.49),
    ("Qwen-VL", "", "GPT Eval", 39.15, 6.65, 5.93, 31.43, 24.88),
    ("Open-Flamingo", "", "GPT Eval", 38.44, 11.27, 6.37, 39.56, 27.21),
    ("MiniGPT5", "", "GPT Eval", 40.30, 9.83, 10.55, 36.04, 28.37),
    ("MiniGPT4", "", "GPT Eval", 35.78, 10.12, 8.79, 31.87, 27.67),
    ("InstructBLIP", "", "GPT Eval", 45.26, 10.11, 9.45, 35.60, 45.12),
    ("BLIP2", "", "GPT Eval", 40.48, 12.43, 5.05, 33.85, 40.70),
    ("mPLUG_Owl-v2", "", "GPT Eval", 47.30, 19.94, 13.85, 44.84, 39.07),
    ("mPLUG_Owl-v1", "", "GPT Eval", 43.93, 10.40, 9.45, 39.34, 29.77),
    ("LRV_Instruction", "", "GPT Eval", 42.78, 13.01, 8.79, 39.78, 27.44),
    ("ViLT", "", "GPT Eval", 44.4641, 11.2717, 8.3516, 37.8022, 45.3488),
    ("GiT", "", "GPT Eval", 34.37, 6.36, 5.27, 26.81, 31.86),
)  # fmt: skip

#: sha256 of an answers file -> the model that gave its answers (the registered public sample).
KNOWN_ANSWERS: dict[str, str] = {
    "d7152ae3a961f50d3ec7eeee6863aedcbea18fdff3ff0342ffe3e07880870666": "GPT4V",
}


def _norm(name: str) -> str:
    """A model name as names are matched: lower case, letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def readme_rows() -> list[dict[str, Any]]:
    """:data:`README_ROWS` as records."""
    return [
        {"model": m, "version": v or None, "evaluation": e, "source": f"{UPSTREAM} README.md",
         **dict(zip(METRICS, values, strict=True))}
        for m, v, e, *values in README_ROWS
    ]  # fmt: skip


def leaderboard_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of ``leaderboard.json``; a file in another shape is an error naming it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise InputError(f"{path}: not a readable leaderboard.json ({err})") from None
    out = []
    for number, row in enumerate(data if isinstance(data, list) else [None], start=1):
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("model"), str)
            or any(not isinstance(row.get(k), int | float) for k in ("aAcc", "fAcc", "qAcc"))
        ):
            raise InputError(f'{path}: record {number}: expected {{"model", "aAcc", "fAcc", '
                             '"qAcc", ...}} (leaderboard.json)')  # fmt: skip
        out.append({
            "model": row["model"], "date": row.get("date"), "rank": row.get("rank"),
            "evaluation": None, "source": f"{UPSTREAM} leaderboard.json",
            **{k: row[k] for k in ("aAcc", "fAcc", "qAcc", "overall") if k in row},
        })  # fmt: skip
    return out


def known_model(answers_path: Path) -> str | None:
    """The model whose published answers ``answers_path`` is, byte for byte (or None)."""
    from halluscope.io import sha256_file

    return KNOWN_ANSWERS.get(sha256_file(answers_path))


def published(model: str, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows of ``model`` (matched ignoring case, spaces and punctuation: ``gpt-4v`` is
    ``GPT4V``); none is an error listing the names there are."""
    found = [dict(r) for r in rows if _norm(str(r["model"])) == _norm(model)]
    if not found:
        names = sorted({str(r["model"]) for r in rows}, key=str.lower)
        raise InputError(f"--model {model!r}: no published HallusionBench numbers for it; "
                         f"models with published numbers: {', '.join(names)}")  # fmt: skip
    return found


def comparison(
    doc: Mapping[str, Any], model: str, how: str, rows: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Our numbers beside ``model``'s published ones, the difference (ours minus published,
    percentage points) and the statement of what each covers. ``how`` says why the answers
    are taken as that model's."""
    full = doc["n_scored"] == doc["n_questions"]
    entries = []
    for row in published(model, rows):
        metrics = [m for m in (*METRICS, "overall") if m in row]
        ours = {m: _ours(doc, m) for m in metrics}
        entries.append({
            **row,
            "ours": ours,
            "difference": {m: None if ours[m] is None else round(ours[m] - row[m], 4)
                           for m in metrics},
        })  # fmt: skip
    note = (
        f"ours: {doc['subset']}, judge {doc['judge']}; published: all {doc['n_questions']} "
        "questions, each row judged as its evaluation says (GPT Eval: GPT-4, Human Eval: by "
        "hand, null: leaderboard.json does not say)"
    )
    if not full:
        note += (
            f". The published numbers are over the full set and ours over {doc['n_scored']} "
            f"of {doc['n_questions']} questions: not comparable one to one"
        )
    return {
        "model": model,
        "why": how,
        "ours_cover": doc["subset"],
        "same_questions": full,
        "note": note,
        "published": entries,
    }


def _ours(doc: Mapping[str, Any], metric: str) -> float | None:
    """Our value of a published column; ``overall`` is the mean of aAcc, fAcc and qAcc, as
    leaderboard.json's is (e.g. MiMo-VL-7B: (75.8 + 59.5 + 56.0) / 3 = 63.77, published 63.8)."""
    if metric != "overall":
        return doc[metric]
    values = [doc[m] for m in ("aAcc", "fAcc", "qAcc")]
    return None if None in values else round(sum(values) / 3, 4)
