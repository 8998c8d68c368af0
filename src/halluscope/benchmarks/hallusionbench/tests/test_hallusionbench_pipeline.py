"""HallusionBench's pipeline stages end to end on the registered question file: the text-only
subset -> simulated answers at the presets' rates -> rule-judged scores -> table (LaTeX + CSV
twin, the subset stated), figure, headline and explorer records; and the settings' checks."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml
from pipeline_helpers import ROOT

from halluscope.benchmarks.hallusionbench import explorer, report, stages
from halluscope.benchmarks.hallusionbench.settings import (
    HbFigureSettings,
    HbQuestionSettings,
    HbScoreSettings,
    HbTableSettings,
)
from halluscope.data.fetch import default_cache_dir, default_mirror
from halluscope.io import InputError, read_json, read_jsonl
from halluscope.report.headline import headline_metrics
from halluscope.stages.answering import AnswerSettings

MODELS = ("sim-precise", "sim-verbose", "sim-frequent")
# the stages read the registered question file: from the data mirror (or the cache), never the
# network in tests
pytestmark = pytest.mark.skipif(
    not (default_mirror() / "hallusionbench/HallusionBench.json").is_file()
    and not (default_cache_dir() / "hallusionbench/HallusionBench.json").is_file(),
    reason="HallusionBench.json is neither in the data mirror (../shared/data) nor the cache",
)
PROFILE = "small"


def _config(**section: object) -> dict:
    config = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    config["hallusionbench"] = {"enabled": True, **section}
    config["generate"]["models"] = list(MODELS)
    return config


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """results/hallusionbench/small/ of the three sim models, built by the stage functions."""
    root = tmp_path_factory.mktemp("hb")
    folder = root / "results" / "hallusionbench" / PROFILE
    config = _config()
    stages.questions(
        HbQuestionSettings.from_config(config), folder / "questions.jsonl", folder / "items.jsonl"
    )
    for model in MODELS:
        stages.answers(
            AnswerSettings.from_config(config, model),
            folder / "items.jsonl",
            folder / "questions.jsonl",
            root / "cache",
            folder / model / "answers.jsonl",
        )
        stages.score(
            HbScoreSettings.from_config(config),
            folder / model / "answers.jsonl",
            root / "cache",
            folder / model / "scores.json",
        )
    return root


def test_the_text_only_subset_is_the_178_questions_without_a_figure(built: Path) -> None:
    folder = built / "results" / "hallusionbench" / PROFILE
    rows = read_jsonl(folder / "questions.jsonl")
    assert len(rows) == 178 and {r["visual_input"] for r in rows} == {"0"}
    assert {(r["category"], r["figure_id"]) for r in rows} == {("VS", "0")}
    assert sum(r["gt_answer"] == "0" for r in rows) == 95
    items = read_jsonl(folder / "items.jsonl")
    assert {i["image"] for i in items} == {None}
    assert {r["image_id"] for r in rows} == {i["image_id"] for i in items}


def test_the_sims_answer_at_their_presets_rates_and_are_scored_by_rule(built: Path) -> None:
    folder = built / "results" / "hallusionbench" / PROFILE
    expected = {"sim-precise": 0.9233, "sim-verbose": 0.8166, "sim-frequent": 0.7098}
    for model in MODELS:
        scores = read_json(folder / model / "scores.json")
        assert scores["model"] == model and scores["subset"] == "178 of 1129 questions"
        assert scores["judge"].startswith("rule:") and scores["n_uncertain"] == 0
        # no figure: fAcc and hard qAcc have no denominator; a text-only pair is one question
        assert scores["fAcc"] is None and scores["hard_aAcc"] is None
        assert scores["qAcc"] == scores["aAcc"]
        assert abs(scores["aAcc"] / 100 - expected[model]) < 0.06, (model, scores["aAcc"])
        answers = read_jsonl(folder / model / "answers.jsonl")
        flipped = sum(a["meta"]["flipped"] for a in answers)
        assert scores["aAcc"] == round(100 * (178 - flipped) / 178, 4)
        assert {a["model_prediction"] for a in answers} <= {"Yes.", "No."}
        assert len(scores["answers"]) == 178
    assert (
        read_json(folder / "sim-precise" / "scores.json")["aAcc"]
        > read_json(folder / "sim-frequent" / "scores.json")["aAcc"]
    )


def test_the_answers_are_the_samples_records(built: Path) -> None:
    """The answer files are what ``halluscope hallusionbench --answers`` reads."""
    from halluscope.benchmarks.hallusionbench.questions import load_answers, load_questions
    from halluscope.benchmarks.hallusionbench.sources import QUESTIONS
    from halluscope.data.fetch import resolve_input

    questions = load_questions(resolve_input(QUESTIONS))
    path = built / "results" / "hallusionbench" / PROFILE / "sim-verbose" / "answers.jsonl"
    assert len(load_answers(path, questions)) == 178


def test_table_figure_headline_and_explorer(built: Path, monkeypatch) -> None:
    monkeypatch.chdir(built)
    config = _config()
    config["profile"] = PROFILE
    scores = [Path(f"results/hallusionbench/{PROFILE}/{m}/scores.json") for m in MODELS]
    out = built / "report" / "hallusionbench_table.tex"
    report.write_hb_table(scores, settings=HbTableSettings.from_config(config), out=out)
    latex = out.read_text(encoding="utf-8")
    assert "178 of 1,129 questions" in latex and "simulated LVLMs" in latex
    with out.with_suffix(".csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["metric"] for r in rows} == {"aAcc", "fAcc", "qAcc", "Easy qAcc", "Hard qAcc"}
    heads = headline_metrics({"hallusionbench_table": rows})
    for model in MODELS:
        aacc = read_json(f"results/hallusionbench/{PROFILE}/{model}/scores.json")["aAcc"]
        assert heads[model]["HallusionBench_aAcc"] == round(aacc / 100, 6)
    stem = built / "figures" / "hallusionbench_bars"
    report.draw_hb_bars(scores, settings=HbFigureSettings.from_config(config), out_stem=stem)
    assert stem.with_suffix(".pdf").is_file() and stem.with_suffix(".png").is_file()

    options = explorer.options(config)
    assert all(Path(f).is_file() for f in explorer.files(options, PROFILE))
    items: dict = {}
    found = explorer.contribution(options, PROFILE, items)
    assert items == {}, "the profile's items are read, never added to"
    assert len(found.answers) == 3 * 178 and len(found.items) == 57
    first = found.answers[0]
    assert first.image_id in found.items and first.truth.startswith(("yes (", "no ("))
    assert first.judge.startswith("rule: read as ")
    for answer in found.answers:
        said = answer.judge.split("read as ")[1].split(",")[0]
        assert answer.wrong == (said != answer.truth.split(" ")[0])


def test_all_questions_need_the_images_folder(tmp_path: Path) -> None:
    settings = HbQuestionSettings.from_config(_config(subset="all"))
    assert settings.images is None
    with pytest.raises(InputError, match="data.images"):
        stages.questions(settings, tmp_path / "q.jsonl", tmp_path / "i.jsonl")
    config = _config(subset="all")
    config["data"]["images"] = str(tmp_path)
    assert HbQuestionSettings.from_config(config).images == str(tmp_path)
    # the text-only subset never reads data.images
    config["hallusionbench"]["subset"] = "text-only"
    assert HbQuestionSettings.from_config(config).images is None


def test_the_llm_judge_is_a_setting(tmp_path: Path) -> None:
    from halluscope.resources import RULE_MODELS  # imports the needs parts (as the rules do)

    RULE_NEEDS = {"hallusionbench_score": RULE_MODELS["hallusionbench_score"]}
    assert HbScoreSettings.from_config(_config()).llm is None
    assert RULE_NEEDS["hallusionbench_score"](_config(), None) == []
    with pytest.raises(ValueError, match="hallusionbench.llm is unset"):
        HbScoreSettings.from_config(_config(judge="llm"))
    block = {"model": "smollm2", "max_new_tokens": 64, "temperature": 0.0, "seed": 0}
    settings = HbScoreSettings.from_config(_config(judge="llm", llm=block))
    assert settings.llm is not None and settings.llm.model_id == "smollm2"
    assert settings.judge_prompt == "reference-744007c"
    assert len(RULE_NEEDS["hallusionbench_score"](_config(judge="llm", llm=block), None)) == 1


def test_recorded_answers_replay_through_the_replay_backend(built: Path, tmp_path: Path) -> None:
    """A recording of the sample's answers, keyed as the replay backend looks them up (the
    figure's item id and the question), answers the stage like a live model."""
    import json

    folder = built / "results" / "hallusionbench" / PROFILE
    questions = {q["id"]: q for q in read_jsonl(folder / "questions.jsonl")}
    recorded = read_jsonl(folder / "sim-verbose" / "answers.jsonl")
    recording = tmp_path / "recording.jsonl"
    lines = []
    for r in recorded:
        key = "_".join(str(r[k]) for k in stages.KEYS)
        record = {"image_id": questions[key]["image_id"], "prompt": r["question"],
                  "text": r["model_prediction"]}  # fmt: skip
        lines.append(json.dumps(record))
    recording.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = _config()
    config["models"]["recorded"] = {"backend": "replay", "path": str(recording)}
    out = tmp_path / "answers.jsonl"
    stages.answers(
        AnswerSettings.from_config(config, "recorded"),
        folder / "items.jsonl",
        folder / "questions.jsonl",
        tmp_path / "cache",
        out,
    )
    replayed = read_jsonl(out)
    assert [r["model_prediction"] for r in replayed] == [r["model_prediction"] for r in recorded]
    assert {r["model"] for r in replayed} == {"recorded"}
