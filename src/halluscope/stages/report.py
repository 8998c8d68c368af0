"""Report stages shared by every benchmark: the metrics JSON, the assembly of
``results/tables`` and the reproduction report (pdflatex). The CAOS tables and figures are in
:mod:`halluscope.benchmarks.caos.report`."""

from __future__ import annotations

import shutil
from pathlib import Path

from halluscope.io import InputError, atomic_write_bytes, atomic_write_text
from halluscope.stage_command import stage


@stage("metrics")
def metrics(tables: list[Path], /, *, out: Path, headline_dir: Path | None = None) -> None:
    """Metrics JSON from the CSV twins, and the headline numbers (one small JSON per model).

    ``{table: {model: {embedding: {metric: value}}}}`` from the long-format CSV twins (an
    empty embedding is left out of the nesting): every table cell, compared across experiments
    by ``dvc metrics diff`` on this file. Rows with no value are left out. With
    ``headline_dir``, also the headline numbers (:func:`write_headline`)."""
    import json

    from halluscope.report.headline import read_twins

    twins = read_twins(tables)
    by_table: dict = {}
    for stem, rows in twins.items():
        table = by_table.setdefault(stem, {})
        for row in rows:
            if row["value"] == "":
                continue
            node = table.setdefault(row["model"], {})
            if row["embedding"]:
                node = node.setdefault(row["embedding"], {})
            node[row["metric"]] = round(float(row["value"]), 6)
    atomic_write_text(out, json.dumps(by_table, indent=1, sort_keys=True) + "\n")
    if headline_dir is not None:
        write_headline(twins, headline_dir)


def write_headline(twins: dict[str, list[dict[str, str]]], folder: Path) -> None:
    """The headline numbers of the twins' rows (table stem -> rows), one JSON per model in
    ``folder`` (:mod:`halluscope.report.headline`): DVC's ``metrics:``, one row per model in
    ``dvc metrics show``. The folder is built beside it and renamed into place whole, so it never
    keeps the file of a model no longer run."""
    import json

    from halluscope.report.headline import headline_metrics, model_filename

    owner: dict[str, str] = {}
    files: dict[str, str] = {}
    for model, values in headline_metrics(twins).items():
        name = model_filename(model)
        if name in owner:
            raise InputError(f"models {owner[name]!r} and {model!r} share the file name {name}")
        owner[name] = model
        files[name] = json.dumps(values, indent=1, sort_keys=True) + "\n"
    tmp = folder.with_name(f".{folder.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, text in files.items():
        atomic_write_text(tmp / name, text)
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)


@stage("paper")
def paper(*, main: Path, sections: tuple[Path, ...] = (), out_sections: Path, out: Path) -> None:
    """Build the reproduction report with pdflatex.

    :func:`halluscope.report.paper.build` of the section files ``sections``: the section list,
    the PDF, and pdflatex's log of the last pass on stdout (the rule's log keeps its
    warnings)."""
    from halluscope.report.paper import build

    print(build(main, sections, out_sections, out, Path.cwd()), end="")


@stage("assemble")
def assemble(tables: list[Path], /, *, out_dir: Path) -> None:
    """results/tables/<profile>/: every table with its CSV twin.

    Each table (``results/report/<profile>/<name>``) copied to ``<out_dir>/<profile>/<name>``:
    the active profile's and every other profile's that has run, so running one profile never
    removes another's tables (Snakemake empties a ``directory()`` output before the job; one
    rule owns that folder)."""
    tmp = out_dir.with_name(out_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for table in tables:
        (tmp / table.parent.name).mkdir(exist_ok=True)
        atomic_write_bytes(tmp / table.parent.name / table.name, table.read_bytes())
    shutil.rmtree(out_dir, ignore_errors=True)
    tmp.rename(out_dir)
