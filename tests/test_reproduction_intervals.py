"""The published Table 1 in units of our intervals (src/halluscope/benchmarks/caos/reproduction.py):
per printed cell, our interval, whether the paper's value lies inside it and the gap in
half-widths; in the comparison table, its CSV twin and the list of known differences."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest

from halluscope.benchmarks.caos import reproduction
from halluscope.benchmarks.caos.published import PUBLISHED_IDS, PUBLISHED_TABLE1
from halluscope.benchmarks.caos.tables import CAOS_COLUMNS, table1_records

MODELS = list(PUBLISHED_IDS)


def test_interval_position_by_hand() -> None:
    """Ours 0.50 in [0.40, 0.70]: the half-width is 0.20 above and 0.10 below."""
    position = reproduction.interval_position
    assert position(0.5, 0.4, 0.7, 0.6) == (True, pytest.approx(0.5))  # 0.1 of 0.2 above
    assert position(0.5, 0.4, 0.7, 0.9) == (False, pytest.approx(2.0))  # 0.4 of 0.2 above
    assert position(0.5, 0.4, 0.7, 0.2) == (False, pytest.approx(-3.0))  # 0.3 of 0.1 below
    assert position(0.5, 0.4, 0.7, 0.4) == (True, pytest.approx(-1.0))  # on the lower bound
    assert position(0.5, 0.4, 0.7, 0.5) == (True, 0.0)
    assert position(0.5, None, None, 0.6) == (None, None)  # no interval (POPE-F1)
    assert position(None, 0.4, 0.7, 0.6) == (None, None)
    assert position(0.0, 0.0, 0.2, 0.0) == (True, 0.0)  # a zero half-width, at ours
    assert position(0.0, 0.0, 0.2, -0.1) == (False, None)  # below a zero half-width: no unit


def summary() -> pd.DataFrame:
    """The five LVLMs' pooled Table 1 rows, every number with an interval of half-width 0.02
    (CHAIR_S: 0.04 above ours); POPE-F1 of LLaVA alone, with no interval."""
    rows = []
    for i, model in enumerate(MODELS):
        for embedder in ("glove", "minilm"):
            row = {"model": model, "embedder": embedder, "instruction_id": "table1"}
            row |= {"precision": 0.9, "recall": 0.7, "objects_per_caption": 3.0}
            pope = 0.7 if model == "llava" else float("nan")
            row |= {"CHAIR_S": 0.30 + i / 100, "POPE_F1": pope, "n_unverified": 0}
            row |= {column: 0.4 for column in CAOS_COLUMNS}
            for column in ("precision", "recall", "objects_per_caption", *CAOS_COLUMNS):
                row |= {f"{column}_lo": row[column] - 0.02, f"{column}_hi": row[column] + 0.02}
            row |= {"CHAIR_S_lo": row["CHAIR_S"] - 0.02, "CHAIR_S_hi": row["CHAIR_S"] + 0.04}
            rows.append(row)
    return pd.DataFrame(rows)


def records() -> list[dict]:
    return table1_records(summary(), MODELS, ["glove", "minilm"], PUBLISHED_TABLE1)


def test_the_comparison_twin_gives_each_printed_cell_in_interval_units() -> None:
    text = reproduction.comparison_csv(records())
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0]) == reproduction.COMPARISON_COLUMNS
    # 5 general rows (POPE-F1 among them) + 6 CAOS rows per embedder, for each of five models
    assert len(rows) == 5 * (5 + 12)
    cell = {(r["model"], r["embedding"], r["metric"]): r for r in rows}
    # MiniGPT-4 CHAIR_S: ours 0.33 in [0.31, 0.37], printed 0.33: inside, 0 units
    chair = cell[("minigpt-4", "", "CHAIR_S")]
    assert (chair["value"], chair["lo"], chair["hi"]) == ("0.330000", "0.310000", "0.370000")
    assert (chair["inside"], chair["gap_units"]) == ("true", "0.000000")
    # InstructBLIP CHAIR_S: ours 0.30, printed 0.04: 0.26 below, half-width 0.02 below: -13
    low = cell[("instructblip", "", "CHAIR_S")]
    assert low["inside"] == "false" and float(low["gap_units"]) == pytest.approx(-13.0)
    assert float(low["published_minus_ours"]) == pytest.approx(-0.26)
    # LLaVA CHAIR_S: ours 0.31, printed 0.51: 0.20 above, half-width 0.04 above: +5
    assert float(cell[("llava", "", "CHAIR_S")]["gap_units"]) == pytest.approx(5.0)
    # GloVe CAOS_T of InstructBLIP: ours 0.40 in [0.38, 0.42], printed 0.30: -5
    assert float(cell[("instructblip", "glove", "CAOS_T")]["gap_units"]) == pytest.approx(-5.0)
    pope = cell[("llava", "", "POPE-F1")]  # ours has no interval: no position
    assert (pope["value"], pope["inside"], pope["gap_units"], pope["published"]) == (
        "0.700000",
        "",
        "",
        "0.680000",
    )
    assert cell[("instructblip", "", "POPE-F1")]["value"] == ""


def test_the_comparison_table_prints_the_gap_in_interval_units() -> None:
    latex = reproduction.comparison_latex(records(), MODELS, 2)
    assert reproduction.GAP_HEADER in latex and "|\\Delta|" not in latex
    line = next(x for x in latex.splitlines() if x.startswith("CHAIR$_S$ &"))
    cells = [c.strip().removesuffix("\\\\").strip() for c in line.split("&")[1:]]
    # InstructBLIP: ours, paper, units; ... MiniGPT-4 (the fourth model): inside, 0 units
    assert cells[:3] == ["0.30", "0.04", "-13.00"]
    assert cells[9:12] == ["0.33", "0.33", "0.00"]


def test_the_known_differences_count_the_printed_cells_inside_our_intervals() -> None:
    found = records()
    positions = reproduction.comparison_records(found)
    items = reproduction.interval_items(positions)
    known = [p for p in positions if p["inside"] is not None]
    inside = sum(p["inside"] for p in known)
    assert len(known) == 5 * (4 + 12) and len(items) == 1
    assert f": {inside} of {len(known)};" in items[0]
    assert "5 printed cell(s) have no interval of ours" in items[0]  # POPE-F1
    cells = reproduction.unexplained_cells(found)
    blip = next(c for c in cells if (c["model"], c["metric"]) == ("instructblip", "CHAIR_S"))
    assert blip["gap_units"] == pytest.approx(-13.0)
    assert "13.0 half-widths of our interval below ours" in reproduction._cell_text(blip)
    latex = reproduction.differences_latex({}, cells, (), None, positions)
    assert "inside our intervals" in latex and "half-widths" in latex
