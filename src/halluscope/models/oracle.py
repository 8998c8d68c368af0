"""The LVLM-ensemble oracle of CAOS (section "Oracle using an ensemble of LVLMs", step 5).

Why: out-of-domain objects have no ground-truth labels, so CAOS asks several LVLMs, for each such
object and the image, "Does the image contain <object>? Please respond with only Present or
Absent." and takes the majority vote, breaking ties in favour of *absence* "to minimize false
positives and penalize potential hallucinations".

Here:

- every member is a backend built from a ``params.yaml`` model id; all questions go through the
  :class:`~halluscope.models.cache.ResponseCache` (``task="oracle"``), so reruns are free and a
  killed run resumes;
- :func:`parse_vote` reads a reply robustly (present/absent, yes/no and a few variants; case,
  punctuation and a leading "Answer:" ignored; first word first). A reply it cannot read is *no
  vote* and is counted, never guessed;
- :func:`majority`: Present only when Present votes outnumber Absent votes; ties, including no
  votes at all, are Absent;
- every member's vote (``true``/``false``/``null``) and raw answer are stored with the decision;
- :func:`accuracy_report`: when labels exist (the demo's annotated ``other_objects``), accuracy per
  member and for the ensemble. The paper reports 93.43 % for its ensemble against 84.94-89.57 %
  for the single LVLMs on 259 hand-labelled objects.

Items without an image cannot be asked; their objects stay unverified (``present: null``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from halluscope.models.answers import answer_all
from halluscope.models.base import Backend, Request, image_request, item_answer_key
from halluscope.models.cache import ResponseCache
from halluscope.objects.normalize import lemmatize, singularize

QUESTION = "Does the image contain {object}? Please respond with only Present or Absent."
"""The CAOS oracle query, verbatim from the paper."""

TEMPLATE_VERSION = "caos-oracle-1"
"""Bump when :data:`QUESTION` changes (appended to the params ``template_version``)."""

PRESENT_WORDS = frozenset({"present", "yes", "yeah", "yep", "true", "contains", "visible"})
ABSENT_WORDS = frozenset({"absent", "no", "nope", "false", "not", "none", "missing"})

_WORDS = re.compile(r"[a-z]+")
_ECHO = re.compile(r"\b(present or absent|absent or present|yes or no|no or yes)\b")
_PREFIX = re.compile(r"^\s*(?:answer|response|assistant|a)\s*[:\-]\s*", re.IGNORECASE)


def question(name: str) -> str:
    """The oracle question for one object."""
    return QUESTION.format(object=name)


def parse_vote(text: Any) -> bool | None:
    """``True`` (Present), ``False`` (Absent) or ``None`` (no vote) for one member's reply.

    A reply that echoes the options ("Present or Absent") is no vote. Otherwise the first word
    decides when it is a known present/absent word ("Present.", "absent", "**Yes**, ...",
    "No, it is not"); else the reply counts only if it contains exactly one of
    "present"/"absent", negated or not ("The object is present" -> ``True``, "It is not
    present" -> ``False``).
    """
    if not isinstance(text, str):
        return None
    words = _WORDS.findall(_PREFIX.sub("", text.strip()).lower())
    if not words or _ECHO.search(" ".join(words)):
        return None
    if words[0] in PRESENT_WORDS:
        return True
    if words[0] in ABSENT_WORDS:
        return False
    has_present, has_absent = "present" in words, "absent" in words
    if has_present == has_absent:
        return None
    if has_absent:
        return False
    index = words.index("present")
    if index > 0 and words[index - 1] in ("not", "no", "never"):
        return False
    return True


def majority(votes: Iterable[bool | None]) -> bool:
    """Present iff Present votes outnumber Absent votes; ties (and no votes) are Absent."""
    values = list(votes)
    return sum(v is True for v in values) > sum(v is False for v in values)


def oracle_request(
    item: Mapping[str, Any], name: str, member: str, params: Mapping[str, Any]
) -> Request:
    """One member's question about one object of one image (image by path + content hash;
    the image's annotations as the answer key, for the backends that read one)."""
    return image_request(
        item,
        f"oracle/{member}/{item['image_id']}/{name}",
        question(name),
        params=params,
        task="oracle",
        meta={"object": name},
        answer_key=item_answer_key(item),
    )


def _forms(name: str) -> set[str]:
    words = name.lower().split()
    if not words:
        return set()
    head = words[-1]
    return {" ".join([*words[:-1], form]) for form in (head, singularize(head), lemmatize(head))}


def label(item: Mapping[str, Any], name: str) -> bool | None:
    """Whether ``name`` is annotated as present in ``item`` (``None``: the item has no labels).

    Labels exist when the item lists ``other_objects`` (the demo annotations list every clearly
    visible object, so an object not listed is absent). Plural and singular forms match.
    """
    others = item.get("other_objects")
    if not isinstance(others, list):
        return None
    known = set()
    for obj in [*others, *(item.get("gt_objects") or [])]:
        known |= _forms(str(obj))
    return bool(_forms(name) & known)


class EnsembleOracle:
    """Ask every member about every (image, object) pair and take the majority vote."""

    def __init__(
        self,
        members: Mapping[str, Backend],
        cache: ResponseCache,
        params: Mapping[str, Any] | None = None,
        template_version: str = "v1",
        batch_size: int = 16,
    ) -> None:
        if not members:
            raise ValueError("oracle.members: the ensemble needs at least one member")
        self.members = dict(members)
        self.cache = cache
        self.params = dict(params or {})
        self.template_version = f"{template_version}/{TEMPLATE_VERSION}"
        self.batch_size = batch_size
        self.unparsed: dict[str, int] = {m: 0 for m in self.members}

    def decide(
        self, items: Mapping[str, Mapping[str, Any]], pairs: Sequence[tuple[str, str]]
    ) -> list[dict[str, Any]]:
        """One decision record per (image id, object name), in the given order.

        Records: ``{"image_id", "name", "present", "votes": {member: bool|null},
        "answers": {member: text}, "method": "ensemble"}``; imageless items give
        ``present: null`` and no votes.
        """
        askable = [
            (i, n) for i, n in pairs if items[i].get("image") or items[i].get("image_sha256")
        ]
        votes: dict[tuple[str, str], dict[str, bool | None]] = {p: {} for p in askable}
        answers: dict[tuple[str, str], dict[str, str]] = {p: {} for p in askable}
        for member, backend in sorted(self.members.items()):
            requests = [oracle_request(items[i], n, member, self.params) for i, n in askable]
            responses = answer_all(
                backend,
                requests,
                self.cache,
                self.template_version,
                batch_size=self.batch_size,
                what="questions",
                context=f" for oracle member {member!r}",
                progress=f"questions to {member}",  # one summary per member, told apart
            )
            for pair, response in zip(askable, responses, strict=True):
                vote = parse_vote(response.text)
                if vote is None:
                    self.unparsed[member] += 1
                votes[pair][member] = vote
                answers[pair][member] = response.text
        records = []
        for image_id, name in pairs:
            pair = (image_id, name)
            if pair in votes:
                present: bool | None = majority(votes[pair].values())
                record_votes, record_answers = votes[pair], answers[pair]
            else:
                present, record_votes, record_answers = None, {}, {}
            records.append(
                {
                    "image_id": image_id,
                    "name": name,
                    "present": present,
                    "votes": record_votes,
                    "answers": record_answers,
                    "method": "ensemble",
                }
            )
        return records


def _score(pairs: Iterable[tuple[bool | None, bool]]) -> dict[str, Any]:
    """Counts and accuracy of predictions against labels (``None`` predictions = unparsed)."""
    n = correct = unparsed = tp = fp = fn = tn = 0
    for prediction, truth in pairs:
        n += 1
        if prediction is None:
            unparsed += 1
            continue
        correct += prediction == truth
        tp += prediction and truth
        fp += prediction and not truth
        fn += (not prediction) and truth
        tn += (not prediction) and not truth
    return {
        "n": n,
        "correct": correct,
        "unparsed": unparsed,
        "accuracy": correct / n if n else None,
        "true_present": tp,
        "false_present": fp,
        "false_absent": fn,
        "true_absent": tn,
    }


def accuracy_report(
    records: Sequence[Mapping[str, Any]], items: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """Accuracy of each member and of the ensemble on the decisions whose object is labelled.

    Each distinct (image, object) pair counts once. Unparsed member replies count as wrong (they
    are listed as ``unparsed``); ties and all-unparsed cases (both decided Absent) are counted
    over every decision with votes.
    """
    unique: dict[tuple[str, str], Mapping[str, Any]] = {}
    for record in records:
        unique.setdefault((str(record["image_id"]), str(record["name"])), record)
    labelled = []
    for (image_id, name), record in sorted(unique.items()):
        item = items.get(image_id)
        truth = label(item, name) if item is not None else None
        if truth is not None and record.get("present") is not None:
            labelled.append((record, truth))
    members = sorted({m for record, _ in labelled for m in record.get("votes", {})})
    report: dict[str, Any] = {
        "n_decisions": len(unique),
        "n_labelled": len(labelled),
        "members": {
            m: _score((r.get("votes", {}).get(m), t) for r, t in labelled if m in r["votes"])
            for m in members
        },
        "ensemble": _score((r["present"], t) for r, t in labelled),
        "ties": 0,
        "no_votes": 0,
        "unverified": sum(r.get("present") is None for r in unique.values()),
    }
    for record in unique.values():
        values = list(record.get("votes", {}).values())
        n_present = sum(v is True for v in values)
        n_absent = sum(v is False for v in values)
        if values and n_present == n_absent == 0:
            report["no_votes"] += 1
        elif values and n_present == n_absent:
            report["ties"] += 1
    return report
