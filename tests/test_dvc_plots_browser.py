"""The page ``dvc plots show`` writes, drawn by a real browser (Debian's headless chromium):
every plot renders as one SVG with no error, and no mark lies outside its plot area, also from
rows with an empty cell (the demo's CAOS Figure 6 has instructions without CAOS_T; the test
blanks a few more cells of each figure CSV in its copy). A blank cell is a missing point, not 0.

Slow: a copy of the session's demo build. Needs chromium (``make system-deps``) and the pinned
plotting libraries (``make plots-offline``). The screenshot and the DOM stay in the test's tmp
folder (``plots.png``, ``dom.html``).
"""

from __future__ import annotations

import csv
import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_dvc_yaml import PLOTS, dvc_profile

ROOT = Path(__file__).resolve().parents[1]
MODULES = ROOT / "envs/plots/node_modules"
CHROMIUM = Path("/usr/bin/chromium")
#: a mark may touch the frame: half a stroke plus rounding
SLACK = 1.0
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=10000",
)
NUMBER = r"-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"
TRANSLATE = re.compile(rf"translate\(({NUMBER})[ ,]\s*({NUMBER})\)")
#: the ``background`` path of a vega group item: its rectangle (``cornerRadius`` is not used)
RECT = re.compile(rf"M({NUMBER}),({NUMBER})h({NUMBER})v({NUMBER})h{NUMBER}Z")
SVG = re.compile(r'<svg\b[^>]*\bclass="marks"[^>]*>.*?</svg>', re.S)


@dataclass(frozen=True)
class Mark:
    kind: str  # the vega mark type: symbol, line
    label: str  # vega's aria-label: the datum's fields
    x: float  # page pixels, inside the plot's SVG
    y: float
    area: tuple[float, float, float, float]  # its plot area: left, top, right, bottom

    def inside(self) -> bool:
        left, top, right, bottom = self.area
        return left - SLACK <= self.x <= right + SLACK and top - SLACK <= self.y <= bottom + SLACK


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _translate(element: ET.Element) -> tuple[float, float]:
    match = TRANSLATE.search(element.get("transform", ""))
    return (float(match[1]), float(match[2])) if match else (0.0, 0.0)


def _plot_area(group: ET.Element, dx: float, dy: float) -> tuple[float, ...]:
    """The rectangle (left, top, right, bottom) of a group item's ``background`` path, or ()
    if it has none with an area (axes, legends and titles are groups of no area)."""
    for child in group:
        if _local(child.tag) == "path" and child.get("class") == "background":
            match = RECT.fullmatch(child.get("d", ""))
            if match:
                x, y, w, h = (float(v) for v in match.groups())
                if w > 0 and h > 0:
                    return (dx + x, dy + y, dx + x + w, dy + y + h)
    return ()


def _mark_points(item: ET.Element, kind: str, dx: float, dy: float) -> list[tuple[float, float]]:
    """Where a mark item is drawn: a symbol at its translate, a line at each of its vertices."""
    if kind == "symbol":
        tx, ty = _translate(item)
        return [(dx + tx, dy + ty)]
    if kind == "line":
        d = item.get("d", "")
        assert re.fullmatch(rf"(?:[ML]{NUMBER},{NUMBER})*", d), f"a line path not read: {d}"
        pairs = re.findall(rf"[ML]({NUMBER}),({NUMBER})", d)
        return [(dx + float(x), dy + float(y)) for x, y in pairs]
    raise AssertionError(f"a {kind} mark: the test reads symbol and line marks only")


def drawn_marks(svg: ET.Element) -> list[Mark]:
    """Every data mark (vega's ``role-mark`` groups) of a rendered plot, in the SVG's pixels,
    with the plot area (the nearest enclosing group item with a background) it belongs in."""
    marks: list[Mark] = []

    def walk(element: ET.Element, dx: float, dy: float, area: tuple) -> None:
        tx, ty = _translate(element) if _local(element.tag) == "g" else (0.0, 0.0)
        dx, dy = dx + tx, dy + ty
        area = _plot_area(element, dx, dy) or area
        classes = element.get("class", "").split()
        if _local(element.tag) == "g" and "role-mark" in classes:
            (kind,) = [c.removeprefix("mark-") for c in classes if c.startswith("mark-")]
            if kind == "group":  # a layer or facet holding marks of its own
                for child in element:
                    walk(child, dx, dy, area)
                return
            assert area, f"a {kind} mark outside any plot area"
            for item in element:
                for x, y in _mark_points(item, kind, dx, dy):
                    marks.append(Mark(kind, item.get("aria-label", ""), x, y, area))
            return
        for child in element:
            walk(child, dx, dy, area)

    walk(svg, 0.0, 0.0, ())
    return marks


def texts(svg: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in svg.iter() if _local(t.tag) == "text"]


def parse_svgs(dom: str) -> list[ET.Element]:
    # chromium serialises the DOM as HTML: its one named entity beyond XML's is &nbsp;
    return [ET.fromstring(s.replace("&nbsp;", "&#160;")) for s in SVG.findall(dom)]


def _number(cell: str | None) -> bool:
    """What the templates' filter keeps: a finite number (a blank cell is none)."""
    try:
        return cell is not None and cell.strip() != "" and math.isfinite(float(cell))
    except ValueError:
        return False


def points_expected(path: Path, x: str, ys: list[str]) -> int:
    """One point per row and y column with both cells numeric."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return sum(_number(row[x]) and _number(row[y]) for row in rows for y in ys)


def blank(path: Path, cells: list[tuple[str, str]]) -> None:
    """Empty, for each (x column, y column), one cell of the first row where both still hold a
    number: the x cell, then the y cell of the next such row."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        fields, rows = list(reader.fieldnames or []), list(reader)
    for x, y in cells:
        for column in (x, y):
            row = next(r for r in rows if _number(r[x]) and _number(r[y]))
            row[column] = ""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def chromium(workdir: Path, name: str, *args: str) -> subprocess.CompletedProcess:
    """One headless chromium run with a profile of its own (``workdir/name-profile``)."""
    profile = workdir / f"{name}-profile"
    profile.mkdir()
    cmd = [str(CHROMIUM), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    except subprocess.TimeoutExpired as error:
        raise AssertionError(f"chromium ({name}) did not finish in 300 s: {error}") from error
    assert proc.returncode == 0, f"chromium ({name}) failed ({proc.returncode}):\n{proc.stderr}"
    return proc


def plots_page(demo_build: Path, tmp_path: Path) -> Path:
    """``dvc plots show``'s page in a git-initialised copy of the demo build, with a few more
    blank cells in each figure CSV."""
    from pipeline_helpers import copy_of_build, run

    root = copy_of_build(demo_build, tmp_path / "halluscope")
    run(["git", "init", "-q"], root)
    script = ROOT / "scripts/write_plots_html.py"
    template = root / ".dvc/plots/offline.html"
    run([sys.executable, str(script), "--modules", str(MODULES), "--out", str(template)], root)
    profile = dvc_profile()
    for plot in PLOTS:
        ys = [plot.y] if isinstance(plot.y, str) else plot.y
        blank(root / f"results/figures/{profile}/{plot.name}.csv", [(plot.x, ys[0])])
    run(["dvc", "plots", "show", "-o", "page"], root)
    return root / "page/index.html"


@pytest.mark.slow
def test_browser_draws_every_plot_with_its_marks_inside_the_plot_area(
    demo_build: Path, tmp_path: Path
) -> None:
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: run `make system-deps` (Debian package chromium)")
    if not MODULES.is_dir():
        pytest.fail("envs/plots/node_modules is missing: run `make plots-offline`")
    page = plots_page(demo_build, tmp_path)
    root, profile = page.parents[1], dvc_profile()
    url = page.as_uri()
    shot = tmp_path / "plots.png"
    chromium(tmp_path, "screenshot", f"--screenshot={shot}", "--window-size=1280,1400", url)
    assert shot.is_file() and shot.stat().st_size > 0, f"no screenshot at {shot}"
    proc = chromium(tmp_path, "dom", "--enable-logging=stderr", "--v=0", "--dump-dom", url)
    dom = proc.stdout
    (tmp_path / "dom.html").write_text(dom, encoding="utf-8")
    see = f"(see {shot} and {tmp_path / 'dom.html'})"

    # the page's own console (vega's warnings, uncaught errors) stays silent
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line and url in line]
    assert not console, "\n".join([*console, see])
    errors = re.findall(r'<pre class="plot-error">([^<]*)</pre>', dom)
    assert not errors, f"{errors} {see}"

    # one SVG per plot (the embed renderer is svg), each with its title drawn
    svgs = parse_svgs(dom)
    drawn, plots = len(svgs), len(PLOTS)
    assert drawn == plots, f"{drawn} SVG plots for {plots} plots {see}"
    problems = []
    for plot in PLOTS:
        titled = [s for s in svgs if plot.title in texts(s)]
        assert len(titled) == 1, f"{plot.name}: {len(titled)} SVGs titled {plot.title!r} {see}"
        marks = drawn_marks(titled[0])
        outside = [m for m in marks if not m.inside()]
        if outside:
            problems.append(
                f"{plot.name}: {len(outside)} of {len(marks)} mark vertices outside the plot area"
                f" {outside[0].area}, e.g. "
                + "; ".join(f"({m.x:.0f}, {m.y:.0f}) {m.label}" for m in outside[:3])
            )
        # one point per row and y column with both cells numeric: blank cells are skipped
        ys = [plot.y] if isinstance(plot.y, str) else plot.y
        expected = points_expected(root / f"results/figures/{profile}/{plot.name}.csv", plot.x, ys)
        points = sum(m.kind == "symbol" for m in marks)
        if points != expected:
            problems.append(f"{plot.name}: {points} points drawn, {expected} rows x y columns")
    assert not problems, "\n".join([*problems, see])
