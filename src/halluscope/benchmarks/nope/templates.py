"""NOPE Appendix B, Table 6: the NegP question templates and the seeded choice of one.

Each valid listed object fills a template drawn at random (seeded by sha256 of the key): a
row of Table 6 uniformly, then one of the row's alternatives, then the NegP answer. The
template fixes the ``question_type`` (§6.2: color, object, location, counting, person).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# ---------------------------------------------------------------------------------------------
# Table 6 question templates
# ---------------------------------------------------------------------------------------------

_RELATIONS = ("above", "under", "on the left of", "on the right of")
_VERBS = ("holding", "using")


@dataclass(frozen=True)
class QuestionTemplate:
    """One row of NOPE Table 6: wording (``<OBJECT>`` placeholder), alternatives, answers."""

    number: int
    text: str
    question_type: str
    answers: tuple[str, ...]
    relations: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()

    def variants(self) -> list[tuple[str, str, str | None]]:
        """Every concrete wording as ``(template_id, text, relation)``."""
        out: list[tuple[str, str, str | None]] = []
        for verb in self.verbs or (None,):
            for relation in self.relations or (None,):
                text = self.text
                parts = [str(self.number)]
                if verb is not None:
                    text = text.replace("{verb}", verb)
                    parts.append(verb)
                if relation is not None:
                    text = text.replace("{relation}", relation)
                    parts.append(relation.replace("on the ", "").replace(" of", ""))
                out.append(("-".join(parts), text, relation))
        return out


QUESTION_TEMPLATES: tuple[QuestionTemplate, ...] = (
    QuestionTemplate(1, "What is the color of the <OBJECT>?", "color", ("none", "nothing")),
    QuestionTemplate(
        2,
        "What object is located {relation} the <OBJECT>?",
        "object",
        ("none", "nothing"),
        relations=_RELATIONS,
    ),
    QuestionTemplate(3, "Where is the <OBJECT> located in the image?", "location", ("nowhere",)),
    QuestionTemplate(
        4, "How many <OBJECT> are there in the image?", "counting", ("zero", "0", "none")
    ),
    QuestionTemplate(
        5, "Who is {verb} the <OBJECT>?", "person", ("no one", "nobody"), verbs=_VERBS
    ),
    QuestionTemplate(
        6,
        "Who is {verb} the object {relation} the <OBJECT>?",
        "person",
        ("no one", "nobody"),
        relations=_RELATIONS,
        verbs=_VERBS,
    ),
)
"""NOPE Appendix B, Table 6, verbatim ("above / under / on the left of / on the right of" and
"holding / using" are the row's alternatives; the last column is the NegP ground truth)."""


@dataclass(frozen=True)
class TemplateChoice:
    """A filled reference question."""

    template_id: str
    question_type: str
    reference_question: str
    reference: str
    acceptable_answers: tuple[str, ...]
    relation: str | None


def _rng(*parts: Any) -> random.Random:
    """A ``random.Random`` seeded from sha256 of the parts (never Python's salted ``hash``)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def choose_template(obj: str, *key: Any) -> TemplateChoice:
    """Pick a Table 6 row, then a wording, then the reference answer, seeded by ``key`` + object."""
    rng = _rng("nope-template", *key, obj)
    template = rng.choice(QUESTION_TEMPLATES)
    template_id, text, relation = rng.choice(template.variants())
    return TemplateChoice(
        template_id=template_id,
        question_type=template.question_type,
        reference_question=text.replace("<OBJECT>", obj),
        reference=rng.choice(template.answers),
        acceptable_answers=template.answers,
        relation=relation,
    )


def reference_questions(objects: Sequence[str], *key: Any) -> list[TemplateChoice]:
    """One seeded Table 6 reference question per object."""
    return [choose_template(obj, *key) for obj in objects]
