"""README "Score your own captions": its commands, as a user types them, in a fresh copy.

Two caption files: real LLaVA-1.5 captions of 500 MSCOCO images (the HALC CHAIR run in
../shared/data) and a hand-made one. Each goes through `halluscope captions-profile` and the
README's snakemake command; the table's CHAIR_S must equal `halluscope chair` on the same
captions with the same ground truth (the profile has no oracle, so the two count the same
objects).
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
from pathlib import Path

import pytest
from pipeline_helpers import copy_project, env, run

from halluscope.data.fetch import default_mirror

pytestmark = pytest.mark.slow

MIRROR = default_mirror()
HALC_RUN = "llava-1.5_greedy_beams"
HALC_LLAVA = f"halc/chair/{HALC_RUN}/{HALC_RUN}_coco_num_images_500_chair_results.json"
GT = "coco/chair_gt_objects_pattern.json"
HAND_MADE = [
    # image ids of MSCOCO 2014 with CHAIR ground truth; captions written for this test
    {"image_id": 281533, "caption": "A dog sits in front of a TV next to a potted plant."},
    {"image_id": 281533, "caption": "duplicate ids are refused"},
]

needs_data = pytest.mark.skipif(
    MIRROR is None or not (MIRROR / GT).is_file(),
    reason="needs ../shared/data (MSCOCO ground truth and the HALC captions)",
)


def readme_commands() -> list[str]:
    """The README's three commands of "Score your own captions", as written there."""
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = text.split("## Score your own captions", 1)[1].split("\n## ", 1)[0]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def user_commands(project: Path, captions: Path, name: str) -> list[list[str]]:
    """The README's commands with the user's file and model name, minus `source` (the tests
    already run in the virtualenv)."""
    out = []
    for line in readme_commands():
        if line.startswith("source "):
            continue
        line = line.replace("my_captions.jsonl", str(captions)).replace("my-lvlm", name)
        out.append(line.split())
    assert [c[0] for c in out] == ["halluscope", "snakemake"], out
    return out


def table_value(project: Path, profile: str, model: str, metric: str) -> float:
    path = project / "results" / "tables" / profile / "caos_table1.csv"
    with path.open(encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["model"] == model and r["metric"] == metric]
    values = {float(r["value"]) for r in rows}
    assert len(values) == 1, (metric, rows)  # CHAIR_S does not depend on the embedder
    return values.pop()


def chair_by_hand(project: Path, captions: Path, out: Path) -> float:
    run(
        [
            "halluscope",
            "chair",
            "--captions",
            str(captions),
            "--gt",
            str(MIRROR / GT),
            "--variant",
            "pattern",
            "--synonyms",  # CHAIR's own list: the profile's default, as published CHAIR uses
            str(MIRROR / "chair" / "synonyms.txt"),
            "--out",
            str(out),
        ],
        project,
    )
    return json.loads(out.read_text(encoding="utf-8"))["overall"]["CHAIRs"]


def summary_value(project: Path, profile: str, model: str, metric: str) -> float:
    path = project / "results" / "scores" / profile / "summary.csv"
    with path.open(encoding="utf-8") as handle:
        values = {float(r[metric]) for r in csv.DictReader(handle) if r["model"] == model}
    assert len(values) == 1, (metric, values)
    return values.pop()


def score_own(project: Path, captions: Path, name: str) -> float:
    """Run the README's commands; return the table's CHAIR_S after checking it by hand."""
    for command in user_commands(project, captions, name):
        run(command, project)
    profile = project / "config" / "profiles" / f"{name}.yaml"
    assert profile.is_file()
    tables = project / "results" / "tables" / name
    assert (tables / "caos_table1.tex").is_file() and (tables / "caos_table1.csv").is_file()
    chair_s = table_value(project, name, name, "CHAIR_S")
    assert chair_s == pytest.approx(chair_by_hand(project, captions, project / f"{name}.json"))
    return chair_s


@needs_data
def test_real_captions_score_like_halluscope_chair(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    reference = json.loads((MIRROR / HALC_LLAVA).read_text(encoding="utf-8"))
    captions = tmp_path / "llava-1.5.jsonl"
    captions.write_text(
        "".join(
            json.dumps({"image_id": s["image_id"], "caption": s["caption"]}) + "\n"
            for s in reference["sentences"]
        ),
        encoding="utf-8",
    )
    chair_s = score_own(project, captions, "llava-1.5")
    # the profile scores with CHAIR's synonyms.txt by default, as the reference run did: its
    # CHAIR_S and CHAIR_I are the reference's own, caption set for caption set
    overall = reference["overall_metrics"]
    assert chair_s == pytest.approx(overall["CHAIRs"], abs=1e-12)
    chair_i = summary_value(project, "llava-1.5", "llava-1.5", "CHAIR_I")
    assert chair_i == pytest.approx(overall["CHAIRi"], abs=1e-12)
    table = (project / "results" / "tables" / "llava-1.5" / "caos_table1.tex").read_text()
    assert "CHAIR's own synonym list" in table
    # a rerun has nothing to do: the profile and the user's file are tracked inputs
    dry = run(
        [
            "snakemake",
            "-n",
            "--configfile",
            "config/profiles/llava-1.5.yaml",
            "--",
            "results/tables/",
        ],
        project,
    )
    assert "Nothing to be done" in dry.stdout + dry.stderr


@needs_data
def test_hand_made_captions(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    captions = tmp_path / "mine.jsonl"
    captions.write_text(json.dumps(HAND_MADE[0]) + "\n", encoding="utf-8")
    assert score_own(project, captions, "mine") == 0.0  # dog, tv, potted plant are all in GT
    # an edited caption file reruns its jobs and changes the numbers
    captions.write_text(
        json.dumps({"image_id": 281533, "caption": "A dog and a giraffe watch a TV."}) + "\n",
        encoding="utf-8",
    )
    run(
        [
            "snakemake",
            "--cores",
            "2",
            "--configfile",
            "config/profiles/mine.yaml",
            "--",
            "results/tables/",
        ],
        project,
    )
    assert table_value(project, "mine", "mine", "CHAIR_S") == 1.0


def test_bad_caption_files_are_refused_before_any_profile(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    bad, good = tmp_path / "dup.jsonl", tmp_path / "good.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in HAND_MADE), encoding="utf-8")
    good.write_text(json.dumps(HAND_MADE[0]) + "\n", encoding="utf-8")
    cases = [
        (["--captions", str(bad)], "dup.jsonl:2: duplicate caption for image '281533'"),
        (["--captions", f"i99={good}"], "unknown instruction 'i99'"),
        (["--captions", f"i01={good}", "--captions", f"i01={good}"], "i01 already has"),
        (["--captions", f"i03={good}", "--beside-paper-models"], "i01 and i02 only"),
        (["--captions", str(tmp_path / "absent.jsonl")], "absent.jsonl: replay recording"),
    ]
    for args, message in cases:
        proc = subprocess.run(
            ["halluscope", "captions-profile", "mine", *args],
            cwd=project,
            env=env(),
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 2 and message in proc.stderr, (args, proc.stderr)
        assert not (project / "config" / "profiles" / "mine.yaml").exists()


@needs_data
def test_editing_own_captions_reruns_that_models_chain_only(tmp_path: Path) -> None:
    """Beside the paper's five models: a caption edit reruns the user's model's jobs, never the
    data job (it reads only the image ids) or another model's generate and score jobs."""
    project = copy_project(tmp_path / "project")
    ids = [40468, 10822, 454161]  # the first three images of the paper's caption files
    captions = tmp_path / "mine.jsonl"
    lines = [json.dumps({"image_id": i, "caption": "A dog on a couch."}) + "\n" for i in ids]
    captions.write_text("".join(lines), encoding="utf-8")
    run(
        ["halluscope", "captions-profile", "mine", "--captions", str(captions)]
        + ["--beside-paper-models", "--limit", "3"],
        project,
    )
    build = ["snakemake", "--cores", "2", "--configfile", "config/profiles/mine.yaml"]
    run([*build, "--", "results/tables/"], project)
    captions.write_text(lines[0].replace("couch", "giraffe") + "".join(lines[1:]))
    dry = run(["snakemake", "-n", *build[3:], "--", "results/tables/"], project)
    planned = dry.stdout + dry.stderr
    assert "rule generate:" in planned and re.search(r"model=mine\b", planned)
    assert "rule data_items:" not in planned
    for model in ("llava", "instructblip", "minigpt-4", "mplug-owl", "multimodal-gpt"):
        assert not re.search(rf"model={re.escape(model)}(,|\s)", planned), model


@needs_data
def test_two_profiles_one_after_the_other_leave_each_other_nothing_to_do(tmp_path: Path) -> None:
    """Profiles never write into each other's outputs: after profile a then profile b, both
    tables folders are there and a's `snakemake -n` has nothing to do (rule tables reads no
    profile from the params, and its inputs are every profile's tables)."""
    project = copy_project(tmp_path / "project")
    captions = tmp_path / "mine.jsonl"
    ids = [40468, 10822, 454161]
    captions.write_text(
        "".join(json.dumps({"image_id": i, "caption": "A dog on a couch."}) + "\n" for i in ids),
        encoding="utf-8",
    )
    for name in ("first", "second"):
        run(["halluscope", "captions-profile", name, "--captions", str(captions)], project)
        build = ["snakemake", "--cores", "2", "--configfile", f"config/profiles/{name}.yaml"]
        run([*build, "--", "results/tables/"], project)
    for name in ("first", "second"):
        assert (project / "results/tables" / name / "caos_table1.csv").is_file(), name
        dry = run(
            ["snakemake", "-n", "--cores", "1", "--configfile", f"config/profiles/{name}.yaml"]
            + ["--", "results/tables/"],
            project,
        )
        assert "Nothing to be done" in dry.stdout + dry.stderr, (name, dry.stdout[-2000:])
