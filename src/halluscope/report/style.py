"""The figure style and writer shared by every benchmark's figures (same inputs -> same bytes).

Determinism needs more than fixed data: the PDF and PNG writers stamp dates and software
versions, and seaborn's default font list prefers whatever Arial-like font the machine has. So
every figure is drawn inside :func:`style_context` (bundled DejaVu Sans only, fixed hash salt)
and written by :func:`savefig`, which removes the date/version metadata.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import seaborn as sns  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from halluscope.io import atomic_write_bytes  # noqa: E402

#: Metadata keys that matplotlib would fill with dates or versions; None removes them.
PDF_METADATA: dict[str, Any] = {
    "CreationDate": None,
    "ModDate": None,
    "Producer": None,
    "Creator": None,
}


PNG_METADATA: dict[str, Any] = {"Software": None}


def _rc() -> dict[str, Any]:
    """rcParams for all figures: seaborn's whitegrid look, machine-independent fonts."""
    rc: dict[str, Any] = {}
    rc.update(sns.axes_style("whitegrid"))
    rc.update(sns.plotting_context("paper", font_scale=1.15))
    rc.update(
        {
            "font.family": "sans-serif",
            "font.sans-serif": ["DejaVu Sans"],  # bundled with matplotlib: same glyphs everywhere
            "mathtext.fontset": "dejavusans",
            "pdf.fonttype": 42,
            "svg.hashsalt": "halluscope",
            "savefig.dpi": 200,
            "figure.dpi": 100,
            "axes.titleweight": "bold",
        }
    )
    return rc


@contextmanager
def style_context() -> Iterator[None]:
    """Apply the figure style locally, so importing this module changes no global state."""
    with matplotlib.rc_context(_rc()):
        yield


#: Resolution of the PNGs; the figure stage sets it from params (figures.dpi).
FIGURE_DPI: dict[str, int] = {"value": 200}


def savefig(fig: Figure, stem: str | Path, dpi: int | None = None) -> list[Path]:
    """Write ``{stem}.pdf`` and ``{stem}.png`` without dates or versions, atomically.

    Returns the two paths. The figure is not closed (the caller owns it).
    """
    dpi = dpi or FIGURE_DPI["value"]
    paths = [Path(f"{stem}.pdf"), Path(f"{stem}.png")]
    for path, fmt, metadata in ((paths[0], "pdf", PDF_METADATA), (paths[1], "png", PNG_METADATA)):
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, dpi=dpi, metadata=metadata, bbox_inches="tight")
        atomic_write_bytes(path, buffer.getvalue())
    return paths
