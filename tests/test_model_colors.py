"""One colour per model id in every figure, whatever other models the figure shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from matplotlib.colors import to_hex
from test_report import make_summary

from halluscope.report import KNOWN_MODEL_COLORS, MODEL_PALETTE, model_colors

UNKNOWN = ["gpt-4o", "qwen2-vl-7b", "my_model", "sim-x", "模型"]


def test_a_model_keeps_its_colour_whatever_the_other_models() -> None:
    alone = {m: model_colors([m])[m] for m in [*KNOWN_MODEL_COLORS, *UNKNOWN]}
    together = model_colors([*UNKNOWN, *KNOWN_MODEL_COLORS])
    reversed_ = model_colors(list(reversed([*KNOWN_MODEL_COLORS, *UNKNOWN])))
    assert together == alone == reversed_
    assert model_colors(["sim-frequent", "llava"]) == {
        "sim-frequent": alone["sim-frequent"],
        "llava": alone["llava"],
    }
    assert list(model_colors(["b", "a", "b"])) == ["b", "a"]  # keys follow the input order
    assert model_colors([]) == {}


def test_known_models_have_distinct_reserved_colours() -> None:
    colours = model_colors(KNOWN_MODEL_COLORS)
    assert all(c in MODEL_PALETTE for c in colours.values())
    assert len(set(MODEL_PALETTE)) == len(MODEL_PALETTE) == 10
    # every simulated profile and the CAOS paper's five LVLMs: nine distinct colours
    from halluscope.models.sim import PRESETS

    paper = ["instructblip", "llava", "mplug-owl", "minigpt-4", "multimodal-gpt"]
    assert set(PRESETS) <= set(KNOWN_MODEL_COLORS)
    assert len({colours[m] for m in [*PRESETS, *paper]}) == len(PRESETS) + len(paper)
    # the two spellings of one model (pope-captions and paper profiles) share its colour
    assert colours["llava"] == colours["llava-1.5-13b"]
    assert colours["instructblip"] == colours["instructblip-13b"]
    assert colours["sim-precise"] == MODEL_PALETTE[0]  # fixed slots, not order of appearance


def test_unknown_models_are_hashed_into_the_palette_deterministically() -> None:
    """A fixed digest (not Python's salted ``hash()``): same colours in every process."""
    colours = model_colors(UNKNOWN)
    assert all(c in MODEL_PALETTE for c in colours.values())
    assert len(set(colours.values())) > 1  # not one colour for everything
    script = (
        "import json, sys; from halluscope.report import model_colors; "
        "print(json.dumps(model_colors(sys.argv[1:])))"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
        out = subprocess.run(
            [sys.executable, "-c", script, *UNKNOWN],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout
        assert json.loads(out) == colours, seed


@pytest.fixture()
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The figures the plot functions draw (``savefig`` records them instead of writing): the
    CAOS figures' own reference and the shared one the other benchmarks' figures call."""
    from halluscope.benchmarks.caos import figures
    from halluscope.report import style

    figs: list[Any] = []

    def record(fig: Any, stem: Any, dpi: Any = None) -> list[Path]:
        figs.append(fig)
        return []

    monkeypatch.setattr(figures, "savefig", record)
    monkeypatch.setattr(style, "savefig", record)
    return figs


def test_radar_colours_follow_the_model_not_the_figure(drawn: list[Any]) -> None:
    from halluscope.benchmarks.caos import figures

    summary = make_summary()  # models sim-llava and sim_owl
    figures.plot_radar(summary, ["sim-llava", "sim_owl"], ["glove"], "unused")
    figures.plot_radar(summary, ["sim_owl"], ["glove"], "unused")
    both, alone = (
        {line.get_label(): to_hex(line.get_color()) for line in fig.axes[0].get_lines()}
        for fig in drawn
    )
    expected = model_colors(["sim-llava", "sim_owl"])
    assert both == expected
    assert alone == {"sim_owl": expected["sim_owl"]}


def test_nope_bars_use_the_same_colours(drawn: list[Any]) -> None:
    from halluscope.benchmarks.nope.report import plot_nope_question_types

    group = {"by_question_type": {"color": {"accuracy": 0.5, "n": 4}}}
    scores = {m: {"negp": group, "non_negp": group} for m in ("sim-verbose", "gpt-4o")}
    plot_nope_question_types(scores, ["sim-verbose", "gpt-4o"], "unused")
    plot_nope_question_types(scores, ["gpt-4o"], "unused")
    both, alone = (
        {
            bars.get_label(): to_hex(bars.patches[0].get_facecolor())
            for bars in fig.axes[0].containers
        }
        for fig in drawn
    )
    expected = model_colors(["sim-verbose", "gpt-4o"])
    assert both == expected
    assert alone == {"gpt-4o": expected["gpt-4o"]}
