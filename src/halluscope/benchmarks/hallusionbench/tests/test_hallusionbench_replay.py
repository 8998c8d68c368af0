"""Recorded HallusionBench answers scored through the pipeline: profile ``hallusionbench-sample``
replays the public sample's 254 GPT-4V answers (a replay model reading the sample's records,
the questions asked being the ones it answers) and its scores equal the hand-check command's on
the same file; and the two settings that make it work refuse what they cannot do."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pipeline_helpers import ROOT, copy_project, merged_params, run, snakemake

from halluscope.benchmarks.hallusionbench import stages
from halluscope.benchmarks.hallusionbench.settings import HbQuestionSettings
from halluscope.data.fetch import default_cache_dir, default_mirror
from halluscope.io import InputError, read_json, read_jsonl
from halluscope.stages.answering import AnswerSettings

PROFILE = "hallusionbench-sample"
FILES = ("hallusionbench/HallusionBench.json", "hallusionbench/HallusionBench_result_sample.json")
pytestmark = pytest.mark.skipif(
    not all((default_mirror() / f).is_file() or (default_cache_dir() / f).is_file() for f in FILES),
    reason="the HallusionBench question file and result sample are neither in the data mirror "
    "(../shared/data) nor the cache",
)
SPLIT_NUMBERS = ("aAcc", "fAcc", "qAcc", "easy_aAcc", "hard_aAcc", "n_questions", "n_figures",
                 "n_pairs")  # fmt: skip


def _sample() -> Path:
    from halluscope.data.fetch import resolve_input

    return resolve_input(FILES[1])


def test_the_answered_subset_is_the_samples_questions_without_figures(tmp_path: Path) -> None:
    config = merged_params(PROFILE)
    settings = HbQuestionSettings.from_config(config)
    assert settings.replay_only and settings.answered == FILES[1] and settings.images is None
    stages.questions(settings, tmp_path / "q.jsonl", tmp_path / "i.jsonl")
    rows, items = read_jsonl(tmp_path / "q.jsonl"), read_jsonl(tmp_path / "i.jsonl")
    # the sample's 69 figures, and the text-only figure 0 of the 10 VS sets it answers there
    assert len(rows) == 254 and len(items) == 69 + 10
    assert {r["image_id"] for r in rows} == {i["image_id"] for i in items}
    assert sum(r["visual_input"] == "0" for r in rows) == 43
    assert {i["image"] for i in items} == {None}
    # a model that reads the figures is refused on them, naming the fix
    config["models"]["sim-precise"] = {"backend": "sim", "preset": "sim-precise"}
    with pytest.raises(InputError, match="has a figure but its item .* has no image"):
        stages.answers(
            AnswerSettings.from_config(config, "sim-precise"),
            tmp_path / "i.jsonl",
            tmp_path / "q.jsonl",
            tmp_path / "cache",
            tmp_path / "a.jsonl",
        )
    # ... and with such a model among generate.models the questions stage asks for data.images
    config["generate"]["models"] = ["gpt4v-sample", "sim-precise"]
    with pytest.raises(InputError, match="data.images"):
        stages.questions(
            HbQuestionSettings.from_config(config), tmp_path / "q2.jsonl", tmp_path / "i2.jsonl"
        )


def test_the_answered_subset_needs_its_answers_file() -> None:
    from halluscope.config import ConfigError, validate

    config = merged_params(PROFILE)
    del config["hallusionbench"]["answered"]
    with pytest.raises(ConfigError, match="answered"):
        validate(config, source=PROFILE)


def test_the_published_table_sets_gpt4v_beside_ours_not_comparable(
    tmp_path: Path, monkeypatch
) -> None:
    """The stages on the profile: the score file holds the hand check's comparison with GPT-4V's
    published rows, and table hallusionbench_published states the subset and that the two are
    not comparable one to one."""
    import csv

    from halluscope.benchmarks.hallusionbench import leaderboard as lb
    from halluscope.benchmarks.hallusionbench import report
    from halluscope.benchmarks.hallusionbench.settings import HbScoreSettings, HbTableSettings

    monkeypatch.chdir(tmp_path)
    config = merged_params(PROFILE)
    folder = Path(f"results/hallusionbench/{PROFILE}")
    stages.questions(
        HbQuestionSettings.from_config(config), folder / "questions.jsonl", folder / "items.jsonl"
    )
    answers, scores = folder / "gpt4v-sample/answers.jsonl", folder / "gpt4v-sample/scores.json"
    stages.answers(
        AnswerSettings.from_config(config, "gpt4v-sample"),
        folder / "items.jsonl",
        folder / "questions.jsonl",
        tmp_path / "cache",
        answers,
    )
    stages.score(HbScoreSettings.from_config(config), answers, tmp_path / "cache", scores)
    doc = read_json(scores)
    board = doc["leaderboard"]
    assert board["model"] == "GPT4V" and board["same_questions"] is False
    assert "not comparable one to one" in board["note"]
    assert [e["evaluation"] for e in board["published"]] == ["Human Eval", "GPT Eval"]
    gpt_eval = board["published"][1]
    assert gpt_eval["difference"]["aAcc"] == round(doc["aAcc"] - 65.28, 4) == -4.2564
    # the hand check's comparison of the same numbers, but for why it is GPT-4V's
    hand = lb.comparison(doc, lb.known_model(_sample()), "?", lb.readme_rows())
    assert {**board, "why": "?"} == {**hand, "note": board["note"]}

    out = tmp_path / "report" / "hallusionbench_published.tex"
    config["profile"] = PROFILE
    report.write_published_table([scores], settings=HbTableSettings.from_config(config), out=out)
    latex = out.read_text(encoding="utf-8")
    assert "254 of 1,129 questions" in latex and "not comparable one to one" in latex
    assert "\\texttt{hallusionbench.published}" in latex and "\t" not in latex.replace("\\t", "")
    with out.with_suffix(".csv").open(encoding="utf-8", newline="") as handle:
        rows = {r["metric"]: float(r["value"]) for r in csv.DictReader(handle)}
    assert rows["ours / aAcc"] == doc["aAcc"]
    assert rows["published GPT4V, GPT Eval / aAcc"] == 65.28
    assert rows["ours - published GPT4V, GPT Eval / aAcc"] == -4.2564


@pytest.mark.slow
def test_the_sample_replayed_through_the_pipeline_scores_as_the_hand_check(
    tmp_path: Path,
) -> None:
    root = copy_project(tmp_path / "halluscope")
    profile = f"config/profiles/{PROFILE}.yaml"
    assert (root / profile).is_file()
    snakemake(root, "--cores", "2", "--configfile", profile, "--", "hallusionbench_all")
    scores = read_json(root / f"results/hallusionbench/{PROFILE}/gpt4v-sample/scores.json")
    run(["halluscope", "hallusionbench", "--answers", str(_sample()), "--out",
         str(tmp_path / "hand.json"), "--no-intervals"], tmp_path)  # fmt: skip
    hand = read_json(tmp_path / "hand.json")
    assert scores["subset"] == hand["subset"] == "254 of 1129 questions"
    for key in ("aAcc", "fAcc", "qAcc", "easy_aAcc", "hard_aAcc", "n_scored", "n_uncertain",
                "n_uncertain_counted_correct", "per_figure", "yes_no_bias",
                "failure_analysis"):  # fmt: skip
        assert scores[key] == hand[key], key
    assert set(scores["splits"]) == set(hand["splits"])
    for split, numbers in hand["splits"].items():
        for key in SPLIT_NUMBERS:
            if key in numbers:
                assert scores["splits"][split][key] == numbers[key], (split, key)
    # the numbers docs/hallusionbench.md prints for the sample (rule judge)
    assert (scores["aAcc"], scores["fAcc"], scores["qAcc"]) == (61.0236, 20.2899, 34.188)
    # the sample's stale visual_input labels are the hand check's to report: the pipeline's
    # answers carry the question file's
    assert hand["n_stale_visual_input"] == 102 and scores["n_stale_visual_input"] == 0
    answers = read_jsonl(root / f"results/hallusionbench/{PROFILE}/gpt4v-sample/answers.jsonl")
    assert len(answers) == 254 and {a["model"] for a in answers} == {"gpt4v-sample"}
    assert all("recording_line" in a["meta"] for a in answers)


def test_the_profile_is_the_documented_one() -> None:
    """docs/hallusionbench.md shows the profile's model spec as it is."""
    spec = yaml.safe_load((ROOT / "config/profiles" / f"{PROFILE}.yaml").read_text("utf-8"))
    model = spec["models"]["gpt4v-sample"]
    assert model["key_fields"] == list(stages.KEYS)
    docs = (ROOT / "docs/hallusionbench.md").read_text(encoding="utf-8")
    assert "key_fields: [category, subcategory, set_id, figure_id, question_id]" in docs
    assert "answer_field: model_prediction" in docs
