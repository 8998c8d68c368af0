"""``halluscope hallusionbench``: aAcc, fAcc and qAcc of one model's HallusionBench answers.

The answers are records in the format of the upstream ``HallusionBench_result_sample.json``
(the question's five ids and ``model_prediction``, the model's free-text answer), a JSON array
or JSON lines; any subset of the 1,129 questions. They are joined to ``HallusionBench.json``
(the registered file, or ``--questions``), judged by rule (:mod:`.judge`, the default) or by
an LLM with the reference's prompt (``--judge llm``, :mod:`.llm_judge`, every call through the
response cache), and scored as the reference does (:mod:`.metric`, :mod:`.analysis`). When the
answers are a known model's (``--model``, or the registered public sample: GPT-4V), its
published numbers are set beside ours (:mod:`.leaderboard`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from halluscope.hand_check import add_command
from halluscope.hand_check_intervals import add_interval_options

FORMATS = (
    '  --answers   JSON array or JSONL of {"category": "VD"|"VS", "subcategory", "set_id", '
    '"figure_id", "question_id", "model_prediction": "<answer>"} (HallusionBench_result_'
    "sample.json's records; other keys ignored)",
    "  --questions HallusionBench.json (default: the registered "
    "hallusionbench/HallusionBench.json)",
    "  --leaderboard leaderboard.json of published aAcc/fAcc/qAcc per model (default: the "
    "registered hallusionbench/leaderboard.json; the README's table is built in)",
    '  --judge-model a model spec as JSON (\'{"backend": "llamacpp", "model": '
    '"smollm2"}\') or a models: id of the params.yaml file (--params)',
    '  --out       JSON written: {"aAcc", "fAcc", "qAcc", "easy_aAcc", "hard_aAcc" (percent, '
    'as the reference prints them), "n_scored", "n_questions", "n_uncertain", "judge", '
    '"splits", "per_figure", "failure_analysis", "leaderboard", ..., "intervals": {"aAcc", ..., '
    '"splits": {SPLIT: {"aAcc", "fAcc", "qAcc", "easy", "hard": {"lo", "hi", "level", '
    '"method", "unit", "n_units"}}}}, "interval_settings"} (the question set resampled: aAcc by '
    "Wilson's interval at the effective n, fAcc / qAcc by the cluster bootstrap; "
    "--no-intervals leaves them out)",
)
"""The input and output formats, one ``--help`` line each (long lines are not wrapped)."""

DEFAULT_CACHE = Path("results/cache/responses")
"""The judge's response cache: the pipeline's (every stage's model calls are there)."""


def add_parser(subparsers: Any) -> None:
    from halluscope.benchmarks.hallusionbench.llm_judge import (
        DEFAULT_PARAMS,
        PROMPTS,
        REFERENCE_PROMPT,
    )
    from halluscope.models.cache import MODES

    parser = add_command(
        subparsers,
        "hallusionbench",
        run,
        help_text="HallusionBench aAcc / fAcc / qAcc of free-text answers (rule or LLM judge)",
        description="HallusionBench accuracy per question (aAcc), per figure (fAcc) and per "
        "question pair (qAcc) of a model's yes/no answers, judged by VLMEvalKit's yes/no rule "
        "(--judge rule) or by an LLM with the reference's GPT-4 prompt (--judge llm), and "
        "aggregated as the reference's utils.py does; the subset scored is stated, and a known "
        "model's published numbers are set beside ours.",
        formats=FORMATS,
        example=(
            "  halluscope hallusionbench \\",
            "      --answers ../shared/data/hallusionbench/HallusionBench_result_sample.json \\",
            "      --out hallusionbench.json",
        ),
        inputs={"--answers": "answers: JSON array or JSONL, model_prediction per question"},
        optional_inputs=("--questions", "--leaderboard", "--params"),
    )
    parser.add_argument(
        "--questions",
        type=Path,
        default=None,
        help="HallusionBench.json (default: the registered hallusionbench/HallusionBench.json)",
    )
    parser.add_argument("--out", type=Path, required=True, help="output JSON")
    judge = parser.add_argument_group("judge")
    judge.add_argument(
        "--judge",
        choices=("rule", "llm"),
        default="rule",
        help="rule = VLMEvalKit's yes/no extraction (default); llm = the reference's GPT-4 "
        "prompt, asked of --judge-model",
    )
    judge.add_argument(
        "--judge-model",
        default=None,
        help='the LLM judge: a model spec as JSON, e.g. \'{"backend": "openai", "model": '
        '"gpt-4", "base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY"}\', '
        "or a models: id of --params (e.g. smollm2)",
    )
    judge.add_argument(
        "--params",
        type=Path,
        default=None,
        help="the params file whose models: section --judge-model ids name (default: params.yaml)",
    )
    judge.add_argument(
        "--judge-prompt",
        choices=sorted(PROMPTS),
        default=REFERENCE_PROMPT,
        help=f"the judge's prompt version (default {REFERENCE_PROMPT}: the reference's "
        "utils.py prompts); part of every cache key",
    )
    judge.add_argument(
        "--judge-cache",
        type=Path,
        default=DEFAULT_CACHE,
        help=f"response cache folder of the judge's calls (default {DEFAULT_CACHE})",
    )
    judge.add_argument(
        "--judge-cache-mode",
        choices=MODES,
        default="live",
        help="live = cached replies, the rest asked; replay = cached replies only, no call; "
        "record = ask again and overwrite",
    )
    judge.add_argument(
        "--judge-max-new-tokens",
        type=int,
        default=DEFAULT_PARAMS["max_new_tokens"],
        help=f"reply length limit (default {DEFAULT_PARAMS['max_new_tokens']})",
    )
    judge.add_argument(
        "--judge-temperature",
        type=float,
        default=DEFAULT_PARAMS["temperature"],
        help="sampling temperature (default 0, greedy; the reference used the API's default, 1)",
    )
    judge.add_argument(
        "--judge-batch-size", type=int, default=8, help="judge requests per cache batch (8)"
    )
    board = parser.add_argument_group("published numbers")
    board.add_argument(
        "--model",
        default=None,
        help="the model whose answers these are, to set its published numbers beside ours "
        "(e.g. GPT4V; found by itself for the registered public sample)",
    )
    board.add_argument(
        "--leaderboard",
        type=Path,
        default=None,
        help="leaderboard.json (default: the registered hallusionbench/leaderboard.json)",
    )
    add_interval_options(parser)


def _llm_judge(args: argparse.Namespace) -> Any:
    """The LLM judge of ``--judge-*`` (model, cache, params, prompt version)."""
    from halluscope.benchmarks.hallusionbench.llm_judge import LLMJudge, resolve_model
    from halluscope.io import InputError
    from halluscope.models.base import make_backend
    from halluscope.models.cache import ResponseCache

    if args.judge_model is None:
        raise InputError(
            "--judge llm needs --judge-model: a models: id (e.g. smollm2) or a spec as JSON "
            '(GPT-4: \'{"backend": "openai", "model": "gpt-4", "base_url": '
            '"https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY"}\')'
        )
    if args.judge_max_new_tokens < 1 or args.judge_batch_size < 1:
        raise InputError("--judge-max-new-tokens and --judge-batch-size must be at least 1")
    model = resolve_model(args.judge_model, args.params)
    params = {
        "temperature": args.judge_temperature,
        "max_new_tokens": args.judge_max_new_tokens,
        "seed": 0,
    }
    return LLMJudge(
        model=model,
        backend=make_backend(model.spec, model_name=model.model_id),
        cache=ResponseCache(args.judge_cache, mode=args.judge_cache_mode),
        params=params,
        prompt_version=args.judge_prompt,
        batch_size=args.judge_batch_size,
    )


def _leaderboard(args: argparse.Namespace, doc: dict[str, Any]) -> dict[str, Any] | None:
    """The published numbers of the answers' model beside ours (None: no known model)."""
    from halluscope.benchmarks.hallusionbench import leaderboard as lb
    from halluscope.benchmarks.hallusionbench.sources import LEADERBOARD
    from halluscope.data.fetch import resolve_input

    if args.model is not None:
        model, how = args.model, "named by --model"
    else:
        model = lb.known_model(args.answers)
        how = "the answers file is the registered public sample (GPT-4V's answers)"
        if model is None:
            return None
    path = args.leaderboard or resolve_input(LEADERBOARD)
    return lb.comparison(doc, model, how, [*lb.readme_rows(), *lb.leaderboard_rows(path)])


def run(args: argparse.Namespace) -> None:
    from halluscope.benchmarks.hallusionbench.intervals import UNIT, hallusionbench_intervals
    from halluscope.benchmarks.hallusionbench.questions import load_answers, load_questions
    from halluscope.benchmarks.hallusionbench.scoring import (
        judge_answers,
        llm_judgments,
        result,
        rule_judgments,
    )
    from halluscope.benchmarks.hallusionbench.sources import QUESTIONS
    from halluscope.data.fetch import resolve_input
    from halluscope.hand_check import report, score_text, warn, write_result
    from halluscope.hand_check_intervals import attach, bracket, interval_settings
    from halluscope.io import InputError

    settings = interval_settings(args, UNIT)
    if args.judge == "rule" and args.judge_model is not None:
        raise InputError("--judge-model is the LLM judge's model; give --judge llm with it")
    questions = load_questions(args.questions or resolve_input(QUESTIONS))
    answers = load_answers(args.answers, questions)
    llm = _llm_judge(args) if args.judge == "llm" else None
    judgments = llm_judgments(answers, llm) if llm is not None else rule_judgments(answers)
    records = judge_answers(answers, judgments)
    doc = result(answers, len(questions), judgments, records)
    doc["leaderboard"] = _leaderboard(args, doc)
    if settings is not None:
        attach(doc, hallusionbench_intervals(records, doc["splits"], settings), settings)
    write_result(args.out, doc)
    if doc["n_stale_visual_input"]:
        warn(
            "hallusionbench",
            f"{doc['n_stale_visual_input']} answer records give another visual_input than "
            "HallusionBench.json; the question file's is used (easy / hard split)",
        )
    if doc["n_uncertain"] == doc["n_scored"]:
        why = "no answer says yes or no" if llm is None else "no judge reply names a verdict"
        warn("hallusionbench", f"{why}: every answer is uncertain")
    if llm is not None:
        cache, sent = llm.cache, doc["judge_replies"]
        asked = sent["n_verdict_requests"] + sent["n_same_requests"] - cache.hits
        report(
            "hallusionbench",
            f"judge {llm.name}: {cache.hits} cached replies, {asked} asked (cache "
            f"{cache.root}, mode {cache.mode})",
        )
    board = doc["leaderboard"]
    if board is not None:
        for row in board["published"]:
            diff = row["difference"]
            warn_text = "" if board["same_questions"] else " (not comparable one to one)"
            report(
                "hallusionbench",
                f"published {row['model']} {row['evaluation'] or row['source']}: aAcc "
                f"{row['aAcc']}, fAcc {row['fAcc']}, qAcc {row['qAcc']}; ours minus published "
                f"{diff['aAcc']:+.2f} / {diff['fAcc']:+.2f} / {diff['qAcc']:+.2f}{warn_text}",
            )
    report(
        "hallusionbench",
        f"{doc['subset']}, judge {doc['judge'].split(':')[0]}, aAcc "
        f"{score_text(doc['aAcc'], 2)}%{bracket(doc.get('intervals', {}).get('aAcc'), 2)}, fAcc "
        f"{score_text(doc['fAcc'], 2)}%, qAcc {score_text(doc['qAcc'], 2)}%, "
        f"{doc['n_uncertain']} uncertain",
        args.out,
    )
