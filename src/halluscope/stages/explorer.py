"""Explorer stage: every caption and answer of a profile, per image, in one offline HTML page.

Why: the tables give rates, and a reader judging a model also reads its examples: which objects
a caption hallucinates, which out-of-domain objects the oracle rejected, which answers went
wrong. The stage knows no benchmark: every enabled benchmark that declares an explorer
part (:mod:`halluscope.explorer.records` says what one holds) reads its own result files, the
ones its tables read, and this stage puts them together with the profile's items and
thumbnails (:mod:`halluscope.explorer.page`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from halluscope.io import InputError
from halluscope.settings import StageSettings, derived, param, plain
from halluscope.stage_command import stage

PART = "explorer"


def plugins() -> dict[str, ModuleType]:
    """Benchmark name -> its ``explorer`` module, registry order (halluscope.benchmarks)."""
    from halluscope.benchmarks import import_plugins

    return {module.__name__.split(".")[-2]: module for module in import_plugins(PART)}


@dataclass(frozen=True)
class ExplorerSettings(StageSettings):
    """The profile, its models (the page's order), the intervals' level, and for every enabled
    benchmark with an explorer part the params its entries depend on (that part's
    ``options(config)``)."""

    profile: str = param("profile")
    models: list[str] = param("generate.models")
    level: float = param("intervals.level")  # the level the header names
    benchmarks: dict[str, dict[str, Any]] = derived(
        lambda config: benchmark_options(config), default_factory=dict
    )


def benchmark_options(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per enabled benchmark with an explorer part, the params its entries depend on."""
    from halluscope.benchmarks import by_name

    return {
        name: plain(module.options(config))
        for name, module in plugins().items()
        if by_name(name).enabled(config)
    }


def input_files(settings: ExplorerSettings) -> list[str]:
    """The result files the page reads (the rule's inputs besides the items)."""
    return [
        path
        for name, module in plugins().items()  # registry order
        if name in settings.benchmarks
        for path in module.files(settings.benchmarks[name], settings.profile)
    ]


def rule_inputs(config: Mapping[str, Any], profile: str) -> dict[str, Any]:
    """Rule ``explorer``'s named inputs: the items, the files :func:`input_files` lists, and
    the tables' CSV twins the header's headline numbers are read from."""
    from halluscope.benchmarks import BENCHMARKS

    return {
        "item_file": f"results/data/{profile}/items.jsonl",
        "results": input_files(ExplorerSettings.from_config(config)),
        "tables": [
            f
            for b in BENCHMARKS
            for f in b.table_files(dict(config), profile)
            if f.endswith(".csv")
        ],
    }


@stage("explorer")
def explorer(
    settings: ExplorerSettings, items: Path, out: Path, tables: list[Path] | None = None
) -> dict[str, Any]:
    """The explorer page of a profile (results/explorer/<profile>/index.html).

    Its header: each model's headline numbers with their intervals, read from the ``tables``'
    CSV twins as ``metrics/<profile>/`` and the closing block read them. Per image (worst
    first): its thumbnail, ground truth, every model's caption per instruction with its objects
    marked, and every benchmark's answers; the result files are read from the working
    directory, as the rule lists them."""
    from halluscope.explorer.page import page_data, render, thumbnail
    from halluscope.io import atomic_write_text
    from halluscope.stages.data import load_items

    loaded = load_items(items)
    found = plugins()
    unknown = sorted(set(settings.benchmarks) - set(found))
    if unknown:
        raise InputError(f"--settings: benchmarks {unknown} have no explorer part")
    contributions = {
        name: module.contribution(settings.benchmarks[name], settings.profile, loaded)
        for name, module in found.items()  # registry order
        if name in settings.benchmarks
    }
    for contribution in contributions.values():  # a benchmark's own items (its figures)
        for image_id, record in contribution.items.items():
            loaded.setdefault(image_id, record)
    thumbnails = {
        image_id: thumbnail(Path(item["image"])) if item.get("image") else None
        for image_id, item in loaded.items()
    }
    data = page_data(settings.profile, settings.models, loaded, contributions, thumbnails)
    data["headline"] = headline_rows(tables or [])
    data["headlineLevel"] = f"{settings.level * 100:g}%" if data["headline"] else None
    page = render(data)
    atomic_write_text(out, page)
    return {"bytes": len(page.encode("utf-8")), **data["summary"]}


def headline_rows(tables: list[Path]) -> list[list[Any]]:
    """``[model, name, value, lo, hi]`` per headline number (:mod:`halluscope.report.headline`)
    of the CSV twins, models and names in the twins' order; null where a cell has no interval."""
    from halluscope.report.headline import headline_metrics, read_twins

    twins = read_twins(tables)
    value, lo, hi = (headline_metrics(twins, field) for field in ("value", "lo", "hi"))
    return [
        [model, name, number, lo.get(model, {}).get(name), hi.get(model, {}).get(name)]
        for model, numbers in value.items()
        for name, number in numbers.items()
    ]
