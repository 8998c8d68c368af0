"""The demo's explorer page drawn by a real browser (Debian's headless chromium): the counts it
renders are the score files' counts, the worst images come first, and a filter (one model,
hallucinated only) changes what is shown to exactly that model's hallucinating captions.

Slow: the session's demo build (rule ``all`` writes the page; a build made before the page
existed gets it in a copy). Needs chromium (``make system-deps``). The screenshot and the DOM
stay in the test's tmp folder (``explorer.png``, ``dom.html``, ``dom-filtered.html``).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from test_dvc_plots_browser import CHROMIUM, chromium
from test_dvc_yaml import dvc_profile

from halluscope.config import load

pytestmark = pytest.mark.slow

FILTER = {"model": "sim-precise", "hallucinated": "1"}
SECTION = re.compile(r'<section class="image" data-image="([^"]+)" data-hallucinations="(\d+)"')
ROW = re.compile(
    r'<tr class="caption" data-model="([^"]+)" data-instruction="([^"]+)" '
    r'data-hallucinated="(\d+)"'
)


def explorer_page(demo_build: Path, tmp_path: Path, profile: str) -> Path:
    """The demo build's page, or, for a build made before the page existed, a copy's."""
    from pipeline_helpers import copy_of_build, snakemake

    target = f"results/explorer/{profile}/index.html"
    if (demo_build / target).is_file():
        return demo_build / target
    root = copy_of_build(demo_build, tmp_path / "halluscope")
    snakemake(root, "--cores", "1", target)
    return root / target


def caption_rows(root: Path, profile: str) -> list[dict[str, str]]:
    """Every row of the first embedder's captions.csv files (one row per caption)."""
    config = load(root / "params.yaml")
    embedder = config["embed"]["embedders"][0]
    rows = []
    for model in config["generate"]["models"]:
        for instruction in config["generate"]["instructions"]:
            path = root / f"results/scores/{profile}/{embedder}/{model}/{instruction}.captions.csv"
            with path.open(encoding="utf-8", newline="") as handle:
                rows.extend(csv.DictReader(handle))
    return rows


def counts(dom: str, attribute: str) -> dict[str, int]:
    """The numbers the page renders as ``<b data-<attribute>="key">1,234</b>``."""
    found = re.findall(rf'data-{attribute}="(\w+)">([\d,]+)<', dom)
    return {key: int(value.replace(",", "")) for key, value in found}


def sections(dom: str) -> list[tuple[str, int, list[tuple[str, str, int]]]]:
    """The rendered images in order: id, hallucinations, its caption rows (model, instruction,
    hallucinated objects)."""
    starts = list(SECTION.finditer(dom))
    out = []
    for i, match in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(dom)
        rows = [(m, ins, int(n)) for m, ins, n in ROW.findall(dom[match.start() : end])]
        out.append((match[1], int(match[2]), rows))
    return out


def test_the_browser_renders_the_score_files_counts_and_a_filter_changes_them(
    demo_build: Path, tmp_path: Path
) -> None:
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: run `make system-deps` (Debian package chromium)")
    profile = dvc_profile()
    page = explorer_page(demo_build, tmp_path, profile)
    root = page.parents[3]
    url = page.as_uri()
    shot = tmp_path / "explorer.png"
    chromium(tmp_path, "screenshot", f"--screenshot={shot}", "--window-size=1280,1600", url)
    assert shot.is_file() and shot.stat().st_size > 0, f"no screenshot at {shot}"
    proc = chromium(tmp_path, "dom", "--enable-logging=stderr", "--v=0", "--dump-dom", url)
    dom = proc.stdout
    (tmp_path / "dom.html").write_text(dom, encoding="utf-8")
    see = f"(see {shot} and {tmp_path / 'dom.html'})"
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line and url in line]
    assert not console, "\n".join([*console, see])

    # the summary line: the items, the models and the score files' captions and hallucinations
    rows = caption_rows(root, profile)
    items = (root / f"results/data/{profile}/items.jsonl").read_text(encoding="utf-8").split("\n")
    answers = sum(
        len(path.read_text(encoding="utf-8").splitlines())
        for path in root.glob(f"results/*/{profile}/*/*answers.jsonl")
    )
    config = load(root / "params.yaml")
    summary = counts(dom, "count")
    # the profile's images, and HallusionBench's figures, under which its answers are shown
    figures = root / f"results/hallusionbench/{profile}/items.jsonl"
    items += figures.read_text(encoding="utf-8").split("\n") if figures.is_file() else []
    assert summary["images"] == len([line for line in items if line.strip()]), see
    assert summary["models"] == len(config["generate"]["models"]), see
    assert summary["captions"] == len(rows), see
    assert summary["hallucinated"] == sum(int(r["n_hallucinated"]) for r in rows), see
    assert summary["answers"] == answers, see
    assert counts(dom, "shown")["captions"] == len(rows), see

    # the header's headline numbers: each model's metrics/ file, every number rendered with
    # an interval around it
    cells = dict(re.findall(r'data-headline="([^"]+)">([^<]+)<', dom))
    for model in config["generate"]["models"]:
        numbers = json.loads((root / f"metrics/{profile}/{model}.json").read_text())
        for name, value in numbers.items():
            text = cells[f"{model} {name}"]
            shown_value, lo, hi = (float(x) for x in re.fullmatch(
                r"(-?[\d.]+) \[(-?[\d.]+), (-?[\d.]+)\]", text).groups())  # fmt: skip
            assert abs(shown_value - value) <= 5e-4 + 1e-9 and lo <= shown_value <= hi, (
                name,
                text,
                see,
            )

    # a page of images, worst first, each caption's count as its score file's row says
    shown = sections(dom)
    assert len(shown) == min(10, summary["images"]), see
    assert [n for _, n, _ in shown] == sorted((n for _, n, _ in shown), reverse=True), see
    by_key = {(r["model"], r["instruction_id"], r["image_id"]): r for r in rows}
    for image_id, _, image_rows in shown:
        assert len(image_rows) == sum(r["image_id"] == image_id for r in rows), image_id
        for model, instruction, n in image_rows:
            assert n == int(by_key[model, instruction, image_id]["n_hallucinated"]), see

    # one model, hallucinated captions only: exactly that model's rows with a hallucination
    query = "&".join(f"{k}={v}" for k, v in FILTER.items())
    filtered = chromium(tmp_path, "filtered", "--dump-dom", f"{url}#{query}").stdout
    (tmp_path / "dom-filtered.html").write_text(filtered, encoding="utf-8")
    mine = [r for r in rows if r["model"] == FILTER["model"] and int(r["n_hallucinated"]) > 0]
    after = counts(filtered, "shown")
    assert after["captions"] == len(mine) < len(rows), tmp_path / "dom-filtered.html"
    assert after["hallucinated"] == sum(int(r["n_hallucinated"]) for r in mine)
    drawn = [row for _, _, image_rows in sections(filtered) for row in image_rows]
    assert drawn and all(m == FILTER["model"] and n > 0 for m, _, n in drawn), drawn
