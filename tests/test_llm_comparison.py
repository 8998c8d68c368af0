"""Table 1 with and without the LLM extractor (halluscope.benchmarks.caos.llm_comparison)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from halluscope.benchmarks.caos.llm_comparison import (
    COLUMNS,
    comparison_frame,
    comparison_records,
    llm_added,
)
from halluscope.benchmarks.caos.report import ComparisonSettings
from halluscope.cli import main


def summary(shift: float) -> pd.DataFrame:
    rows = []
    for model in ("a", "b"):
        for embedder in ("glove", "minilm"):
            for instruction in ("i01", "all"):
                row = {"model": model, "embedder": embedder, "instruction_id": instruction}
                base = 1.0 if model == "a" else 2.0
                row.update({c: base + shift + (embedder == "minilm") for c, _ in COLUMNS})
                rows.append(row)
    return pd.DataFrame(rows)


def objects_file(path: Path, captions: list[list[tuple[str, bool]]]) -> Path:
    """One JSONL row per caption; each object (source, in_domain)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [
        {"image_id": str(i), "objects": [{"name": f"o{j}", "source": s, "in_domain": d}
                                         for j, (s, d) in enumerate(caption)]}
        for i, caption in enumerate(captions)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_llm_added_counts_only_llm_objects_per_caption(tmp_path: Path) -> None:
    a = objects_file(tmp_path / "a/i01.jsonl", [[("rule", True), ("llm", False)], [("llm", True)]])
    b = objects_file(tmp_path / "a/i02.jsonl", [[("lexicon", False)], []])
    added = llm_added({"a": [a, b]})
    assert added["a"] == (2 / 4, 1 / 4)  # 2 LLM objects over 4 captions, 1 out-of-domain


def test_records_pair_each_column_and_use_the_pooled_row(tmp_path: Path) -> None:
    records = comparison_records(
        summary(0.0), summary(0.5), {"a": (0.25, 0.1)}, ["a", "b"], "glove"
    )
    by = {(r["model"], r["metric"]): r for r in records}
    assert by[("a", "CAOS_T [rule+lexicon]")]["value"] == 1.0  # glove, instruction "all"
    assert by[("a", "CAOS_T [rule+lexicon+llm]")]["value"] == 1.5
    assert by[("a", "CAOS_T [rule+lexicon]")]["embedding"] == "glove"
    assert by[("b", "# Objects [rule+lexicon+llm]")]["embedding"] == ""
    assert by[("a", "LLM-added objects / caption")]["value"] == 0.25
    assert by[("b", "of which out-of-domain")]["value"] == 0.0  # no LLM objects listed for b
    assert len(records) == 2 * (2 + 2 * len(COLUMNS))
    frame = comparison_frame(records, ["a", "b"])
    assert frame.shape == (2 + len(COLUMNS), 4)
    assert math.isnan(frame.iloc[0, 0]) and frame.iloc[0, 1] == 0.25


def test_a_summary_without_the_pooled_row_is_an_error() -> None:
    broken = summary(0.0)
    broken = broken[broken["instruction_id"] != "all"]
    with pytest.raises(ValueError, match="expected one row for a/glove/all"):
        comparison_records(broken, summary(0.5), {}, ["a"], "glove")


def test_stage_writes_the_table_and_its_twin(tmp_path: Path) -> None:
    summary(0.0).to_csv(tmp_path / "without.csv", index=False)
    summary(0.5).to_csv(tmp_path / "with.csv", index=False)
    objects = objects_file(tmp_path / "objects/run/a/i01.jsonl", [[("llm", False)]])
    out = tmp_path / "llm_comparison.tex"
    argv = ["stage", "llm-comparison", "--with-llm", str(tmp_path / "with.csv"),
            "--without-llm", str(tmp_path / "without.csv"),
            "--settings",
            ComparisonSettings(["a", "b"], "glove", 2, "run", "base", "500", 3).to_json(),
            "--out", str(out), str(objects)]  # fmt: skip
    assert main(argv) == 0
    latex = out.read_text(encoding="utf-8")
    assert "first 500 images" in latex and "\\texttt{base}" in latex
    assert "CAOS\\_T/X" in latex
    twin = out.with_suffix(".csv").read_text(encoding="utf-8").splitlines()
    assert twin[0] == "model,embedding,metric,value,lo,hi,published,setting"
    assert "a,,LLM-added objects / caption,1.000000,,,," in twin
