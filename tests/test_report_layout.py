"""The reproduction report's layout: it compiles with no overfull box over 10 pt and no undefined
or doubly defined reference, no table is set below 8 pt (a wide table is turned, never shrunk
that far), and the abstract names exactly the sections the build includes.

Font sizes are read from LaTeX itself: the report is compiled once more with a hook that writes,
for every ``\\resizebox`` (the tables' shrink-to-fit), the font size and how far it shrinks, and
for every ``tabular`` its font size (:func:`table_sizes`). pdflatex is required, as in
tests/test_report.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from halluscope.benchmarks.caos import reproduction
from halluscope.benchmarks.caos import sensitivity_p as sp
from halluscope.benchmarks.caos.published import PUBLISHED_IDS, PUBLISHED_TABLE1
from halluscope.benchmarks.caos.sensitivity import sensitivity_latex
from halluscope.benchmarks.caos.tables import (
    BOUNDED_COLUMNS,
    CAOS_COLUMNS,
    CAOS_METRIC,
    table1_latex,
    table1_records,
)
from halluscope.report.latex import twin_record
from halluscope.report.paper import read_section, sections, sections_tex

ROOT = Path(__file__).resolve().parents[1]
#: the smallest font size a table may have, in pt (the report is set in 11 pt)
MIN_TABLE_PT = 8.0
#: the largest overfull box LaTeX may report, in pt
MAX_OVERFULL_PT = 10.0
#: written by the hook for each \resizebox and each tabular (the LaTeX kernel's hooks)
HOOK = (
    r"\AtBeginDocument{\let\HSresizebox\resizebox\renewcommand\resizebox[3]{\sbox0{#3}"
    r"\typeout{HALLUSCOPE-SCALED size=\csname f@size\endcsname\space natural=\the\wd0 "
    r"\space line=\the\linewidth}\HSresizebox{#1}{#2}{#3}}}"
    r"\AddToHook{env/tabular/begin}{\typeout{HALLUSCOPE-TABULAR size=\csname f@size\endcsname}}"
)
PAPER_MODELS = list(PUBLISHED_IDS)  # the five LVLMs of the CAOS paper (profile pope-captions)


def pdflatex() -> str:
    path = shutil.which("pdflatex")
    assert path is not None, "pdflatex is required (apt-get install texlive-latex-recommended)"
    return path


def scaled_sizes(log: str) -> list[float]:
    """The font size (pt) of every table in a ``\\resizebox`` times how far it shrinks."""
    scaled = re.findall(r"HALLUSCOPE-SCALED size=([\d.]+) natural=([\d.]+)pt line=([\d.]+)pt", log)
    return [float(s) * min(1.0, float(line) / float(w)) for s, w, line in scaled]


def tabular_sizes(log: str) -> list[float]:
    """The font size (pt) of every tabular (before any shrink)."""
    return [float(s) for s in re.findall(r"HALLUSCOPE-TABULAR size=([\d.]+)", log)]


def table_sizes(log: str) -> list[float]:
    """The font size (pt) every table is set in: :func:`scaled_sizes` and
    :func:`tabular_sizes` (a tabular that is not shrunk)."""
    return scaled_sizes(log) + tabular_sizes(log)


def problems(log: str) -> list[str]:
    """What LaTeX's log says is wrong with the layout: undefined or doubly defined references
    and overfull boxes over :data:`MAX_OVERFULL_PT`."""
    found = re.findall(
        r"^LaTeX Warning: (?:Reference|Citation) .*? undefined.*$"
        r"|^LaTeX Warning: There were undefined references.*$"
        r"|^LaTeX Warning: Label .* multiply defined.*$",
        log,
        re.MULTILINE,
    )
    for line, size in re.findall(r"^(Overfull \\[hv]box \(([\d.]+)pt too \w+\).*)$", log, re.M):
        if float(size) > MAX_OVERFULL_PT:
            found.append(line)
    return found


def measure(folder: Path, main: str, out: Path) -> str:
    """LaTeX's log of ``main`` (in ``folder``) compiled once with :data:`HOOK`."""
    out.mkdir(parents=True, exist_ok=True)
    run = subprocess.run(
        [pdflatex(), "-interaction=nonstopmode", "-halt-on-error", f"-output-directory={out}",
         "-jobname=layout", HOOK + rf"\input{{{main}}}"],
        cwd=folder, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    log = (out / "layout.log").read_text(encoding="utf-8", errors="replace")
    assert run.returncode == 0, log[-3000:]
    return log


def preamble() -> str:
    """paper/main.tex up to ``\\begin{document}``, without the generated section list."""
    head = (ROOT / "paper/main.tex").read_text(encoding="utf-8").split(r"\begin{document}")[0]
    return head.replace(r"\input{../results/paper/sections.tex}", "")


def abstract(main: str) -> str:
    return main.split(r"\begin{abstract}")[1].split(r"\end{abstract}")[0]


def generated_list(sections_tex_text: str) -> str:
    """The body of ``\\reportabstractlist`` in a generated sections.tex."""
    match = re.search(r"\\newcommand\{\\reportabstractlist\}\{(.*)\}\n", sections_tex_text)
    assert match, sections_tex_text
    return match[1]


def assert_names_exactly(text: str, included: list, every: list) -> None:
    for section in every:
        named = section.summary in text and f"\\ref{{{section.label}}}" in text
        assert named == (section in included), (section.path, text)
    assert text.count(r"\ref{") == len(included), text


# ------------------------------------------------------------------------ the abstract


def test_the_abstract_lists_exactly_the_included_sections() -> None:
    """The abstract's list is generated from the section list the build includes; main.tex's own
    abstract text names no section."""
    every = sections(ROOT)
    assert len({s.label for s in every}) == len(every)
    main = (ROOT / "paper/main.tex").read_text(encoding="utf-8")
    assert r"\reportabstractlist" in abstract(main)
    for section in every:
        assert section.summary not in main and section.label not in main
    for included in [every, *([s] for s in every), [every[0], every[-1]]]:
        text = sections_tex(included, ROOT / "paper/main.tex", ROOT)
        assert_names_exactly(generated_list(text), included, every)
        inputs = re.findall(r"\\input\{([^}]+)\}", text)
        assert len(inputs) == len(included)


# ------------------------------------------------- the real-data tables (profile pope-captions)


def five_model_summary() -> pd.DataFrame:
    """A summary.csv of the CAOS paper's five LVLMs with unverified objects (so Table 1 has
    its bound rows), two embedders, the pooled Table 1 rows."""
    rows = []
    for i, model in enumerate(PAPER_MODELS):
        for embedder in ("glove", "minilm"):
            row = {"model": model, "embedder": embedder, "instruction_id": "table1"}
            row |= {"precision": 0.81, "precision_micro": 0.8, "recall": 0.62}
            row |= {"objects_per_caption": 4.41, "CHAIR_S": 0.26, "POPE_F1": float("nan")}
            row |= {"n_unverified": 100 + i, "n_objects": 1000}
            row |= {column: 0.5 + i / 100 for column in CAOS_COLUMNS}
            for column in BOUNDED_COLUMNS:
                row |= {f"{column}_if_present": 0.55, f"{column}_if_absent": 0.48}
            rows.append(row)
    return pd.DataFrame(rows)


def sensitivity_records() -> list[dict]:
    """The sensitivity table's records, one per alternative (as sensitivity_records writes)."""
    metrics = ["precision [micro]", "recall [micro]", "# Objects [every mention]"]
    by_embedder = [f"{m} [mean of per-caption ratios]" for m in ("CAOS_T/X", "CAOS_X/K")]
    by_embedder += ["CAOS_avg [mean of per-caption ratios]"]
    for order in ("coco-instances", "coco-images", "paper-examples"):
        by_embedder += [f"{m} [K={order}]" for m in ("CAOS_K", "CAOS_X/K", "CAOS_avg")]
    records = [twin_record(m, "", x, 0.73, 0.79) for x in metrics for m in PAPER_MODELS]
    for embedder in ("glove", "minilm"):
        for metric in by_embedder:
            records += [twin_record(m, embedder, metric, 0.55, 0.54) for m in PAPER_MODELS]
    return records


def rate_records() -> list[dict]:
    """The rate-p table's records (as rate_records writes): p, then each cell at rate p with
    the paper's value, and its bounds."""
    records = [twin_record(m, "", sp.P_FROM_CHAIR, 0.048) for m in PAPER_MODELS]
    records += [twin_record(m, "", sp.P_FROM_PRECISION, 0.013) for m in PAPER_MODELS]
    blocks = [("", "precision"), ("", "CHAIR_S")]
    blocks += [(e, CAOS_METRIC[c]) for e in ("glove", "minilm") for c in CAOS_COLUMNS]
    for embedding, metric in blocks:
        at_rate = metric + sp.AT_RATE
        records += [twin_record(m, embedding, at_rate, 0.84, 0.85) for m in PAPER_MODELS]
        for suffix in (" [unverified present]", " [unverified absent]"):
            records += [twin_record(m, embedding, metric + suffix, 0.55) for m in PAPER_MODELS]
    return records


def test_the_real_caption_tables_are_set_at_8_pt_or_more(tmp_path: Path) -> None:
    """Section (a)'s wide tables (five LVLMs, published columns, bound rows), compiled with the
    report's preamble: none below 8 pt, none overfull."""
    summary = five_model_summary()
    records = table1_records(summary, PAPER_MODELS, ["glove", "minilm"], PUBLISHED_TABLE1)
    rates = rate_records()
    tables = {
        "comparison": reproduction.comparison_latex(records, PAPER_MODELS, 2),
        "table1": table1_latex(
            summary, PAPER_MODELS, ["glove", "minilm"], 2, False, PUBLISHED_TABLE1,
            records=records, label="tab:pope-captions:caos-table1",
        ),
        "sensitivity": sensitivity_latex(sensitivity_records(), PAPER_MODELS, 2, False),
        "rate": sp.rate_latex(rates, PAPER_MODELS, 2, 3)
        + sp.agreement_latex(records, rates, 2, "tab:agreement"),
    }  # fmt: skip
    assert r"\begin{sidewaystable}" in tables["table1"]  # ten columns of numbers: turned
    assert r"\cmidrule(lr){2-4}" in tables["comparison"]  # one rule per model's columns
    for name, text in tables.items():
        (tmp_path / f"{name}.tex").write_text(text, encoding="utf-8")
    body = "".join(rf"\input{{{name}}}\clearpage" for name in tables)
    document = preamble() + "\\begin{document}\n" + body + "\n\\end{document}\n"
    (tmp_path / "doc.tex").write_text(document, encoding="utf-8")
    log = measure(tmp_path, "doc.tex", tmp_path / "out")
    assert len(scaled_sizes(log)) == len(tables) + 1, log[-2000:]  # + the agreement table
    assert min(table_sizes(log)) >= MIN_TABLE_PT, table_sizes(log)
    assert [p for p in problems(log) if "undefined" not in p] == []  # labels of other tables


# ------------------------------------------------------------------ the demo report, built


@pytest.mark.slow
def test_demo_report_layout(demo_build: Path, tmp_path: Path) -> None:
    """The demo report through its rule: LaTeX's log in logs/paper.log shows no undefined or
    doubly defined reference and no overfull box over 10 pt; every table is set at 8 pt or
    more; the abstract names exactly the sections of results/paper/sections.tex."""
    from pipeline_helpers import copy_of_build, snakemake

    pdflatex()
    project = copy_of_build(demo_build, tmp_path / "built")
    snakemake(project, "--cores", "1", "results/paper/report.pdf")
    log = (project / "logs/paper.log").read_text(encoding="utf-8", errors="replace")
    assert "This is pdfTeX" in log and "Output written on" in log  # LaTeX's own log
    assert problems(log) == []

    generated = (project / "results/paper/sections.tex").read_text(encoding="utf-8")
    paper = project / "paper"
    included = [
        read_section((paper / f"{name}.tex").resolve(), project)
        for name in re.findall(r"\\input\{([^}]+)\}", generated)
    ]
    assert [s.path for s in included] == ["paper/sections/demo.tex"]
    assert_names_exactly(generated_list(generated), included, sections(project))

    measured = measure(paper, "main.tex", tmp_path / "measure")
    tables = [(project / f).read_text("utf-8") for f in included[0].inputs if f.endswith(".tex")]
    assert len(tabular_sizes(measured)) >= sum(t.count(r"\begin{tabular}") for t in tables)
    assert len(scaled_sizes(measured)) == sum(t.count(r"\resizebox") for t in tables)
    assert min(table_sizes(measured)) >= MIN_TABLE_PT, table_sizes(measured)
