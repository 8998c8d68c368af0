"""Tests of the CAOS report: tables compile with pdflatex, figures are byte-reproducible.

pdflatex is required (CI installs texlive-latex-base and texlive-latex-recommended): the LaTeX
test fails, rather than skips, when it is missing, so a broken CI image cannot pass silently.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from halluscope.benchmarks.caos.ratio_table import rom_latex
from halluscope.benchmarks.caos.tables import (
    PUBLISHED_TABLE1,
    table1_latex,
    table2_latex,
)
from halluscope.report import caption_then_mean, is_simulated

SRC = Path(__file__).resolve().parents[1] / "src"
MODELS = ["sim-llava", "sim_owl"]  # the underscore checks LaTeX escaping
EMBEDDERS = ["glove", "minilm"]
INSTRUCTIONS = ["i01", "i02", "i03"]
CAOS = [
    "CAOS_T",
    "CAOS_X",
    "CAOS_K",
    "CAOS_TX",
    "CAOS_XK",
    "CAOS_avg",
    "CAOS_TX_mor",
    "CAOS_XK_mor",
    "CAOS_avg_mor",
]
OBJECTS = ["dog", "cat", "person", "chair", "car", "kite"]


def make_summary() -> pd.DataFrame:
    """A small summary.csv: every (model, embedder, instruction) plus the pooled rows."""
    rng = np.random.default_rng(0)
    rows = []
    for model in MODELS:
        for embedder in EMBEDDERS:
            for instruction in [*INSTRUCTIONS, "table1", "all"]:
                row = {
                    "model": model,
                    "embedder": embedder,
                    "instruction_id": instruction,
                    "n_captions": 10,
                    "n_no_hallucination": 4,
                    "objects_per_caption": 4.2,
                    "precision": 0.81,
                    "recall": 0.7,
                    "CHAIR_S": 0.6,
                    "CHAIR_I": 0.2,
                    "POPE_F1": np.nan,
                }
                row.update({c: round(float(rng.uniform(0.2, 0.9)), 4) for c in CAOS})
                rows.append(row)
    return pd.DataFrame(rows)


def make_objects() -> pd.DataFrame:
    """A small objects.csv: a few hallucinated objects per caption with deterministic sims."""
    rng = np.random.default_rng(1)
    rows = []
    for model in MODELS:
        for embedder in EMBEDDERS:
            for instruction in INSTRUCTIONS:
                for image in ["img1", "img2", "img3"]:
                    for position in range(int(rng.integers(1, 4))):
                        name = OBJECTS[int(rng.integers(0, len(OBJECTS)))]
                        ks = np.sort(rng.uniform(0.1, 0.9, 10))  # CAOS_K grows with k
                        row = {
                            "model": model,
                            "embedder": embedder,
                            "instruction_id": instruction,
                            "image_id": image,
                            "position": position,
                            "name": name,
                            "in_domain": "false" if name == "kite" else "true",
                            "sim_T": float(rng.uniform(0.1, 0.8)),
                            "sim_X": float(rng.uniform(0.1, 0.8)),
                        }
                        row.update({f"sim_K{k + 1}": float(ks[k]) for k in range(10)})
                        rows.append(row)
    return pd.DataFrame(rows)


@pytest.fixture()
def score_files(tmp_path: Path) -> tuple[Path, Path]:
    """Write the synthetic CSVs the way the score stage does and return their paths."""
    summary = tmp_path / "summary.csv"
    objects = tmp_path / "objects.csv"
    make_summary().to_csv(summary, index=False)
    make_objects().to_csv(objects, index=False)
    return summary, objects


def all_tables(summary: pd.DataFrame) -> dict[str, str]:
    sim = is_simulated(MODELS)
    return {
        "caos_table1": table1_latex(summary, MODELS, EMBEDDERS, 2, sim, PUBLISHED_TABLE1),
        "caos_table2": table2_latex(summary, MODELS, EMBEDDERS, 3, sim, None),
        "caos_ratios": rom_latex(summary, MODELS, EMBEDDERS, 2, sim),
    }


def test_caption_then_mean_hand_computed() -> None:
    # caption A: objects 0.2, 0.4 -> 0.3; caption B: 0.9 -> mean of captions = 0.6
    # (the plain mean over objects would be 0.5).
    df = pd.DataFrame(
        {
            "model": ["m", "m", "m", "m"],
            "embedder": ["e", "e", "e", "f"],
            "instruction_id": ["i01", "i01", "i02", "i01"],
            "image_id": ["a", "a", "a", "a"],
            "sim_T": [0.2, 0.4, 0.9, 0.5],
        }
    )
    result = caption_then_mean(df, "sim_T")
    assert result.loc[("m", "e")] == pytest.approx(0.6)
    assert result.loc[("m", "f")] == pytest.approx(0.5)
    per_instruction = caption_then_mean(df, "sim_T", by=("model", "embedder", "instruction_id"))
    assert per_instruction.loc[("m", "e", "i01")] == pytest.approx(0.3)


def test_caption_then_mean_skips_nan_captions() -> None:
    df = pd.DataFrame(
        {
            "model": ["m"] * 3,
            "embedder": ["e"] * 3,
            "instruction_id": ["i01"] * 3,
            "image_id": ["a", "b", "b"],
            "sim_T": [0.4, np.nan, np.nan],
        }
    )
    assert caption_then_mean(df, "sim_T").loc[("m", "e")] == pytest.approx(0.4)


def test_tables_content(score_files: tuple[Path, Path]) -> None:
    summary = pd.read_csv(score_files[0])
    tables = all_tables(summary)
    for text in tables.values():
        assert r"\toprule" in text and r"\bottomrule" in text
        assert "sim-llava" in text and r"sim\_owl" in text
        assert "simulated LVLMs" in text
        assert r"\caption{" in text and r"\label{tab:" in text
    table1 = tables["caos_table1"]
    assert "POPE-F1" not in table1  # all empty -> row omitted
    assert "(published)" not in table1  # sim-* models have no published values
    assert "($k=3$)" in table1
    assert "MiniLM-L6" in table1 and "GloVe" in table1
    # Table 2 is the mean over i01..i03 of the per-instruction rows.
    single = summary[summary["instruction_id"].isin(INSTRUCTIONS)]
    expected = single[(single["model"] == "sim-llava") & (single["embedder"] == "glove")][
        "CAOS_T"
    ].mean()
    assert f"{expected:.3f}" in tables["caos_table2"]
    assert "3 different instructions" in tables["caos_table2"]
    assert "mean of ratios" in tables["caos_ratios"]
    assert "from the pooled means" in tables["caos_ratios"]


def test_table1_published_columns_and_twin(score_files: tuple[Path, Path]) -> None:
    """Our model ids map to the paper's names; the CSV twin holds the same numbers."""
    from halluscope.benchmarks.caos.tables import table1_records
    from halluscope.report.latex import twin_csv

    summary = pd.read_csv(score_files[0]).replace({"sim-llava": "llava", "sim_owl": "mplug-owl"})
    models = ["llava", "mplug-owl"]
    records = table1_records(summary, models, EMBEDDERS, PUBLISHED_TABLE1)
    text = table1_latex(summary, models, EMBEDDERS, 2, False, PUBLISHED_TABLE1, records=records)
    assert r"LLaVA\\(published)" in text and r"mPLUG-Owl\\(published)" in text
    by_key = {(r["model"], r["embedding"], r["metric"]): r for r in records}
    assert by_key[("llava", "", "precision")]["published"] == 0.85
    assert by_key[("mplug-owl", "glove", "CAOS_X/K")]["published"] == 0.80
    assert by_key[("llava", "", "precision")]["value"] == pytest.approx(0.81)
    from halluscope.benchmarks.caos.tables import with_k_setting

    lines = twin_csv(with_k_setting(records, 5)).splitlines()
    assert lines[0] == "model,embedding,metric,value,lo,hi,published,setting"
    assert "llava,,precision,0.810000,,,0.850000," in lines  # no setting: k does not move it
    k_rows = [line for line in lines if ",CAOS_K," in line or ",CAOS_X/K," in line]
    assert k_rows and all(line.endswith(",k=5") for line in k_rows)
    assert all(not line.endswith("k=5") for line in lines if ",CAOS_T," in line)


def test_tables_not_simulated(score_files: tuple[Path, Path]) -> None:
    summary = pd.read_csv(score_files[0]).replace({"sim-llava": "llava", "sim_owl": "owl"})
    text = table1_latex(summary, ["llava", "owl"], EMBEDDERS, 2, False, None)
    assert "simulated" not in text
    assert "0.81" in text


def test_tables_compile_with_pdflatex(score_files: tuple[Path, Path], tmp_path: Path) -> None:
    pdflatex = shutil.which("pdflatex")
    assert pdflatex is not None, "pdflatex is required (apt-get install texlive-latex-recommended)"
    summary = pd.read_csv(score_files[0])
    folder = tmp_path / "latex"
    folder.mkdir()
    for name, text in all_tables(summary).items():
        (folder / f"{name}.tex").write_text(text, encoding="utf-8")
    document = textwrap.dedent(
        r"""
        \documentclass{article}
        \usepackage{booktabs}
        \usepackage{graphicx}
        \usepackage{hyperref}
        \begin{document}
        \input{caos_table1.tex}
        \input{caos_table2.tex}
        \input{caos_ratios.tex}
        \end{document}
        """
    )
    (folder / "doc.tex").write_text(document, encoding="utf-8")
    run = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:]
    assert (folder / "doc.pdf").stat().st_size > 0


FIGURE_SCRIPT = textwrap.dedent(
    """
    import sys
    import pandas as pd
    from halluscope.benchmarks.caos import figures

    summary_csv, objects_csv, out = sys.argv[1:4]
    summary = pd.read_csv(summary_csv)
    objects = pd.read_csv(objects_csv)
    models = ["sim-llava", "sim_owl"]
    embedders = ["glove", "minilm"]
    figures.plot_radar(summary, models, embedders, f"{out}/caos_radar")
    figures.plot_ksweep(objects, models, embedders, f"{out}/caos_ksweep")
    figures.plot_subsets(objects, models, embedders, f"{out}/caos_subsets",
                         top_names=["person", "dog", "chair"])
    figures.plot_instructions(summary, models, embedders, f"{out}/caos_instructions")
    """
)
FIGURES = ["caos_radar", "caos_ksweep", "caos_subsets", "caos_instructions"]


def test_figures_byte_identical_across_processes(
    score_files: tuple[Path, Path], tmp_path: Path
) -> None:
    outputs = []
    for run, seed in enumerate(["1", "2"]):
        out = tmp_path / f"run{run}"
        out.mkdir()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
        env["PYTHONHASHSEED"] = seed  # set/dict order must not leak into the files
        env["MPLCONFIGDIR"] = str(tmp_path / f"mpl{run}")  # fresh font cache each time
        subprocess.run(
            [
                sys.executable,
                "-c",
                FIGURE_SCRIPT,
                str(score_files[0]),
                str(score_files[1]),
                str(out),
            ],
            check=True,
            env=env,
            timeout=600,
        )
        outputs.append(out)
    for name in FIGURES:
        for ext in ("pdf", "png"):
            first = (outputs[0] / f"{name}.{ext}").read_bytes()
            second = (outputs[1] / f"{name}.{ext}").read_bytes()
            assert len(first) > 1000, f"{name}.{ext} looks empty"
            assert first == second, f"{name}.{ext} differs between runs"
    pdf = (outputs[0] / "caos_radar.pdf").read_bytes()
    assert b"CreationDate" not in pdf and b"Matplotlib" not in pdf
    assert b"matplotlib" not in (outputs[0] / "caos_radar.png").read_bytes().lower()


def test_ksweep_frame_matches_caption_then_mean(score_files: tuple[Path, Path]) -> None:
    from halluscope.benchmarks.caos.figures import ksweep_frame, subsets_frame

    objects = pd.read_csv(score_files[1])
    frame = ksweep_frame(objects, MODELS, EMBEDDERS)
    assert sorted(frame["k"].unique()) == list(range(1, 11))
    k3 = frame[(frame["k"] == 3)].set_index(["model", "embedder"])["CAOS_K"]
    expected = caption_then_mean(objects, "sim_K3")
    pd.testing.assert_series_equal(k3.sort_index(), expected.sort_index(), check_names=False)
    subsets = subsets_frame(objects, MODELS, EMBEDDERS, ["person", "dog", "chair"])
    assert set(subsets["subset"]) == {"All", "In-domain (MSCOCO)", "Out-of-domain", "Without top-3"}
    ood = subsets[(subsets["subset"] == "Out-of-domain") & (subsets["metric"] == "CAOS_T")]
    kites = objects[objects["name"] == "kite"]
    expected_ood = caption_then_mean(kites, "sim_T")
    got = ood.set_index(["model", "embedder"])["value"].sort_index()
    pd.testing.assert_series_equal(got, expected_ood.sort_index(), check_names=False)


def test_setting_note_names_the_extractor_speed_options_only_when_set() -> None:
    """The weight format, the object-list grammar and the stop rules change the LLM's replies:
    the CAOS setting note says when they were on and says nothing for the shipped
    weights, the schema grammar and no rule (the paper profile's extractor)."""
    from halluscope.benchmarks.caos.report import setting_note

    llm = {"model": "smollm2", "grammar": "schema", "stop_rule": "none"}
    setting = {"profile": "p", "dataset": "d", "instructions": ["i01"], "models": {},
               "embedders": {}, "extract": {"method": "rule+llm", "llm": llm},
               "oracle": {"method": "annotations"}, "k": 3, "frequent": "coco"}  # fmt: skip
    summary = pd.DataFrame({"instruction_id": [], "embedder": []})
    plain = setting_note(setting, summary, simulated=False)
    assert "grammar" not in plain and "stop rule" not in plain
    assert "weights" not in setting_note(
        {**setting, "extract": {"method": "rule+llm", "llm": {**llm, "weights": "shipped"}}},
        summary,
        False,
    )
    fast = {**llm, "grammar": "object-list-greedy", "stop_rule": "object-list-vocab"}
    note = setting_note({**setting, "extract": {"method": "rule+llm", "llm": fast}}, summary, False)
    assert "(grammar \\texttt{object-list-greedy}, stop rule \\texttt{object-list-vocab})" in note
    q8 = {**fast, "weights": "Q8_0"}
    note = setting_note({**setting, "extract": {"method": "rule+llm", "llm": q8}}, summary, False)
    assert "(weights \\texttt{Q8\\_0}, grammar \\texttt{object-list-greedy}," in note
