"""The figure stage writes the numbers each CAOS figure draws beside it (``{stem}.csv``), from the
very frame the plot is drawn from: the k-sweep and per-instruction CSVs are DVC plots."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from test_report import EMBEDDERS, MODELS, make_objects, make_summary

from halluscope.benchmarks.caos.report import CaosFigureSettings
from halluscope.cli import main
from halluscope.report import caption_then_mean

TABLE1 = ["i01", "i02"]
COLUMNS = {
    "caos_ksweep": ["model", "embedder", "k", "CAOS_K", "lo", "hi"],
    "caos_instructions": ["model", "embedder", "instruction_id", "CAOS_T", "CAOS_X", "CAOS_K"],
    "caos_radar": ["model", "axis", "metric", "embedder", "value", "lo", "hi"],
    "caos_subsets": ["model", "embedder", "subset", "metric", "value", "lo", "hi"],
}


@pytest.fixture()
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    summary, objects = tmp_path / "summary.csv", tmp_path / "objects.csv"
    make_summary().to_csv(summary, index=False)
    make_objects().to_csv(objects, index=False)
    return summary, objects


def run_figure(name: str, inputs: tuple[Path, Path], out: Path) -> Path:
    argv = [
        "stage", "figure", "--figure", name, "--summary", str(inputs[0]),
        "--objects", str(inputs[1]), "--out-stem", str(out / name),
        "--settings", CaosFigureSettings(
            level=0.95, resamples=200, seed=0, dpi=40, exclude_top=3, frequent="coco", k=3,
            table1=TABLE1, embedders=EMBEDDERS,
        ).to_json(),
    ]  # fmt: skip
    assert main(argv) == 0
    for ext in ("pdf", "png"):
        assert (out / f"{name}.{ext}").stat().st_size > 1000
    return out / f"{name}.csv"


@pytest.fixture()
def drawn(monkeypatch) -> dict[str, pd.DataFrame]:
    """The ``frame`` each plot function is called with (the numbers it draws)."""
    from halluscope.benchmarks.caos import figures

    seen: dict[str, pd.DataFrame] = {}
    for name in ("plot_radar", "plot_ksweep", "plot_subsets", "plot_instructions"):
        original = getattr(figures, name)

        def spy(*args, _original=original, _name=name, **kwargs):
            seen[_name] = kwargs["frame"]
            return _original(*args, **kwargs)

        monkeypatch.setattr(figures, name, spy)
    return seen


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_csv_holds_the_frame_the_plot_draws(
    name: str, inputs: tuple[Path, Path], tmp_path: Path, drawn: dict
) -> None:
    path = run_figure(name, inputs, tmp_path)
    data = pd.read_csv(path, keep_default_na=True)
    assert list(data.columns) == COLUMNS[name]
    frame = drawn["plot_" + name.removeprefix("caos_")]
    assert len(data) == len(frame) > 0
    numbers = ("value", "CAOS_T", "CAOS_X", "CAOS_K", "lo", "hi")
    key = [c for c in COLUMNS[name] if c not in numbers]
    plotted = frame.assign(embedder=frame["embedder"].replace("", float("nan")))
    merged = data.merge(plotted, on=key, suffixes=("", "_drawn"), validate="one_to_one")
    assert len(merged) == len(data)
    for column in set(COLUMNS[name]) - set(key):
        pd.testing.assert_series_equal(
            merged[column], merged[f"{column}_drawn"], check_names=False, check_dtype=False
        )


def test_ksweep_csv_numbers(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    """CAOS_K per k, model and embedder: the caption-then-mean of the objects' sim_K{k} on the
    Table 1 instructions; rows in params order (models as in summary.csv, embedders, k)."""
    data = pd.read_csv(run_figure("caos_ksweep", inputs, tmp_path))
    assert sorted(data["k"].unique()) == list(range(1, 11))
    assert len(data) == len(MODELS) * len(EMBEDDERS) * 10
    objects = pd.read_csv(inputs[1])
    objects = objects[objects["instruction_id"].isin(TABLE1)]
    for k in (1, 3, 10):
        expected = caption_then_mean(objects, f"sim_K{k}")
        got = data[data["k"] == k].set_index(["model", "embedder"])["CAOS_K"]
        pd.testing.assert_series_equal(
            got.sort_index(), expected.sort_index(), check_names=False, check_exact=False
        )
    order = [(m, e, k) for m in MODELS for e in EMBEDDERS for k in range(1, 11)]
    assert list(data[["model", "embedder", "k"]].itertuples(index=False, name=None)) == order


def test_instructions_csv_numbers(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    """One row per model, embedder and single instruction, the summary's CAOS values."""
    data = pd.read_csv(run_figure("caos_instructions", inputs, tmp_path))
    summary = pd.read_csv(inputs[0])
    single = summary[~summary["instruction_id"].isin(["table1", "all"])]
    assert len(data) == len(single) == len(MODELS) * len(EMBEDDERS) * 3
    merged = data.merge(single, on=["model", "embedder", "instruction_id"], suffixes=("", "_s"))
    for metric in ("CAOS_T", "CAOS_X", "CAOS_K"):
        pd.testing.assert_series_equal(
            merged[metric], merged[f"{metric}_s"], check_names=False, check_exact=False
        )


def test_figure_rule_declares_the_csv() -> None:
    """The CAOS package's rules.smk: the CSV is an output of rule figure (Snakemake and DVC
    track it)."""
    rules = "src/halluscope/benchmarks/caos/rules.smk"
    text = (Path(__file__).resolve().parents[1] / rules).read_text("utf-8")
    assert 'f"results/figures/{{profile}}/{figure}.csv"' in text
