"""The closing block of a run that built the tables (the Snakefile's ``onsuccess``): where the
tables, figures, metrics and report are, and a few headline numbers per model.

The numbers are the run's headline metrics (``metrics/<profile>/<model>.json``,
:mod:`halluscope.report.headline`), read, never computed again, in the order of
:func:`~halluscope.report.headline.all_headlines`, at most :data:`MAX_ROWS` of them, each with
its interval from the same table cell (the CSV twin's ``lo`` and ``hi``) when it has one. The
headline files themselves carry no interval: three columns per number would take
``dvc exp show --only-changed`` past a terminal's width.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from halluscope.report.headline import all_headlines

MAX_ROWS = 5
MAX_MODELS = 5


def _count(folder: Path, suffix: str) -> int:
    return sum(1 for p in folder.iterdir() if p.suffix == suffix) if folder.is_dir() else 0


def headline_numbers(folder: Path) -> dict[str, dict[str, Any]]:
    """``{model file stem: {name: value | {embedder: value}}}`` ({} when there are none)."""
    if not folder.is_dir():
        return {}
    files = sorted(folder.glob("*.json"))
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in files}


def headline_bounds(folder: Path) -> dict[str, dict[str, tuple[float, float]]]:
    """``{model file stem: {name: (lo, hi)}}``: each headline number's interval, read from the
    same twin cells (``folder``: the profile's tables) that the headline files were read from."""
    from halluscope.report.headline import headline_metrics, model_filename, read_twins

    if not folder.is_dir():
        return {}
    twins = read_twins(sorted(folder.glob("*.csv")))
    lo, hi = headline_metrics(twins, "lo"), headline_metrics(twins, "hi")
    return {
        model_filename(model).removesuffix(".json"): {
            name: (low, hi[model][name]) for name, low in lows.items() if name in hi.get(model, {})
        }
        for model, lows in lo.items()
    }


def _rank(name: str) -> int:
    """The position of the headline ``name`` in all_headlines() (a ``{}`` name matches its
    prefix)."""
    headlines = all_headlines()
    for index, head in enumerate(headlines):
        if name == head.name or ("{}" in head.name and name.startswith(head.name.split("{}")[0])):
            return index
    return len(headlines)


def _rows(numbers: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, dict[str, float]]]:
    """``(row label, {model: value})`` in headline order."""
    names = sorted({name for values in numbers.values() for name in values}, key=_rank)
    rows = []
    for name in names:
        cells = {
            model: value
            for model, values in numbers.items()
            if isinstance(value := values.get(name), int | float)
        }
        if cells:
            rows.append((name, cells))
    return rows[:MAX_ROWS]


def _number(value: float, bounds: tuple[float, float] | None) -> str:
    """3 decimals (every headline number is a fraction, halluscope.report.headline), and its
    interval at 2 when the table has one."""
    return f"{value:.3f}" + (f" [{bounds[0]:.2f},{bounds[1]:.2f}]" if bounds else "")


def report_profiles(root: Path) -> set[str]:
    """The profiles the reproduction report has a section for (an own-captions profile has
    none: pointing at the report would send the user to a PDF without their numbers)."""
    from halluscope.data.fetch import project_root
    from halluscope.report.paper import sections

    base = root if (root / "paper" / "sections").is_dir() else project_root()
    return {section.profile for section in sections(base)}


def closing_block(config: Mapping[str, Any], root: Path = Path("."), numbers: bool = True) -> str:
    """The block's lines for the run's profile (``config["profile"]``); ``numbers=False`` when
    the run did not build the metrics (they could be older than its tables)."""
    profile = config["profile"]
    tables = Path("results/tables") / profile
    figures = Path("results/figures") / profile
    full = Path("results/metrics") / f"{profile}.json"
    headline = Path("metrics") / profile
    models = config.get("generate", {}).get("models", [])
    from halluscope.report import is_simulated

    simulated = is_simulated(models)
    note = " (simulated LVLMs: test instruments)" if simulated else ""
    lines = [f"Done: profile {profile}{note}"]
    n_tables = _count(root / tables, ".tex")
    lines.append(f"  tables   {tables}/ ({n_tables} LaTeX tables, CSV twins beside them)")
    n_figures = _count(root / figures, ".pdf")
    if n_figures:
        lines.append(f"  figures  {figures}/ ({n_figures} figures, PDF and PNG)")
    if (root / full).is_file():
        extra = f"; per model: {headline}/" if (root / headline).is_dir() else ""
        lines.append(f"  metrics  {full}{extra}")
    report = Path("results/paper/report.pdf")
    if profile in report_profiles(root):  # a profile the report has no section for: no line
        if (root / report).is_file():
            lines.append(f"  report   {report}")
        else:
            lines.append(f"  report   make paper -> {report}")
    rows = _rows(headline_numbers(root / headline)) if numbers else []
    if rows:
        bounds = headline_bounds(root / tables)
        cells_of = [
            {m: _number(v, bounds.get(m, {}).get(label)) for m, v in cells.items()}
            for label, cells in rows
        ]
        shown = sorted({m for _, cells in rows for m in cells})[:MAX_MODELS]
        label_width = max(len("Headline (per model)") - 2, *(len(label) for label, _ in rows)) + 2
        longest = max(len(text) for formatted in cells_of for text in formatted.values())
        widths = [max(len(m), longest, 6) + 2 for m in shown]
        header = "Headline (per model)".ljust(label_width + 2)
        lines.append(header + "".join(m.rjust(w) for m, w in zip(shown, widths, strict=True)))
        for (label, _), formatted in zip(rows, cells_of, strict=True):
            values = [formatted.get(m, "-") for m in shown]
            lines.append(
                "  " + label.ljust(label_width)
                + "".join(v.rjust(w) for v, w in zip(values, widths, strict=True))
            )  # fmt: skip
        hidden = len({m for _, cells in rows for m in cells}) - len(shown)
        if hidden:
            lines.append(f"  (+{hidden} more models in {headline}/)")
    return "\n".join(lines)


def log_closing_block(workflow: Any, config: Mapping[str, Any]) -> None:
    """Log the block at the end of a successful run whose DAG holds the ``tables`` job (the
    headline numbers only when it holds ``metrics`` too). The record is marked so that the
    repository's logger (:mod:`snakemake_logger_plugin_halluscope`) prints it last."""
    from snakemake.logging import logger

    built = {job.rule.name for job in workflow.dag.jobs}
    if workflow.is_main_process and "tables" in built:
        block = closing_block(config, numbers="metrics" in built)
        logger.info(block, extra={"halluscope_closing": True})
