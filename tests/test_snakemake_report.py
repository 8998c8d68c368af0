"""Report outputs of a built demo (one whole-DAG build in a temporary copy, module fixture):

- Snakemake's own report (``snakemake --report report.zip``): every CAOS figure (PNG), the numbers
  behind it and every CSV twin of a table are in the archive, filed under their benchmark's
  category (CAOS, Tri-HE, PhD, NOPE) and kind (Figures, Tables, Figure data), with a caption;
- DVC plots (``dvc plots show --json``): the k-sweep and the per-instruction data that rule
  ``figure`` writes beside Figures 4 and 6 render as vega plots of the declared fields.
"""

from __future__ import annotations

import csv
import json
import re
import zipfile
from pathlib import Path

import pytest
import yaml
from pipeline_helpers import copy_of_build, run, snakemake

pytestmark = pytest.mark.slow

PROFILE = "demo"
CAOS_FIGURES = ["caos_radar", "caos_ksweep", "caos_subsets", "caos_instructions"]
TWINS = {
    "CAOS": ["caos_table1", "caos_table2", "caos_ratios", "caos_sensitivity", "caos_paired"],
    "Tri-HE": ["trihe_table"],
    "PhD": ["phd_table"],
    "NOPE": ["nope_table", "nope_breakdown"],
    "HallusionBench": ["hallusionbench_table", "hallusionbench_published"],
}
FIGURES = {
    "Tri-HE": ["trihe_bars"],
    "PhD": ["phd_heatmap"],
    "NOPE": ["nope_question_types"],
    "HallusionBench": ["hallusionbench_bars"],
}


@pytest.fixture(scope="module")
def project(demo_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the session's demo build: the report and `git init` write into it."""
    return copy_of_build(demo_build, tmp_path_factory.mktemp("report") / "halluscope")


def report_json(html: str, name: str) -> dict:
    """A JSON object the report page defines as ``var NAME = {...};``."""
    match = re.search(rf"var {name} = (\{{.*?\}});\n", html, re.S)
    assert match, f"no 'var {name}' in report.html"
    return json.loads(match.group(1))


def test_snakemake_report_has_every_figure_and_twin_by_category(project: Path) -> None:
    snakemake(project, "--report", "report.zip")
    archive = zipfile.ZipFile(project / "report.zip")
    names = archive.namelist()
    html = archive.read("report/report.html").decode("utf-8")
    categories = report_json(html, "categories")
    results = report_json(html, "results")

    figures = f"results/figures/{PROFILE}"
    tables = f"results/report/{PROFILE}"
    assert sorted(categories["CAOS"]["Figures"]) == sorted(
        f"{figures}/{n}.png" for n in CAOS_FIGURES
    )
    assert sorted(categories["CAOS"]["Figure data"]) == sorted(
        f"{figures}/{n}.csv" for n in CAOS_FIGURES
    )
    for category, twins in TWINS.items():
        assert sorted(categories[category]["Tables"]) == sorted(f"{tables}/{n}.csv" for n in twins)
    for category, pngs in FIGURES.items():
        assert categories[category]["Figures"] == [f"{figures}/{n}.png" for n in pngs]
    # nothing filed as "Other"
    assert set(categories) == {*TWINS, "Explorer"}
    assert categories["Explorer"]["Pages"] == [f"results/explorer/{PROFILE}/index.html"]

    marked = [
        path for subcats in categories.values() for paths in subcats.values() for path in paths
    ]
    for path in marked:
        result = results[path]
        # the file itself is in the archive, byte for byte
        stored = f"report/{result['data_uri']}"
        assert stored in names, (path, stored)
        assert archive.read(stored) == (project / path).read_bytes(), path
        assert result["caption"].strip(), f"{path}: empty caption"
        assert result["labels"]["profile"] == PROFILE
        assert not result["labels"]["name"].endswith((".png", ".csv")), result["labels"]
    assert not [n for n in names if n.endswith((".tex", ".pdf"))]  # browsers cannot show them

    ksweep = results[f"{figures}/caos_ksweep.png"]
    assert ksweep["mime_type"] == "image/png" and ksweep["job_properties"]["rule"] == "figure"
    assert "Figure 4" in ksweep["caption"] and "Figure 4" in ksweep["labels"]["name"]
    assert "Figure 3" in results[f"{figures}/caos_radar.png"]["caption"]
    assert "model, embedder, k, CAOS_K" in results[f"{figures}/caos_ksweep.csv"]["caption"]
    assert results[f"{tables}/caos_table1.csv"]["mime_type"] == "text/csv"
    # the global description (docs/report/workflow.rst) says the LVLMs are simulated
    assert "simulated LVLMs" in html


def test_dvc_plots_show_renders_ksweep_and_instructions(project: Path) -> None:
    root = project
    run(["git", "init", "-q"], root)
    run(["git", "add", "-A"], root)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], root)
    proc = run(["dvc", "plots", "show", "--json"], root)
    shown = json.loads(proc.stdout)
    assert not shown.get("errors"), shown.get("errors")
    declared = {
        next(iter(p)): next(iter(p.values()))
        for p in yaml.safe_load(
            (root / "dvc.yaml").read_text("utf-8").replace("${profile}", PROFILE)
        )["plots"]
    }
    expected = {f"results/figures/{PROFILE}/{n}.csv" for n in ("caos_ksweep", "caos_instructions")}
    assert set(declared) == expected
    for path, props in declared.items():
        (plot,) = shown["data"][path]
        assert plot["type"] == "vega" and plot["revisions"] == ["workspace"], path
        content = plot["content"]
        assert content["encoding"]["x"]["field"] == props["x"], path
        values = content["data"]["values"]
        with (root / path).open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        ys = [props["y"]] if isinstance(props["y"], str) else props["y"]
        assert len(values) == len(rows) * len(ys) > 0, path
        assert {props["x"], *ys} <= set(rows[0]), path
        drawn = [v for v in values if props["x"] in v]
        assert len(drawn) == len(values), path
    ksweep = shown["data"][f"results/figures/{PROFILE}/caos_ksweep.csv"][0]["content"]
    points = {(v["model"], v["embedder"], v["k"]): v["CAOS_K"] for v in ksweep["data"]["values"]}
    assert sorted({int(k) for _, _, k in points}) == list(range(1, 11))
