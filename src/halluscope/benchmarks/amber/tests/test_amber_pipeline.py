"""AMBER's stages end to end: items -> prompts -> simulated answers -> scores -> table, on a small
hand-made AMBER set (always) and as the whole DAG of profile amber-gen on the released files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pipeline_helpers import ROOT, copy_project, merged_params, snakemake

from halluscope.benchmarks.amber import stages
from halluscope.benchmarks.amber.data import items
from halluscope.benchmarks.amber.settings import (
    AmberPromptSettings,
    AmberScoreSettings,
    AmberTableSettings,
)
from halluscope.io import InputError, read_json, read_jsonl, write_jsonl
from halluscope.models.sim import resolve_preset
from halluscope.stages.answering import AnswerSettings
from halluscope.stages.llm import LLMSettings

SHARED = ROOT.parent / "shared" / "data"
AMBER = SHARED / "amber" / "annotations.json"

ANNOTATIONS = [
    {"id": 1, "type": "generative", "truth": ["dog", "grass"], "hallu": ["cat", "frisbee"]},
    {"id": 2, "type": "generative", "truth": ["car", "road"], "hallu": ["bus"]},
    {"id": 3, "type": "discriminative-hallucination", "truth": "no"},
]
RELATION = {
    "dog": ["puppy"],
    "grass": [],
    "cat": [],
    "frisbee": [],
    "car": [],
    "road": [],
    "bus": [],
}


def small_amber(tmp: Path) -> dict[str, Path]:
    files = {
        "queries": tmp / "query_generative.json",
        "annotations": tmp / "annotations.json",
        "relation": tmp / "relation.json",
        "safe_words": tmp / "safe_words.txt",
    }
    queries = [
        {"id": i, "image": f"AMBER_{i}.jpg", "query": "Describe this image."} for i in (1, 2)
    ]
    files["queries"].write_text(json.dumps(queries), encoding="utf-8")
    files["annotations"].write_text(json.dumps(ANNOTATIONS), encoding="utf-8")
    files["relation"].write_text(json.dumps(RELATION), encoding="utf-8")
    files["safe_words"].write_text("light\n", encoding="utf-8")
    return files


def score_small(tmp: Path, files: dict[str, Path]) -> dict:
    """tmp/answers.jsonl scored against the small set (no similarity step) into tmp/scores.json."""
    settings = AmberScoreSettings(
        str(files["annotations"]), str(files["relation"]), str(files["safe_words"]), "none", 0.8
    )
    stages.score(settings, tmp / "answers.jsonl", tmp / "scores.json")
    return read_json(tmp / "scores.json")


def test_stages_on_a_small_amber_set(tmp_path: Path) -> None:
    files = small_amber(tmp_path)
    write_jsonl(tmp_path / "items.jsonl", items({"image_list": str(files["queries"])}))
    prompt_settings = AmberPromptSettings(str(files["annotations"]))
    stages.prompts(prompt_settings, tmp_path / "items.jsonl", tmp_path / "prompts.jsonl")
    prompts = read_jsonl(tmp_path / "prompts.jsonl")
    assert [(p["id"], p["image_id"], p["truth"]) for p in prompts] == [
        (1, "AMBER_1", ["dog", "grass"]),
        (2, "AMBER_2", ["car", "road"]),
    ]
    out = tmp_path / "answers.jsonl"
    # a model that mentions every object and hallucinates at every slot
    spec = {
        "backend": "sim",
        "preset": "sim-verbose",
        "overrides": {"omission_rate": 0.0, "hallucination_rate": 1.0, "max_objects": 2},
    }
    generation = {"seed": 0, "max_new_tokens": 64, "temperature": 0.0}
    settings = AnswerSettings(LLMSettings.from_generation("m", spec, generation))
    items_file, prompts = tmp_path / "items.jsonl", tmp_path / "prompts.jsonl"
    stages.answers(settings, items_file, prompts, tmp_path / "cache", out)
    answers = read_jsonl(out)
    assert sorted(answers[0]["meta"]["hallucinated"]) == ["cat", "frisbee"]
    assert answers[1]["meta"]["hallucinated"] == ["bus"]
    report = score_small(tmp_path, files)
    # every truth object mentioned, 3 hallucinated of 7 mentioned AMBER nouns, both responses
    # hallucinate, all 3 hallu targets mentioned
    assert report["Cover"] == 100.0
    assert report["CHAIR"] == round(3 / 7.001 * 100, 1)
    assert report["Hal"] == round(100 - 0 / 2.001 * 100, 1)
    assert report["Cog"] == round(3 / 3.001 * 100, 1)
    assert [sorted(r["hallucinated"]) for r in report["responses"]] == [["cat", "frisbee"], ["bus"]]

    table_settings = AmberTableSettings(models=["m"], run="amber-gen")
    stages.table(
        [tmp_path / "scores.json"], settings=table_settings, out=tmp_path / "amber_table.tex"
    )
    latex = (tmp_path / "amber_table.tex").read_text(encoding="utf-8")
    assert "42.9" in latex and "en\\_core\\_web\\_sm" in latex
    twin = (tmp_path / "amber_table.csv").read_text(encoding="utf-8").splitlines()
    assert twin[0] == "model,embedding,metric,value,lo,hi,published,setting"
    assert twin[1].startswith("m,,CHAIR,42.9")


def test_bad_answers_name_the_file_and_line(tmp_path: Path) -> None:
    files = small_amber(tmp_path)
    write_jsonl(
        tmp_path / "answers.jsonl",
        [
            {"id": 1, "model": "m", "response": "A dog."},
            {"id": 9, "model": "m", "response": "A cat."},
        ],
    )
    with pytest.raises(InputError, match=r"answers.jsonl:2: AMBER id 9 not annotated"):
        score_small(tmp_path, files)
    assert not (tmp_path / "scores.json").exists()


def test_a_duplicate_query_id_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps([{"id": 1, "image": "a.jpg", "query": "q"}] * 2), encoding="utf-8")
    with pytest.raises(InputError, match="duplicate query id 1"):
        items({"image_list": str(path)})


@pytest.mark.slow
def test_amber_gen_dag_on_a_small_set_shows_progress(tmp_path: Path) -> None:
    """The profile's whole DAG on the small hand-made set (no ../shared/data needed): the table
    and its CSV twin reach results/tables/, and each answers job's summary line reaches both the
    terminal (Snakemake's output) and the job log."""
    files = small_amber(tmp_path)
    project = copy_project(tmp_path / "project")
    overlay = {
        "data": {"image_list": str(files["queries"])},
        "amber": {k: str(files[k]) for k in ("annotations", "relation", "safe_words")},
    }
    (project / "overlay.yaml").write_text(yaml.safe_dump(overlay), "utf-8")
    proc = snakemake(project, "--cores", "2", "--configfile", "config/profiles/amber-gen.yaml",
                     "overlay.yaml", "--", "results/tables/", "all")  # fmt: skip
    terminal = proc.stdout + proc.stderr
    models = merged_params("amber-gen")["generate"]["models"]
    summary = "AMBER answers: 2 requests, 0 cache hits, 0 failures"
    assert terminal.count(summary) == len(models), terminal[-3000:]
    for model in models:
        log = project / f"logs/amber/amber-gen/{model}/answers.log"
        assert summary in log.read_text(encoding="utf-8")
    twin = (project / "results/tables/amber-gen/amber_table.csv").read_text(encoding="utf-8")
    assert twin.splitlines()[0] == "model,embedding,metric,value,lo,hi,published,setting"
    assert len(twin.splitlines()) == 1 + 4 * 3  # 3 models x CHAIR, Cover, Hal, Cog


@pytest.mark.skipif(not AMBER.is_file(), reason=f"reference data {SHARED} is absent")
@pytest.mark.slow
def test_amber_gen_profile_whole_dag(tmp_path: Path, monkeypatch) -> None:
    """On 300 released images: each sim model's Hal equals the share of its responses that the
    sim says it hallucinated in (the scorer finds what was injected), within 3 points."""
    monkeypatch.setenv("HALLUSCOPE_DATA_MIRROR", str(SHARED))
    project = copy_project(tmp_path / "project")
    (project / "overlay.yaml").write_text(yaml.safe_dump({"data": {"limit": 300}}), "utf-8")
    snakemake(
        project,
        "--cores",
        "2",
        "--configfile",
        "config/profiles/amber-gen.yaml",
        "overlay.yaml",
        "--",
        "results/tables/",
        "all",
    )
    config = merged_params("amber-gen")
    for model in config["generate"]["models"]:
        answers = read_jsonl(project / f"results/amber/amber-gen/{model}/answers.jsonl")
        assert len(answers) == 300
        injected = sum(bool(a["meta"]["hallucinated"]) for a in answers) / len(answers) * 100
        scores = read_json(project / f"results/amber/amber-gen/{model}/scores.json")
        assert abs(scores["Hal"] - injected) < 3.0, (model, scores["Hal"], injected)
        spec = config["models"][model]
        rate = resolve_preset(spec["preset"], spec.get("overrides"))["hallucination_rate"]
        assert (rate == 0) == (scores["Hal"] < 1.0)
    table = (project / "results/tables/amber-gen/amber_table.tex").read_text(encoding="utf-8")
    assert "amber-gen" in table and "Cover" in table
    metrics = json.loads((project / "results/metrics/amber-gen.json").read_text())
    assert any("CHAIR" in key for key in json.dumps(metrics).split('"'))
