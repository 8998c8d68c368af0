"""README "Evaluate your own model": its overlay and commands, on real backends of this machine.

The README's overlay adds one model to the benchmarks. Its steps run here on what a CPU-only
machine has: the transformers id becomes a tiny random LLaVA saved with `save_pretrained`
(tests/tiny_models.py) and the COCO images the demo's shipped images; the OpenAI-compatible
variant, where text is enough, is the extraction LLM behind a real llama.cpp server.
"""

from __future__ import annotations

import csv
import json
import shlex
from pathlib import Path

import pytest
import yaml
from llama_server import llama_server_fixture  # noqa: F401  (registers the fixture)
from pipeline_helpers import ROOT, copy_project, run

pytestmark = pytest.mark.slow

DEMO_DATA = {"dataset": "demo", "annotations": "data/demo/annotations.yaml"}


def readme_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("## Evaluate your own model", 1)[1].split("\n## ", 1)[0]


def readme_overlay() -> dict:
    return yaml.safe_load(readme_section().split("```yaml\n", 1)[1].split("```", 1)[0])


def readme_commands() -> list[list[str]]:
    block = readme_section().split("```bash\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line.split("#", 1)[0]) for line in block.splitlines() if line.strip()]


def on_this_machine(command: list[str]) -> list[str]:
    """A README command with this machine's 2 cores instead of a GPU node's 8."""
    previous = ["", *command[:-1]]
    return [
        ("2" if prev == "--cores" else word) for prev, word in zip(previous, command, strict=True)
    ]


def write_overlay(project: Path, overlay: dict) -> None:
    path = project / "config" / "profiles" / "my-model.yaml"
    path.write_text(yaml.safe_dump(overlay, sort_keys=False), encoding="utf-8")


def table_rows(project: Path, model: str) -> list[dict]:
    path = project / "results" / "tables" / "my-model" / "caos_table1.csv"
    with path.open(encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle) if row["model"] == model]


def test_readme_commands_are_the_three_steps() -> None:
    commands = readme_commands()
    assert [c[0:2] for c in commands] == [
        ["halluscope", "check-params"],
        ["snakemake", "--cores"],
        ["snakemake", "--profile"],
    ]
    assert ["--resources", "gpu=1"] == commands[1][3:5]
    assert commands[2][2] == "profiles/slurm"
    overlay = readme_overlay()
    assert overlay["models"]["my-vlm"]["gpu"] == 1
    assert overlay["generate"]["models"] == ["my-vlm"]


def test_transformers_model_through_the_benchmarks(tmp_path: Path) -> None:
    from tiny_models import build_tiny_models

    from halluscope.resources import model_resources

    tiny = build_tiny_models(tmp_path / "models")
    project = copy_project(tmp_path / "project")
    overlay = readme_overlay()
    overlay["data"] = DEMO_DATA  # no MSCOCO images here: the images installed packages ship
    overlay["models"]["my-vlm"]["model"] = str(tiny["llava"])
    overlay["generate"]["instructions"] = ["i01"]
    write_overlay(project, overlay)
    check, local, _slurm = readme_commands()
    run(check, project)
    run(on_this_machine(local), project)

    captions = (project / "results/responses/my-model/my-vlm/i01.jsonl").read_text("utf-8")
    records = [json.loads(line) for line in captions.splitlines()]
    assert len(records) == 9 and all(isinstance(r["text"], str) for r in records)
    assert {row["metric"] for row in table_rows(project, "my-vlm")} >= {"CHAIR_S", "CAOS_avg"}
    pope = sorted((project / "results").glob("pope/my-model/my-vlm/*"))
    assert pope, "POPE answers of the model"
    # on SLURM the model's jobs ask for the GPU its spec names
    config = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    config["models"].update(overlay["models"])
    config["generate"].update(overlay["generate"])
    assert model_resources(config, "generate")["gpu"](type("W", (), {"model": "my-vlm"})()) == 1


def test_openai_endpoint_as_the_extraction_llm(tmp_path: Path, llama_server) -> None:
    project = copy_project(tmp_path / "project")
    overlay = readme_overlay()
    served = {
        "backend": "openai",
        "model": "smollm2-135m",
        "base_url": llama_server.base_url,
        "api_key_env": "none",
        "max_in_flight": 2,
    }
    overlay["data"] = DEMO_DATA
    overlay["models"] = {
        "my-llm": served,
        "sim-precise": {"backend": "sim", "preset": "sim-precise"},
    }
    overlay["generate"] = {"models": ["sim-precise"], "instructions": ["i01"]}
    overlay["pope"] = {"enabled": False}
    overlay["extract"] = {
        "method": "rule+llm",
        "llm": {"model": "my-llm", "grammar": "schema", "stop_rule": "none"},
        "llm_instructions": ["i01"],
    }
    write_overlay(project, overlay)
    check, local, _slurm = readme_commands()
    run(check, project)
    run(on_this_machine(local), project)
    assert llama_server.access_count(path="/v1/chat/completions") >= 9
    assert table_rows(project, "sim-precise")
