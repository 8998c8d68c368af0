"""The intervals that reach POPE's score files, POPE-F1 in the CAOS summary, the CAOS figures'
numbers and the explorer page's header (issue: every number with its uncertainty)."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from halluscope.metrics.intervals import IntervalSettings

SETTINGS = IntervalSettings(resamples=400, seed=3)


def pope_questions(n_images: int, seed: int) -> tuple[list[dict], list[str | None]]:
    """Four questions on each image (two yes, two no) and a model's parsed answers."""
    rng = random.Random(seed)
    questions, preds = [], []
    for image in range(n_images):
        for k in range(4):
            label = "yes" if k < 2 else "no"
            text = f"Is there a thing{k} in the image?"
            questions.append({"question_id": f"{image}-{k}", "image": f"{image}.jpg",
                              "label": label, "text": text})  # fmt: skip
            right = rng.random() < 0.75
            preds.append(label if right else ("no" if label == "yes" else "yes"))
    return questions, preds


def test_the_score_file_keeps_the_scores_and_counts_each_images_questions() -> None:
    from halluscope.benchmarks.pope.intervals import score_document
    from halluscope.benchmarks.pope.metric import pope_scores

    questions, preds = pope_questions(12, seed=1)
    doc = score_document(questions, preds, "original", SETTINGS)
    assert {k: doc[k] for k in pope_scores([q["label"] for q in questions], preds).as_dict()} == (
        pope_scores([q["label"] for q in questions], preds).as_dict()
    )
    counts = doc["by_image"]["counts"]
    assert doc["by_image"]["columns"] == ["tp", "said_yes", "positives"]
    assert len(counts) == 12 and all(row[2] == 2 for row in counts.values())
    tp = sum(row[0] for row in counts.values())
    said_yes = sum(row[1] for row in counts.values())
    assert tp / said_yes == pytest.approx(doc["precision"])
    for name in ("accuracy", "precision", "recall", "f1", "yes_ratio"):
        interval = doc["intervals"][name]
        assert interval["lo"] <= doc[name] <= interval["hi"], name
        assert interval["n_units"] == 12
    assert "by_image" not in score_document(questions, preds, "original", None)


def test_the_mean_f1_of_one_setting_has_that_settings_interval() -> None:
    """One setting: the summary's POPE-F1 interval is the score file's F1 interval (the same
    images, counts and resamples)."""
    from halluscope.benchmarks.pope.intervals import mean_f1_interval, score_document

    questions, preds = pope_questions(15, seed=2)
    doc = score_document(questions, preds, "original", SETTINGS)
    lo, hi = mean_f1_interval({"random": doc}, SETTINGS)
    assert (lo, hi) == (doc["intervals"]["f1"]["lo"], doc["intervals"]["f1"]["hi"])


def test_the_mean_f1_over_settings_resamples_the_images_together() -> None:
    """Three settings asking about the same images, answered alike: the mean's interval is that
    of any one of them (resampled jointly, the three F1s move together), not the narrower one
    that averaging three independent samples would give."""
    from halluscope.benchmarks.pope.intervals import mean_f1_interval, score_document

    questions, preds = pope_questions(20, seed=4)
    doc = score_document(questions, preds, "original", SETTINGS)
    same = mean_f1_interval({s: doc for s in ("random", "popular", "adversarial")}, SETTINGS)
    assert same == pytest.approx((doc["intervals"]["f1"]["lo"], doc["intervals"]["f1"]["hi"]))
    other = score_document(*pope_questions(20, seed=5), "original", SETTINGS)
    lo, hi = mean_f1_interval({"random": doc, "popular": other}, SETTINGS)
    assert lo <= (doc["f1"] + other["f1"]) / 2 <= hi
    assert mean_f1_interval({"random": {"f1": 0.5}}, SETTINGS) == (None, None)


def test_the_summary_gives_pope_f1_its_interval(tmp_path: Path) -> None:
    from halluscope.benchmarks.caos.summarize import pope_f1_by_model
    from halluscope.benchmarks.pope.intervals import score_document
    from halluscope.io import write_json

    files = []
    for setting, seed in (("random", 6), ("popular", 7)):
        path = tmp_path / "m1" / f"{setting}.scores.json"
        path.parent.mkdir(exist_ok=True)
        write_json(path, score_document(*pope_questions(10, seed), "original", SETTINGS))
        files.append(path)
    found = pope_f1_by_model(files, SETTINGS)["m1"]
    f1s = [json.loads(p.read_text())["f1"] for p in files]
    assert found["POPE_F1"] == sum(f1s) / 2
    assert found["POPE_F1_lo"] <= found["POPE_F1"] <= found["POPE_F1_hi"]


def objects_frame(n_images: int, seed: int = 0) -> pd.DataFrame:
    """objects.csv rows: 1-3 hallucinated objects per caption, two instructions per image."""
    rng = np.random.default_rng(seed)
    rows = []
    for image in range(n_images):
        for instruction in ("i01", "i02"):
            for _ in range(int(rng.integers(1, 4))):
                rows.append({"model": "m", "embedder": "glove", "instruction_id": instruction,
                             "image_id": image, "name": "dog", "in_domain": True,
                             **{f"sim_K{k}": float(rng.uniform(0, 1)) for k in range(1, 11)},
                             "sim_T": 0.5, "sim_X": 0.5})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_ksweep_band_holds_each_value_and_narrows_with_more_images() -> None:
    from halluscope.benchmarks.caos.figures import ksweep_frame

    small = ksweep_frame(objects_frame(8), ["m"], ["glove"], intervals=SETTINGS)
    large = ksweep_frame(objects_frame(200), ["m"], ["glove"], intervals=SETTINGS)
    assert list(small.columns) == ["model", "embedder", "k", "CAOS_K", "lo", "hi"]
    for frame in (small, large):
        assert ((frame["lo"] <= frame["CAOS_K"]) & (frame["CAOS_K"] <= frame["hi"])).all()
    assert ((large["hi"] - large["lo"]).mean()) < ((small["hi"] - small["lo"]).mean())
    plain = ksweep_frame(objects_frame(8), ["m"], ["glove"])
    assert list(plain.columns) == ["model", "embedder", "k", "CAOS_K"]


def test_each_subset_bar_gets_the_interval_of_its_own_objects() -> None:
    """Figure 5's subsets re-aggregate their objects per caption; the whisker is that
    aggregation's interval, and a subset of every object has the whole set's interval."""
    from halluscope.benchmarks.caos.figures import ksweep_frame, subsets_frame

    objects = objects_frame(40, seed=3)
    frame = subsets_frame(objects, ["m"], ["glove"], ["cat"], k=3, intervals=SETTINGS)
    assert list(frame.columns) == ["model", "embedder", "subset", "metric", "value", "lo", "hi"]
    drawn = frame.dropna(subset=["value"])
    assert ((drawn["lo"] <= drawn["value"]) & (drawn["value"] <= drawn["hi"])).all()
    every = frame[(frame["subset"] == "All") & (frame["metric"] == "CAOS_K")].iloc[0]
    k3 = ksweep_frame(objects, ["m"], ["glove"], intervals=SETTINGS).set_index("k").loc[3]
    assert (every["lo"], every["hi"]) == (k3["lo"], k3["hi"])


def test_the_ksweep_band_resamples_images_not_objects() -> None:
    """Repeating every object row of a caption leaves its caption mean, and so the interval,
    as it is: the unit is the image (its captions), not the object."""
    from halluscope.benchmarks.caos.figures import ksweep_frame

    objects = objects_frame(30, seed=2)
    doubled = pd.concat([objects, objects], ignore_index=True)
    a = ksweep_frame(objects, ["m"], ["glove"], intervals=SETTINGS)
    b = ksweep_frame(doubled, ["m"], ["glove"], intervals=SETTINGS)
    pd.testing.assert_frame_equal(a, b)


def test_the_radar_and_instruction_frames_carry_the_summarys_bounds() -> None:
    """The radar's ``1 - CHAIR_S`` axis turns CHAIR_S's interval over (its lo is 1 - hi)."""
    from halluscope.benchmarks.caos.figures import instructions_frame, radar_frame

    rows = []
    for instruction in ("i01", "i02", "table1", "all"):
        rows.append({"model": "m", "embedder": "glove", "instruction_id": instruction,
                     "precision": 0.8, "precision_lo": 0.7, "precision_hi": 0.9,
                     "recall": 0.6, "objects_per_caption": 3.0, "CHAIR_S": 0.3,
                     "CHAIR_S_lo": 0.2, "CHAIR_S_hi": 0.45, "POPE_F1": np.nan,
                     "CAOS_T": 0.5, "CAOS_T_lo": 0.4, "CAOS_T_hi": 0.6, "CAOS_X": 0.4,
                     "CAOS_K": 0.3, "CAOS_TX": 1.2, "CAOS_XK": 1.3, "CAOS_avg": 0.4})  # fmt: skip
    summary = pd.DataFrame(rows)
    radar = radar_frame(summary, ["m"], ["glove"]).set_index("axis")
    assert radar.loc["1 - CHAIR_S", ["value", "lo", "hi"]].tolist() == pytest.approx(
        [0.7, 0.55, 0.8]
    )
    assert radar.loc["precision", ["lo", "hi"]].tolist() == [0.7, 0.9]
    assert np.isnan(radar.loc["recall", "lo"])  # no interval in the summary: none drawn
    single = instructions_frame(summary, ["m"], ["glove"])
    assert list(single["instruction_id"]) == ["i01", "i02"]
    assert single["CAOS_T_lo"].tolist() == [0.4, 0.4] and "CAOS_X_lo" not in single.columns


def twin(path: Path, rows: list[dict[str, str]]) -> Path:
    from halluscope.report.latex import TWIN_COLUMNS

    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, TWIN_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: row.get(c, "") for c in TWIN_COLUMNS})
    return path


def test_the_explorer_header_reads_each_headline_with_its_interval(tmp_path: Path) -> None:
    from halluscope.stages.explorer import headline_rows

    table1 = twin(tmp_path / "caos_table1.csv", [
        {"model": "a", "metric": "CHAIR_S", "value": "0.4", "lo": "0.3", "hi": "0.5"},
        {"model": "b", "metric": "CHAIR_S", "value": "0.2", "lo": "0.1", "hi": "0.35"},
        {"model": "a", "metric": "POPE-F1", "value": "0.8"},
    ])  # fmt: skip
    nope = twin(tmp_path / "nope_table.csv", [
        {"model": "a", "metric": "NegP questions / NegP Acc.", "value": "40.0", "lo": "30.0",
         "hi": "50.0"},
    ])  # fmt: skip
    rows = headline_rows([table1, nope])
    assert ["a", "CHAIR_S", 0.4, 0.3, 0.5] in rows and ["b", "CHAIR_S", 0.2, 0.1, 0.35] in rows
    assert ["a", "POPE_F1", 0.8, None, None] in rows  # a cell without an interval says so
    assert ["a", "NOPE_NegP", 0.4, 0.3, 0.5] in rows  # percent cells as fractions
