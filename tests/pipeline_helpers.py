"""Whole-DAG test helpers: a temporary copy of the project, dry-run parsing, rebuild hashes, and
the demo items and simulated LVLMs that the benchmark demo tests share."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from halluscope.models.base import Backend
    from halluscope.stages.answering import AnswerSettings

ROOT = Path(__file__).resolve().parents[1]
COPY = [
    "Snakefile",
    "rules",
    "params.yaml",
    "profiles",
    "config",
    "data",
    "envs",
    "paper",
    "docs/report",
    "dvc.yaml",
    "scripts",
    "src",
    ".dvc/config",
    ".dvc/plots",
    ".dvcignore",
    ".gitignore",
]
#: git with an author, for the commits tests make in fresh clones and scratch repositories
GIT = ["git", "-c", "user.name=halluscope-test", "-c", "user.email=test@halluscope.invalid"]
# where the DAG writes: results/ (DVC's cache) and the headline metrics/ (kept in git)
OUTPUT_ROOTS = ("results", "metrics")


def merged_params(profile: str, extra: dict | None = None) -> dict:
    """params.yaml overlaid by a profile (and ``extra``), merged as Snakemake merges them."""
    import yaml

    from halluscope.config import overlay

    base = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    over = yaml.safe_load((ROOT / "config/profiles" / f"{profile}.yaml").read_text("utf-8"))
    return overlay(base, over, extra or {})


def demo_items() -> dict[str, dict]:
    """The demo annotations as items, by image id (the sim needs no image)."""
    import yaml

    data = yaml.safe_load((ROOT / "data/demo/annotations.yaml").read_text(encoding="utf-8"))
    return {
        rec["id"]: {
            "image_id": rec["id"],
            "image": None,
            "image_sha256": hashlib.sha256(rec["id"].encode()).hexdigest(),
            "caption": " ".join(rec["caption"].split()),
            "gt_objects": rec["coco"],
            "other_objects": rec["other"],
            "relations": rec["relations"],
        }
        for rec in data["images"]
    }


def sim(profile: str, items: dict, **overrides: float) -> Backend:
    """A simulated LVLM of preset ``profile`` over ``items``, with preset ``overrides``."""
    from halluscope.models.base import make_backend

    spec = {"backend": "sim", "preset": profile, "overrides": overrides}
    return make_backend(spec, items=items, model_name=profile)


def env() -> dict[str, str]:
    """Environment with this interpreter's bin folder first (snakemake, dvc, halluscope)."""
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "HF_HUB_OFFLINE": "1",
        "PYTHONHASHSEED": "0",
    }


def copy_project(dest: Path) -> Path:
    """Copy what a fresh clone has (no results, no caches) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in COPY:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(
                src,
                dest / name,
                ignore=shutil.ignore_patterns(
                    "*.pdf", "*.aux", "__pycache__", "*.egg-info", "node_modules"
                ),
            )
        elif src.exists():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def run(cmd: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({proc.returncode}):\n"
            f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
        )
    return proc


def snakemake(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "snakemake", *args], cwd, check=check)


def built_copy(dest: Path, *targets: str) -> Path:
    """A fresh copy of the project in ``dest`` with ``targets`` built (a whole-DAG fixture)."""
    root = copy_project(dest)
    snakemake(root, "--cores", "2", *targets)
    return root


def copy_of_build(built: Path, dest: Path) -> Path:
    """A fresh copy of the project in ``dest`` that carries ``built``'s results and Snakemake
    metadata (mtimes kept), so it is as up to date as ``built``.

    Why: the whole-DAG modules check the one demo build (``demo_build``) instead of each running
    its own LLM stages again; a module that edits or reruns works on such a copy.
    """
    return add_build(built, copy_project(dest))


def add_build(built: Path, root: Path) -> Path:
    """Copy ``built``'s results/, headline metrics/, Snakemake metadata and the project's record
    of its outputs (halluscope.provenance; mtimes kept) into the project ``root``."""
    for name in (*OUTPUT_ROOTS, ".snakemake", ".halluscope"):
        if (built / name).exists():  # a build of some targets only may have no metrics/
            copy_tree(built / name, root / name)
    for name in ("locks", "incomplete", "log"):  # another run's state, not the build's
        shutil.rmtree(root / ".snakemake" / name, ignore_errors=True)
    return root


def copy_tree(src: Path, dest: Path) -> None:
    """``cp -a`` of the folder ``src`` to ``dest`` (mtimes and symlinks kept).

    Why: a built demo holds ~23,000 files (most in the response cache); cp copies them in a
    fraction of the CPU time of shutil.copytree, and the whole-DAG tests copy it a dozen times.
    """
    assert not dest.exists(), f"{dest} exists: cp would copy into it"
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", "--reflink=auto", str(src), str(dest)], check=True)


def sha256s(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """SHA-256 of each file (path relative to ``root``)."""
    return {p: hashlib.sha256((root / p).read_bytes()).hexdigest() for p in paths}


def forced_rebuild(
    root: Path, rules: Sequence[str], targets: Sequence[str], files: Sequence[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """SHA-256 of ``files`` before and after rerunning ``rules`` for ``targets``.

    Why: a rebuild from the same inputs (and the response cache) must write the same bytes.
    """
    before = sha256s(root, files)
    snakemake(root, "--cores", "2", "--forcerun", *rules, "--", *targets)
    return before, sha256s(root, files)


def planned_jobs(cwd: Path, *targets: str) -> dict[str, int]:
    """Rule -> number of jobs a dry run would execute ({} when nothing is to be done)."""
    proc = snakemake(cwd, "-n", "--cores", "1", *targets)
    text = proc.stdout + proc.stderr
    if "Nothing to be done" in text:
        return {}
    stats = text.split("Job stats:", 1)[1]
    jobs = {}
    for line in stats.splitlines():
        match = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if match and match.group(1) != "total":
            jobs[match.group(1)] = int(match.group(2))
        if line.startswith("total"):
            break
    return jobs


def demo_items_file(tmp: Path) -> tuple[dict, Path]:
    """params.yaml and the demo items built by the data stage into ``tmp/items.jsonl``."""
    import yaml

    from halluscope.stages import data

    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    items = tmp / "items.jsonl"
    data.run(data.DataSettings("demo", ROOT / params["data"]["annotations"]), items, tmp / "images")
    return params, items


def sim_answers(model: str, cache: Path) -> AnswerSettings:
    """The answering settings of simulated LVLM ``model`` (a sim preset name), cache ``cache``."""
    from halluscope.stages.answering import AnswerSettings
    from halluscope.stages.llm import LLMSettings

    generation = {"seed": 0, "max_new_tokens": 64, "temperature": 0.0, "batch_size": 8}
    spec = {"backend": "sim", "preset": model}
    return AnswerSettings(LLMSettings.from_generation(model, spec, generation), cache)


def trihe_demo_triplets(
    tmp: Path, models: Sequence[str] = ("sim-frequent",)
) -> tuple[dict, Path, list[Path], list[Path]]:
    """Six demo Tri-HE questions answered by simulated LVLMs and their triplets (rule extractor):
    ``(params, items, answers, triplets)`` for the judge tests, one answers and one triplets file
    per model of ``models`` (``tmp/<model>/``)."""
    from halluscope.benchmarks.trihe import stages as trihe
    from halluscope.io import read_jsonl, write_jsonl

    params, items = demo_items_file(tmp)
    questions = tmp / "questions.jsonl"
    source = trihe.TriheQuestionSettings(str(ROOT / params["trihe"]["questions"]))
    trihe.questions(source, items, questions)
    write_jsonl(questions, read_jsonl(questions)[:6])
    answers, triplets = [], []
    for model in models:
        answers.append(tmp / model / "answers.jsonl")
        answering = sim_answers(model, tmp / "cache")
        settings = trihe.TriheAnswerSettings(answering.llm, answering.cache_dir, "none")
        trihe.answers(settings, items, questions, tmp / "cache", answers[-1])
        triplets.append(tmp / model / "triplets.jsonl")
        trihe.triplets(
            trihe.TripletSettings("rule", "sentence"), answers[-1], tmp / "cache", triplets[-1]
        )
    return params, items, answers, triplets


def nope_demo_answers(tmp: Path, models: Sequence[str]) -> list[Path]:
    """Demo NOPE answer files, one per simulated LVLM in ``models`` (``tmp/<model>/``): the other
    questions of the annotated relations and, per image and relevance, a Table 6 NegP question
    about the first fallback object (demo-like, without the LLM)."""
    from halluscope.benchmarks.nope import stages
    from halluscope.benchmarks.nope.generate import fallback_candidates
    from halluscope.benchmarks.nope.templates import choose_template
    from halluscope.io import write_jsonl
    from halluscope.stages.data import load_items

    params, items = demo_items_file(tmp)
    demo = load_items(items)
    fallback = stages.load_fallback(ROOT / params["nope"]["fallback_objects"])
    negp = []
    for image_id in demo:
        for relevance in params["nope"]["relevances"]:
            obj = fallback_candidates(fallback, relevance, image_id)[0]
            choice = choose_template(obj, image_id, relevance)
            negp.append({
                "question_id": f"{image_id}/{relevance}/f0", "image_id": image_id,
                "question": choice.reference_question, "reference": choice.reference,
                "acceptable_answers": list(choice.acceptable_answers), "is_negp": True,
                "question_type": choice.question_type, "relevance": relevance,
                "source": "fallback", "object": obj, "template_id": choice.template_id,
            })  # fmt: skip
    questions = tmp / "questions.jsonl"
    write_jsonl(questions, negp + stages.annotation_questions(list(demo.values())))
    out = []
    for model in models:
        out.append(tmp / model / "answers.jsonl")
        stages.answers(sim_answers(model, tmp / "cache"), items, questions, tmp / "cache", out[-1])
    return out
