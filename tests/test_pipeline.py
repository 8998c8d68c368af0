"""Whole-DAG run of the demo profile in a temporary copy of the project.

One complete run (module fixture), then: every output exists and says "simulated"; a dry run has
nothing to do; changing CAOS k reruns only the jobs that read it; adding a 15th instruction runs
only its new jobs and what pools them; editing a stage's module reruns that stage; `dvc repro`
after `dvc commit` reruns nothing; the report builds through its rule.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
import yaml
from pipeline_helpers import copy_of_build, copy_project, planned_jobs, run, snakemake

from halluscope.report.latex import TWIN_COLUMNS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(demo_build: Path) -> Path:
    return demo_build


def edit_params(root: Path, edit) -> None:
    path = root / "params.yaml"
    params = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(params)
    path.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")


def test_outputs_exist_and_say_simulated(project: Path) -> None:
    tables = sorted(p.name for p in (project / "results/tables/demo").glob("*.tex"))
    expected = {"caos_ratios.tex", "caos_table1.tex", "caos_table2.tex"}
    expected |= {"trihe_table.tex", "phd_table.tex"}  # rules/trihe.smk, benchmarks/phd/rules.smk
    expected |= {"nope_table.tex", "nope_breakdown.tex"}  # benchmarks/nope/rules.smk
    assert expected <= set(tables), tables
    for table in tables:
        assert "simulated" in (project / "results/tables/demo" / table).read_text()
    figures = ("caos_radar", "caos_ksweep", "caos_subsets", "caos_instructions",
               "nope_question_types", "trihe_bars", "phd_heatmap")  # fmt: skip
    for name in figures:
        for ext in ("pdf", "png"):
            assert (project / "results/figures/demo" / f"{name}.{ext}").stat().st_size > 1000


def test_nothing_to_do_after_complete_run(project: Path) -> None:
    assert planned_jobs(project, "results/tables/", "all") == {}


def test_changing_the_interval_level_reruns_only_the_statistics(
    project: Path, tmp_path: Path
) -> None:
    """intervals.level is read by the statistics alone (the CAOS summary, the paired table,
    POPE's, PhD's, NOPE's and HallusionBench's scores, Tri-HE's judge stage, which writes the
    rates, the CAOS figures, which resample Figures 4 and 5, and the explorer page, which names
    the level): they and what reads them rerun, never a caption, extraction, oracle, vector or
    CAOS score job; every Table 1 cell of the build has its interval, holding the value."""
    import csv

    twin = project / "results/tables/demo/caos_table1.csv"
    rows = [r for r in csv.DictReader(twin.open(encoding="utf-8")) if r["value"]]
    with_bounds = [r for r in rows if r["lo"]]
    assert {r["metric"] for r in with_bounds} >= {"precision", "recall", "CHAIR_S", "# Objects"}
    for row in with_bounds:
        assert float(row["lo"]) <= float(row["value"]) <= float(row["hi"]), row
    unbounded = {r["metric"] for r in rows if not r["lo"] and "[unverified" not in r["metric"]}
    assert not unbounded, unbounded  # the bound rows are bounds themselves
    root = copy_of_build(project, tmp_path / "level")
    assert rules_reading(root, "intervals.level") == {
        "summarize", "pope_score", "phd_score", "nope_score", "caos_paired",
        "hallusionbench_score", "trihe_judge", "figure", "explorer",
    }  # fmt: skip
    edit_params(root, lambda p: p["intervals"].update(level=0.9))
    jobs = planned_jobs(root, "results/tables/", "all")
    assert "summarize" in jobs, jobs
    assert not {"data_items", "generate", "extract", "oracle", "embed", "score"} & set(jobs), jobs


def test_caos_tables_have_csv_twins(project: Path) -> None:
    """Each CAOS LaTeX table has a long-format CSV twin with the same numbers."""
    import csv

    folder = project / "results/tables/demo"
    for name in ("caos_table1", "caos_table2", "caos_ratios", "caos_sensitivity"):
        rows = list(csv.DictReader((folder / f"{name}.csv").open(encoding="utf-8")))
        assert rows and list(rows[0]) == list(TWIN_COLUMNS)
        text = (folder / f"{name}.tex").read_text(encoding="utf-8")
        first = next(r for r in rows if r["value"] and r["model"] == "sim-precise")
        assert f"{float(first['value']):.2f}" in text, (name, first)


def test_paper_is_built_by_the_dag(project: Path, tmp_path: Path) -> None:
    """The report is a rule: it builds with the demo section; a profile that has run (its
    results/report/<profile>/ exists) adds its section, and a missing input fails the build."""
    assert shutil.which("pdflatex"), "pdflatex is required (Debian texlive-latex-recommended)"
    project = copy_of_build(project, tmp_path / "built")  # the shared build stays as built
    snakemake(project, "--cores", "2", "results/paper/report.pdf")
    assert (project / "results/paper/report.pdf").stat().st_size > 10_000
    sections = (project / "results/paper/sections.tex").read_text(encoding="utf-8")
    assert "\\input{sections/demo}" in sections and "caos-real" not in sections
    again = tmp_path / "again.pdf"  # a second build (other temp folder) gives the same bytes
    run(["halluscope", "stage", "paper", "--main", "paper/main.tex",
         "--sections", "paper/sections/demo.tex",
         "--out-sections", "results/paper/sections.tex", "--out", str(again)], project)  # fmt: skip
    assert again.read_bytes() == (project / "results/paper/report.pdf").read_bytes()
    root = copy_project(tmp_path / "copy")
    (root / "results/report/phd-ccs").mkdir(parents=True)  # "ran", but its table is missing
    proc = snakemake(root, "-n", "--cores", "1", "results/paper/report.pdf", check=False)
    assert proc.returncode != 0
    assert "results/report/phd-ccs/phd_table.tex" in proc.stdout + proc.stderr


def rules_reading(root: Path, key: str) -> set[str]:
    """The rules whose settings read ``key`` (or the block holding it), on params.yaml."""
    from rule_settings import read_keys, resolve, rules

    from halluscope.config import load

    config, parts = load(root / "params.yaml"), tuple(key.split("."))
    return {
        rule.name
        for rule in rules(root)
        if rule.settings
        and any(
            parts[: len(read)] == read for read in read_keys([resolve(rule.settings, root)], config)
        )
    }


def test_changing_k_reruns_only_what_reads_it(project: Path, tmp_path: Path) -> None:
    """The jobs whose settings read caos.k rerun, and those that read their outputs; nothing
    upstream (the settings of generate, extract, oracle and embed do not read it)."""
    root = copy_of_build(project, tmp_path / "k")
    reading = rules_reading(root, "caos.k")
    assert {"score", "figure", "caos_tables", "caos_sensitivity"} <= reading
    edit_params(root, lambda p: p["caos"].update(k=5))
    jobs = planned_jobs(root, "results/tables/", "all")
    assert not {"data_items", "generate", "extract", "oracle", "embed"} & set(jobs), jobs
    assert jobs["score"] == 3 * 2  # one job per model x embedder scores all 14 instructions
    # not in the demo: the view of published values, the with/without-LLM table of llm500
    assert reading - {"caos_sensitivity_p", "llm_comparison"} <= set(jobs)
    # caos_paired reads the per-caption score files, not caos.k
    assert set(jobs) - reading == {"summarize", "caos_paired", "tables", "metrics", "all"}, jobs


def test_changing_a_figure_setting_reruns_the_figures_only(project: Path, tmp_path: Path) -> None:
    """figures.dpi is read by the figure rules' settings alone: nothing else is planned."""
    root = copy_of_build(project, tmp_path / "dpi")
    reading = rules_reading(root, "figures.dpi")
    assert reading == {
        "figure",
        "trihe_figure",
        "phd_figure",
        "nope_figure",
        "hallusionbench_figure",
    }
    edit_params(root, lambda p: p["figures"].update(dpi=100))
    jobs = planned_jobs(root, "results/tables/", "all")
    assert set(jobs) - {"all"} == reading, jobs


def test_fifteenth_instruction_runs_only_new_jobs(project: Path, tmp_path: Path) -> None:
    root = copy_of_build(project, tmp_path / "i15")

    def add(p: dict) -> None:
        p["instructions"]["i15"] = "Describe everything you can see in the image."
        p["generate"]["instructions"].append("i15")

    edit_params(root, add)
    jobs = planned_jobs(root, "results/tables/", "all")
    n_models = 3
    assert jobs["generate"] == n_models and jobs["noun_tags"] == n_models
    # each model's noun tags are an input of all its extract jobs, which rerun on cached replies
    assert jobs["extract"] == jobs["oracle"] == n_models * 15
    # a score job covers every instruction of a model x embedder: all 3 x 2 rescore (seconds)
    assert jobs["score"] == n_models * 2
    assert "data_items" not in jobs


def test_a_changed_caption_file_reextracts_its_model(project: Path, tmp_path: Path) -> None:
    """A caption file changed by hand is a replaced output: its generate job rebuilds it (the
    provenance check), then its model's noun tags are remade and every extract and oracle job of
    that model reruns (the tags are an input of each); the other models' do not."""
    root = copy_of_build(project, tmp_path / "caption")
    captions = root / "results/responses/demo/sim-precise/i05.jsonl"
    first, *rest = captions.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(first)
    record["text"] += " A kite flies above the trees."
    captions.write_text(json.dumps(record) + "\n" + "".join(rest), encoding="utf-8")
    jobs = planned_jobs(root, "results/tables/", "all")
    assert jobs["generate"] == jobs["noun_tags"] == 1, jobs
    assert jobs["extract"] == jobs["oracle"] == 14, jobs


def test_editing_the_extract_stage_reruns_every_extract_job(project: Path, tmp_path: Path) -> None:
    """The noun tags and the object lists share the extract code: editing it reruns both, every
    extract job included (none is skipped because its noun tags are remade in the same run)."""
    root = copy_of_build(project, tmp_path / "extract-code")
    module = root / "src/halluscope/benchmarks/caos/captions/extract.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    jobs = planned_jobs(root, "results/tables/", "all")
    assert jobs["noun_tags"] == 3 and jobs["extract"] == 42, jobs
    assert "generate" not in jobs


def test_editing_a_stage_module_reruns_that_stage_only(project: Path, tmp_path: Path) -> None:
    """Package code is part of each job's params (rules/common.smk code_version): editing the
    PhD stage reruns the PhD jobs and what pools them, nothing upstream or of other benchmarks."""
    root = copy_of_build(project, tmp_path / "code")
    module = root / "src/halluscope/benchmarks/phd/stages.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    jobs = planned_jobs(root, "results/tables/", "all")
    assert {"phd_prompts", "phd_answers", "phd_score"} <= set(jobs), jobs
    assert jobs["phd_answers"] == 3
    assert not {"data_items", "generate", "extract", "oracle", "embed", "score"} & set(jobs), jobs
    assert not {j for j in jobs if j.startswith(("trihe_", "nope_", "pope_"))}, jobs


def test_editing_a_module_only_score_imports_reruns_score_and_dependents(
    project: Path, tmp_path: Path
) -> None:
    """benchmarks/caos/metric.py is reached only through the imports of the score stage
    (benchmarks/caos/score.py -> metric.py) and of the explorer page (which marks objects as
    the scorer does): the computed code set reruns exactly score, summarize, what reads the
    summary and the page, nothing upstream and no other benchmark."""
    from halluscope.registry import STAGES, code_files

    module = "src/halluscope/benchmarks/caos/metric.py"
    holders = [s.name for s in STAGES if (project / module) in code_files(s.name, project)]
    assert holders == ["score", "explorer"], holders
    root = copy_of_build(project, tmp_path / "caos-edit")
    path = root / module
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    jobs = planned_jobs(root, "results/tables/", "all")
    assert jobs["score"] == 3 * 2 and jobs["summarize"] == 1, jobs
    upstream = {"data_items", "generate", "extract", "oracle", "embed"}
    assert not upstream & set(jobs), jobs
    assert not {j for j in jobs if j.startswith(("trihe_", "nope_", "pope_", "phd_"))}, jobs
    assert set(jobs) <= {"score", "summarize", "figure", "caos_tables", "caos_sensitivity",
                         "caos_paired", "tables", "metrics", "explorer", "all"}, jobs  # fmt: skip


def test_dvc_repro_reruns_nothing_after_commit(project: Path, tmp_path: Path) -> None:
    root = copy_of_build(project, tmp_path / "repro")  # git and dvc commit write into it
    run(["git", "init", "-q"], root)
    run(["git", "add", "-A"], root)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], root)
    run(["dvc", "commit", "--force", "--quiet"], root)
    proc = run(["dvc", "repro"], root)
    assert "Running stage" not in proc.stdout, proc.stdout
    assert "up to date" in proc.stdout.lower()


def test_a_score_job_writes_what_one_instruction_alone_writes(project: Path, tmp_path) -> None:
    """Rule score runs every instruction of a model x embedder in one process; scoring one
    instruction alone gives the same bytes, and unpaired flags are refused by name."""
    from halluscope.benchmarks.caos.score import CaosScoreSettings

    config = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    every = CaosScoreSettings.from_config(config, "minilm")
    base = [
        "halluscope",
        "stage",
        "score",
        "--items",
        "results/data/demo/items.jsonl",
        "--vectors",
        "results/embeddings/demo/minilm.npz",
        "--model-id",
        "sim-verbose",
    ]
    for instruction in ("i02", "i09"):
        one = dataclasses.replace(every, instructions=[instruction]).to_json()
        run([*base, "--settings", one,
             "--objects", f"results/objects/demo/sim-verbose/{instruction}.jsonl",
             "--oracle", f"results/oracle/demo/sim-verbose/{instruction}.jsonl",
             "--out-captions", str(tmp_path / f"{instruction}.captions.csv"),
             "--out-objects", str(tmp_path / f"{instruction}.objects.csv")], project)  # fmt: skip
        for kind in ("captions", "objects"):
            built = project / f"results/scores/demo/minilm/sim-verbose/{instruction}.{kind}.csv"
            assert (tmp_path / f"{instruction}.{kind}.csv").read_bytes() == built.read_bytes()
    two = dataclasses.replace(every, instructions=["i02", "i09"]).to_json()
    unpaired = run([*base, "--settings", two,
                    "--objects", "results/objects/demo/sim-verbose/i02.jsonl",
                    "--oracle", "results/oracle/demo/sim-verbose/i02.jsonl",
                    "--out-captions", str(tmp_path / "x.csv"),
                    "--out-objects", str(tmp_path / "y.csv")], project, check=False)  # fmt: skip
    assert unpaired.returncode != 0
    assert "1 files each, expected one per instruction of --settings (2)" in unpaired.stderr
    assert not (tmp_path / "x.csv").exists()
