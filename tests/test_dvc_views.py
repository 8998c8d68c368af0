"""What DVC shows a reader: headline metrics that fit a terminal and are committed to git, and
plots that render offline with one series per model x embedder and every axis titled.

Fast: dvc.yaml against DVC's own schema, the headline selection, the git-ignore rules, the plot
templates and the offline page template. Slow (a copy of the session's demo build):
``dvc metrics show`` within 160 columns, ``dvc exp show`` with a committed baseline, and the
page ``dvc plots show`` writes (no script from the network, the data of every series).
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pipeline_helpers import GIT
from test_dvc_yaml import PLOTS, dvc_document, dvc_profile

from halluscope.report.headline import all_headlines, headline_metrics, model_filename

ROOT = Path(__file__).resolve().parents[1]
WIDTH = 160
MODULES = ROOT / "envs/plots/node_modules"


def test_dvc_yaml_passes_dvc_schema_and_headline_is_git_tracked_metrics() -> None:
    import voluptuous
    from dvc.schema import MULTI_STAGE_SCHEMA

    voluptuous.Schema(MULTI_STAGE_SCHEMA)(yaml.safe_load((ROOT / "dvc.yaml").read_text()))
    document = dvc_document()
    profile = dvc_profile()
    metrics = [m for stage in document["stages"].values() for m in stage.get("metrics", [])]
    # one uncached entry: the headline folder, carried by git (the baseline of `dvc exp show`)
    assert metrics == [{f"metrics/{profile}": {"cache": False, "persist": True}}]
    outs = [next(iter(o)) for s in document["stages"].values() for o in s["outs"]]
    assert f"results/metrics/{profile}.json" in outs  # the full metrics: a plain cached out


def test_git_tracks_the_headline_and_ignores_the_rest_of_results() -> None:
    def ignored(path: str) -> bool:
        proc = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT, check=False)
        return proc.returncode == 0

    assert not ignored("metrics/demo/sim-precise.json")
    assert not ignored("metrics/pope-captions/llava15.json")
    assert ignored("metrics/demo/.snakemake_timestamp")
    for path in (
        "results/metrics/demo.json",
        "results/scores/demo/x.csv",
        "results/tables/demo/caos_table1.csv",
        "envs/plots/node_modules/vega/build/vega.min.js",
        ".dvc/plots/offline.html",
        "dvc_plots/index.html",
    ):
        assert ignored(path), path


def _row(model: str, embedding: str, metric: str, value: str) -> dict[str, str]:
    return {"model": model, "embedding": embedding, "metric": metric, "value": value}


def test_headline_picks_the_named_cells_per_model() -> None:
    twins = {
        "caos_table1": [
            _row("m/a", "", "CHAIR_S", "0.25"),
            _row("m/a", "", "precision", "0.9"),
            _row("m/a", "", "POPE-F1", "0.8"),
            _row("m/a", "glove", "CAOS_T", "0.4"),
            _row("m/a", "glove", "CAOS_avg", "0.5"),
            _row("m/a", "minilm", "CAOS_avg", "0.6"),
            _row("m/a", "glove", "CAOS_avg [unverified present]", "0.7"),
        ],
        "caos_table2": [_row("m/a", "glove", "CAOS_avg", "0.9")],
        "nope_table": [
            _row("m/a", "", "NegP questions (A_NegP) / Acc.", "0.1"),
            _row("m/a", "", "NegP questions (A_NegP) / NegP Acc.", "30.0"),  # percent
            _row("b", "", "Other questions (A_NegP) / NegP Acc.", "0.2"),
        ],
        # the first judge and the first mode of a table are its headline
        "trihe_table": [
            _row("b", "", "Slots judge / Object / Hallu_I", "1"),
            _row("b", "", "Slots judge / Overall / Hallu_I\\downarrow", "27.5"),
            _row("b", "", "NLI judge / Overall / Hallu_I\\downarrow", "3.7"),
        ],
        "phd_table": [
            _row("b", "", "iac (sec) / Object", "0.5"),
            _row("b", "", "iac (sec) / All", "0.75"),
            _row("b", "", "ccs / All", "0.6"),
            _row("m/a", "", "iac (sec) / All", ""),  # no value: no headline, not the next mode
            _row("m/a", "", "ccs / All", "0.6"),
        ],
    }
    assert headline_metrics(twins) == {
        "m/a": {
            "CHAIR_S": 0.25,
            "CAOS_avg_glove": 0.5,  # the table's first embedder
            "POPE_F1": 0.8,
            "NOPE_NegP": 0.3,
        },
        # percentages in the tables, fractions in the headline: one unit for every number
        "b": {"TriHE_HalluI": 0.275, "PhD_iac": 0.75},
    }
    assert model_filename("m/a") == "m_a.json"
    assert model_filename("sim-precise") == "sim-precise.json"
    assert len({h.name for h in all_headlines()}) == len(all_headlines())


def test_plots_use_series_templates_with_titled_axes() -> None:
    document = dvc_document()
    for plot in document["plots"]:
        ((path, props),) = plot.items()
        assert props["x_label"] and props["y_label"] not in ("", "y"), path
        template = json.loads(
            (ROOT / ".dvc/plots" / f"{props['template']}.json").read_text(encoding="utf-8")
        )
        encoding = template["encoding"]
        assert encoding["x"]["title"] == "<DVC_METRIC_X_LABEL>", path
        assert encoding["y"]["title"] == "<DVC_METRIC_Y_LABEL>", path
        # one colour per model x embedder, computed from the CSV's own columns
        assert encoding["color"]["field"] == "series", path
        (series,) = [t for t in template["transform"] if t.get("as") == "series"]
        assert "datum.model" in series["calculate"] and "datum.embedder" in series["calculate"]
    assert [p.template for p in PLOTS] == ["series_linear", "series_scatter"]


def test_the_committed_dvc_config_names_no_page_template() -> None:
    """A fresh clone has no page yet: with the template named in the committed config, DVC
    refused ``dvc plots show`` ("HTML template has to contain '{plot_divs}'") until
    ``make plots-offline`` had run. The page names itself in this clone's config.local."""
    config = (ROOT / ".dvc/config").read_text(encoding="utf-8")
    assert "html_template" not in config


def test_the_page_names_itself_in_config_local(page_script, tmp_path: Path) -> None:
    modules = _fake_modules(tmp_path)
    out = tmp_path / ".dvc" / "plots" / "offline.html"
    local = tmp_path / ".dvc" / "config.local"
    local.parent.mkdir(parents=True)
    local.write_text("[core]\n    autostage = true\n", encoding="utf-8")
    for _ in range(2):  # a second run adds nothing
        assert page_script.main(["--modules", str(modules), "--out", str(out)]) == 0
    text = local.read_text(encoding="utf-8")
    assert text == "[core]\n    autostage = true\n[plots]\n    html_template = plots/offline.html\n"


def test_dvc_config_points_at_the_page_template_the_makefile_writes() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "PLOTS_HTML := .dvc/plots/offline.html" in makefile
    assert re.search(r"(?m)^demo: .*\$\(PLOTS_HTML\)", makefile)
    assert re.search(r"(?m)^test: .*\$\(PLOTS_HTML\)", makefile)
    pinned = json.loads((ROOT / "envs/plots/package.json").read_text(encoding="utf-8"))
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in pinned["dependencies"].values())
    assert (ROOT / "envs/plots/package-lock.json").is_file()


def _fake_modules(root: Path, body: str = "window.x = 1;") -> Path:
    from write_plots_html import LIBRARIES

    versions = {"vega": "5.33.1", "vega-lite": "5.23.0", "vega-embed": "6.29.0"}
    modules = root / "node_modules"
    for name, build in LIBRARIES.items():
        (modules / name / build).parent.mkdir(parents=True)
        (modules / name / build).write_text(f"/* {name} */ {body}", encoding="utf-8")
        (modules / name / "package.json").write_text(json.dumps({"version": versions[name]}))
    (root / "package.json").write_text(json.dumps({"dependencies": versions}))
    return modules


@pytest.fixture()
def page_script(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    import write_plots_html

    return write_plots_html


def test_page_template_inlines_the_libraries(page_script, tmp_path: Path) -> None:
    modules = _fake_modules(tmp_path)
    out = tmp_path / "offline.html"
    assert page_script.main(["--modules", str(modules), "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "{plot_divs}" in page and "{scripts}" not in page  # no CDN tags from DVC
    assert "<script src" not in page
    assert [m for m in re.findall(r'data-library="([^"]+)"', page)] == [
        "vega",
        "vega-lite",
        "vega-embed",
    ]

    bad = _fake_modules(tmp_path / "bad", body="s = '</script>';")
    with pytest.raises(SystemExit, match="cannot be inlined"):
        page_script.main(["--modules", str(bad), "--out", str(tmp_path / "bad.html")])


# ---------------------------------------------------------------- on a built demo (slow tier)


@pytest.fixture(scope="module")
def committed(demo_build: Path, tmp_path_factory) -> Path:
    """A git repository of the built demo whose commit holds the headline metrics and the
    dvc.lock of the build: the baseline an experiment is compared with."""
    from pipeline_helpers import copy_of_build, run

    root = copy_of_build(demo_build, tmp_path_factory.mktemp("views") / "halluscope")
    run(["git", "init", "-q"], root)
    run(["dvc", "commit", "--force", "--quiet"], root)
    run([*GIT, "add", "-A"], root)
    run([*GIT, "commit", "-qm", "demo baseline"], root)
    return root


def _dvc(root: Path, *args: str) -> str:
    from pipeline_helpers import run

    return run(["dvc", *args], root).stdout


@pytest.mark.slow
def test_headline_metrics_are_committed_and_fit_160_columns(committed: Path) -> None:
    profile = dvc_profile()
    tracked = subprocess.run(
        ["git", "ls-files", f"metrics/{profile}"],
        cwd=committed,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    params = yaml.safe_load((committed / "params.yaml").read_text(encoding="utf-8"))
    models = params["generate"]["models"]
    assert tracked == sorted(f"metrics/{profile}/{m}.json" for m in models)

    shown = _dvc(committed, "metrics", "show")
    lines = shown.rstrip("\n").splitlines()
    assert max(map(len, lines)) <= WIDTH, "\n" + shown
    assert len(lines) == 1 + len(models), shown  # a header and one row per model
    header = lines[0].split()
    embedders = list(params["embed"]["specs"])
    first_mode = params["phd"]["modes"][0]
    for name in ("CHAIR_S", "POPE_F1", "NOPE_NegP", "TriHE_HalluI", f"PhD_{first_mode}"):
        assert name in header, shown
    assert f"CAOS_avg_{embedders[0]}" in header, shown
    assert "!" not in shown and "-" not in " ".join(lines[1:]).split(), shown

    # the committed baseline row of `dvc exp show` holds every headline number (no "!")
    table = list(csv.DictReader(_dvc(committed, "exp", "show", "--csv").splitlines()))
    (baseline,) = [r for r in table if r["Experiment"] == "" and r["rev"] not in ("workspace",)]
    headline = [k for k in baseline if k.startswith(f"metrics/{profile}/")]
    assert headline and all(re.fullmatch(r"[0-9.]+", baseline[k]) for k in headline), baseline


@pytest.mark.slow
def test_plots_show_writes_an_offline_page_with_one_series_per_model_and_embedder(
    committed: Path,
) -> None:
    if not MODULES.is_dir():
        pytest.fail("envs/plots/node_modules is missing: run `make plots-offline`")
    from pipeline_helpers import run

    run(
        [
            sys.executable,
            str(ROOT / "scripts/write_plots_html.py"),
            "--modules",
            str(MODULES),
            "--out",
            str(committed / ".dvc/plots/offline.html"),
        ],
        committed,
    )
    _dvc(committed, "plots", "show", "-o", "page")
    page = (committed / "page/index.html").read_text(encoding="utf-8")

    sources = re.findall(r"<script\b[^>]*\bsrc\s*=\s*[\"']?([^\"' >]+)", page, re.I)
    assert not [s for s in sources if re.match(r"(https?:)?//", s, re.I)], sources
    assert re.findall(r'data-library="([^"]+)"', page) == ["vega", "vega-lite", "vega-embed"]

    specs = [json.loads(s) for s in re.findall(r"var spec = (\{.*?\});\n", page, re.S)]
    assert len(specs) == len(PLOTS)
    params = yaml.safe_load((committed / "params.yaml").read_text(encoding="utf-8"))
    expected = {
        f"{m} x {e}" for m in params["generate"]["models"] for e in params["embed"]["specs"]
    }
    by_title = {spec["title"]["text"]: spec for spec in specs}
    for plot in PLOTS:
        spec = by_title[plot.title]
        for axis in ("x", "y"):
            title = spec["encoding"][axis]["title"]
            assert title and title not in ("x", "y") and "<DVC_" not in title, (plot.name, axis)
        assert spec["encoding"]["x"]["title"] == plot.x_label
        assert spec["encoding"]["y"]["title"] == plot.y_label
        values = spec["data"]["values"]
        series = {f"{v['model']} x {v['embedder']}" for v in values}
        assert series == expected, plot.name
        assert spec["encoding"]["color"]["field"] == "series"
    ksweep = by_title[PLOTS[0].title]["data"]["values"]
    points: dict[str, list[int]] = {}
    for v in ksweep:
        points.setdefault(f"{v['model']} x {v['embedder']}", []).append(int(v["k"]))
    assert all(sorted(ks) == list(range(1, 11)) for ks in points.values()), points

    # drawn by the pinned libraries themselves (node, no browser, no network): one line per
    # series in the k-sweep, every series in each legend, both axis titles on each plot
    drawn = {d["title"]: d for d in _render(committed / "page/index.html")}
    for plot in PLOTS:
        texts = drawn[plot.title]["texts"]
        assert expected <= set(texts), (plot.name, texts)
        assert {plot.x_label, plot.y_label} <= set(texts), (plot.name, texts)
    assert drawn[PLOTS[0].title]["lines"] == len(expected)


#: Compiles every ``var spec`` of a page with vega-lite and renders it to SVG with vega.
RENDER_JS = r"""
const fs = require("fs"), vega = require("vega"), vl = require("vega-lite");
const page = fs.readFileSync(process.argv[1], "utf8");
const specs = [...page.matchAll(/var spec = (\{.*?\});\n/gs)].map((m) => JSON.parse(m[1]));
(async () => {
  const out = [];
  for (const spec of specs) {
    const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: "none" });
    const svg = await view.toSVG();
    out.push({
      title: spec.title.text,
      lines: (svg.match(/class="mark-line/g) || []).length,
      texts: [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]),
    });
  }
  console.log(JSON.stringify(out));
})();
"""


def _render(page: Path) -> list[dict]:
    import os
    import shutil

    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing (it comes with npm): run `make plots-offline`")
    proc = subprocess.run(
        [node, "-e", RENDER_JS, str(page)],
        env={**os.environ, "NODE_PATH": str(MODULES)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr[-3000:]
    return json.loads(proc.stdout)
