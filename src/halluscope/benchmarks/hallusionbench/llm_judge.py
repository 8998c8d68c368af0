"""The LLM judge: the reference's GPT-4 prompts, through any backend, every call cached.

Why: the reference scores a free-text answer by asking GPT-4 whether it conflicts with the
reference answer (``utils.py``, ``evaluate_by_chatgpt``), and splits the failure analysis on
whether two answers agree (``check_same_by_chatgpt``). The rule judge (:mod:`.judge`) needs no
model; this one is the reference's own method, with the model a setting: GPT-4 through the
``openai`` backend, the local SmolLM2 through ``llamacpp``, or any other backend.

Prompt version :data:`REFERENCE_PROMPT` is the reference's two prompts at
``tianyi-lab/HallusionBench@744007c``, character for character (its curly quotes around
"correct", "incorrect" and "same", its straight ones around "unclear" and "different", its
missing space after "Question:" and "Prediction answer:"), sent as one user turn as the
reference sends it. The version is the response cache's ``template_version``: a changed prompt
gets a new version and new cache keys.

Reply reading, as the reference reads it (lower-cased, substrings, in this order):

- verdict: ``"incorrect"`` anywhere -> 0 (wrong); else ``"correct"`` anywhere -> 1 (correct);
  else 2 (uncertain). A reply with neither word (``"unclear"``, an empty or cut reply, any
  other text) is 2, as the reference counts it; "not correct" is 1, as it is there;
- same answer: ``"same"`` anywhere -> same; else different (``"different"`` or anything else:
  the reference's default ``"0"``), so "not the same" is same, as it is there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from halluscope.benchmarks.hallusionbench.analysis import needs_same
from halluscope.benchmarks.hallusionbench.judge import CORRECT, UNSURE, WRONG
from halluscope.benchmarks.hallusionbench.questions import Answer, key_text
from halluscope.io import InputError
from halluscope.models.base import Backend, Request, user_message

REFERENCE_PROMPT = "reference-744007c"
"""The reference's prompts at ``tianyi-lab/HallusionBench@744007c`` (``utils.py``)."""

_VERDICT_HEAD = (
    "Imagine you are an intelligent teacher. Thoroughly read the question, reference answer and "
    "the prediction answer to ensure a clear understanding of the information provided. Assess "
    "the correctness of the predictions. If the prediction answer does not conflict with the "
    "reference answer, please generate \u201ccorrect\u201d. If the prediction answer conflict "
    "with the reference answer, please generate \u201cincorrect\u201d. If the prediction answer "
    'is unclear about the answer, please generate "unclear". \n\n Question:'
)
_SAME_HEAD = (
    "Imagine you are an intelligent teacher. Thoroughly read the two responses to two different "
    "questions. Assess the consistency of the information provided within those two responses. "
    "You do not know the specific questions, but you can asssess the consistency among the two "
    "responses by checking for logical conflicts if both responses are correct. If response1 "
    "does not conflict with response2, please generate \u201csame\u201d. Otherwise, generate "
    '"different". \n\n response1:'
)


def verdict_prompt(question: str, details: str, prediction: str) -> str:
    """The reference's judge prompt (``evaluate_by_chatgpt``) for one answer."""
    return (
        f"{_VERDICT_HEAD}{question}\nReference answer: {details}\nPrediction answer:"
        f"{prediction}\nOutput:"
    )


def same_prompt(response1: str, response2: str) -> str:
    """The reference's same-answer prompt (``check_same_by_chatgpt``): ``response1`` is the
    answer checked, ``response2`` the answer to its pair's figure-0 question."""
    return f"{_SAME_HEAD}{response1}\nresponse2: {response2}\nOutput:"


#: prompt version -> (verdict prompt, same-answer prompt)
PROMPTS: dict[str, tuple[Callable[[str, str, str], str], Callable[[str, str], str]]] = {
    REFERENCE_PROMPT: (verdict_prompt, same_prompt),
}


def parse_verdict(reply: str) -> int:
    """The reference's reading of a judge reply (module docstring): 0, 1 or 2."""
    text = reply.lower()
    if "incorrect" in text:
        return WRONG
    if "correct" in text:
        return CORRECT
    return UNSURE


def parse_same(reply: str) -> bool:
    """The reference's reading of a same-answer reply: ``"same"`` anywhere is same."""
    return "same" in reply.lower()


def verdict_word(reply: str) -> str:
    """Which word decided a verdict reply (``incorrect``, ``correct`` or ``neither``)."""
    return {WRONG: "incorrect", CORRECT: "correct", UNSURE: "neither"}[parse_verdict(reply)]


def same_word(reply: str) -> str:
    """Which word decided a same-answer reply (``same``, ``different`` or ``neither``)."""
    text = reply.lower()
    return "same" if "same" in text else "different" if "different" in text else "neither"


DEFAULT_PARAMS: dict[str, Any] = {"temperature": 0.0, "max_new_tokens": 64, "seed": 0}
"""Request params of a judge call. The reference sends none (the API's defaults: temperature 1,
no length limit); greedy decoding makes a judgment reproducible, and 64 tokens hold any reply
that names one of the words (the prompt asks for one word)."""


@dataclass(frozen=True)
class JudgeModel:
    """The judge model: its id (a ``params.yaml`` model id, or the spec's name) and spec."""

    model_id: str
    spec: Mapping[str, Any]

    @property
    def backend_name(self) -> str:
        return str(self.spec.get("backend"))


def resolve_model(value: str, params: Path | None = None) -> JudgeModel:
    """``--judge-model``: a model spec as inline JSON / YAML (``{"backend": "llamacpp",
    "model": "smollm2"}``) or a model id of the ``models:`` section of ``params`` (e.g.
    ``smollm2``). The spec is checked by its backend here, so a typo fails before any call."""
    from halluscope.config import ConfigError, read_yaml_mapping, strict_load
    from halluscope.models.base import check_spec

    text = value.strip()
    if text.startswith("{"):
        try:
            spec = strict_load(text)
        except Exception as err:  # YAML errors of many types: all mean "not a spec"
            reason = " ".join(str(err).split())
            raise InputError(f"--judge-model: not a JSON / YAML mapping: {reason}") from None
        if not isinstance(spec, dict) or not isinstance(spec.get("backend"), str):
            raise InputError('--judge-model: a spec needs "backend", e.g. {"backend": "llamacpp", '
                             '"model": "smollm2"}')  # fmt: skip
        model_id = str(spec.get("name") or spec.get("model") or spec["backend"])
    else:
        where = params if params is not None else Path("params.yaml")
        try:
            models = read_yaml_mapping(where).get("models") or {}
        except ConfigError as err:
            raise InputError(
                f"--judge-model {text!r}: not a spec and no params file to look it up in ({err}); "
                'give a spec, e.g. \'{"backend": "llamacpp", "model": "smollm2"}\''
            ) from None
        if text not in models or not isinstance(models[text], Mapping):
            raise InputError(
                f"--judge-model {text!r}: no such model id in {where} (valid: "
                f"{', '.join(sorted(models)) or 'none'}); or give a spec as JSON"
            )
        spec, model_id = dict(models[text]), text
    try:
        check_spec(spec, model_id)
    except ValueError as err:
        raise InputError(f"--judge-model: {err}") from None
    return JudgeModel(model_id, spec)


@dataclass
class LLMJudge:
    """Verdicts and same-answer checks from ``backend`` through ``cache`` (a
    :class:`~halluscope.models.cache.ResponseCache`), with the prompts of ``prompt_version``."""

    model: JudgeModel
    backend: Backend
    cache: Any
    params: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_PARAMS))
    prompt_version: str = REFERENCE_PROMPT
    batch_size: int = 8

    def __post_init__(self) -> None:
        if self.prompt_version not in PROMPTS:
            raise InputError(
                f"unknown HallusionBench judge prompt {self.prompt_version!r}; valid: "
                f"{', '.join(PROMPTS)}"
            )

    @property
    def name(self) -> str:
        """The judge as the result names it."""
        return (
            f"llm: {self.model.model_id} ({self.model.backend_name} backend), "
            f"prompt {self.prompt_version}"
        )

    def _ask(self, prompts: Sequence[tuple[str, str]]) -> list[str]:
        """Replies to ``(request id, prompt)`` pairs, in order, through the cache."""
        requests = [
            Request(request_id=rid, messages=(user_message(text),), params=dict(self.params),
                    task="chat")
            for rid, text in prompts
        ]  # fmt: skip
        responses = self.cache.resolve(
            self.backend, requests, self.prompt_version, batch_size=self.batch_size
        )
        return [r.text for r in responses]

    def verdicts(self, answers: Sequence[Answer]) -> tuple[list[int], list[str]]:
        """Each answer's verdict and the judge's reply it was read from."""
        ask, _ = PROMPTS[self.prompt_version]
        prompts = [
            (f"verdict/{key_text(a.question.key)}",
             ask(a.question.question, a.question.gt_answer_details, a.prediction))
            for a in answers
        ]  # fmt: skip
        replies = self._ask(prompts)
        return [parse_verdict(r) for r in replies], replies

    def same(
        self, answers: Sequence[Answer], verdicts: Sequence[int]
    ) -> tuple[list[bool | None], list[str | None]]:
        """The same-answer check of each answer the failure analysis reads it for
        (:func:`~.analysis.needs_same`), against its pair's figure-0 answer; None elsewhere."""
        _, ask = PROMPTS[self.prompt_version]
        first = {
            a.question.pair: (a, v) for a, v in zip(answers, verdicts, strict=True)
            if a.question.figure_id == "0"
        }  # fmt: skip
        todo: list[tuple[int, str, str]] = []
        for index, (a, v) in enumerate(zip(answers, verdicts, strict=True)):
            q = a.question
            if q.figure_id == "0" or q.pair not in first:
                continue
            original, original_verdict = first[q.pair]
            if needs_same(q.category, q.visual_input, v, original_verdict):
                todo.append(
                    (index, f"same/{key_text(q.key)}", ask(a.prediction, original.prediction))
                )
        replies = self._ask([(rid, text) for _, rid, text in todo])
        same: list[bool | None] = [None] * len(answers)
        texts: list[str | None] = [None] * len(answers)
        for (index, _, _), reply in zip(todo, replies, strict=True):
            same[index], texts[index] = parse_same(reply), reply
        return same, texts

    def settings(self) -> dict[str, Any]:
        """What decides the judgments (for the result document; no secrets: the spec names
        the key's environment variable, never the key)."""
        return {
            "kind": "llm",
            "model": self.model.model_id,
            "spec": dict(self.model.spec),
            "identity": dict(self.backend.identity),
            "params": dict(self.params),
            "prompt_version": self.prompt_version,
        }


def tally(replies: Sequence[str | None], word: Callable[[str], str]) -> dict[str, int]:
    """How many replies each deciding word (or ``neither``) decided."""
    return dict(sorted(Counter(word(r) for r in replies if r is not None).items()))
