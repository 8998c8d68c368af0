"""The stage registry: the single source from which ``dvc.yaml`` is generated.

One entry per paper stage. Each DVC stage runs Snakemake on that stage's target rule, lists only
the dotted ``params.yaml`` keys the stage reads (DVC 3 records them per stage in ``dvc.lock``),
its code and upstream outputs as deps, and marks its output folders ``persist: true`` so DVC
never deletes what Snakemake keeps incrementally. ``scripts/write_dvc_yaml.py`` writes the file;
``tests/test_dvc_sync.py`` fails when the committed ``dvc.yaml`` differs from this registry.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

CORE_CODE = [
    "Snakefile",
    "rules/common.smk",
    "src/halluscope/config.py",
    "src/halluscope/io.py",
    "src/halluscope/cli.py",
    "src/halluscope/commands/_args.py",
    "config/params.schema.json",
]


@dataclass(frozen=True)
class Stage:
    """One paper stage: Snakemake target, params keys, deps and outputs."""

    name: str
    target: str
    params: list[str]
    code: list[str]
    outs: list[str]
    upstream: list[str] = field(default_factory=list)
    description: str = ""
    metrics: list[str] = field(default_factory=list)  # per-profile JSON files under results/


STAGES: list[Stage] = [
    Stage(
        "data",
        "data_all",
        ["data"],
        ["rules/data.smk", "src/halluscope/data", "src/halluscope/stages/data.py", "data/demo"],
        ["results/data"],
        description="images and per-image ground truth",
    ),
    Stage(
        "generate",
        "generate_all",
        ["generate", "models", "instructions"],
        ["rules/generate.smk", "src/halluscope/models", "src/halluscope/stages/generate.py"],
        ["results/responses"],
        ["results/data"],
        "captions per model x instruction",
    ),
    Stage(
        "extract",
        "extract_all",
        ["extract", "models"],
        [
            "rules/extract.smk",
            "src/halluscope/objects",
            "src/halluscope/models",
            "src/halluscope/stages/extract.py",
        ],
        ["results/objects"],
        ["results/responses"],
        "ordered object lists (L1 + L2)",
    ),
    Stage(
        "oracle",
        "oracle_all",
        ["oracle", "models"],
        [
            "rules/oracle.smk",
            "src/halluscope/oracle.py",
            "src/halluscope/models",
            "src/halluscope/objects/normalize.py",
            "src/halluscope/stages/oracle.py",
        ],
        ["results/oracle"],
        ["results/objects", "results/data"],
        "presence of out-of-domain objects",
    ),
    Stage(
        "pope",
        "pope_all",
        ["pope", "models", "generate.models", "generate.seed", "generate.template_version"],
        [
            "rules/pope.smk",
            "src/halluscope/metrics/pope.py",
            "src/halluscope/stages/pope.py",
            "src/halluscope/models",
        ],
        ["results/pope"],
        ["results/data"],
        "POPE questions, answers and scores",
    ),
    Stage(
        "trihe",
        "trihe_all",
        [
            "trihe",
            "models",
            "generate.models",
            "generate.seed",
            "generate.max_new_tokens",
            "generate.temperature",
            "generate.template_version",
        ],
        [
            "rules/trihe.smk",
            "src/halluscope/stages/trihe.py",
            "src/halluscope/stages/answering.py",
            "src/halluscope/data/demo_benchmarks.py",
            "src/halluscope/data/trihe.py",
            "src/halluscope/objects/triplets.py",
            "src/halluscope/metrics/trihe.py",
            "src/halluscope/models",
            "data/demo/trihe_questions.yaml",
        ],
        ["results/trihe"],
        ["results/data"],
        "Tri-HE answers, triplets, judgements, Hallu_Q / Hallu_I",
    ),
    Stage(
        "phd",
        "phd_all",
        [
            "phd",
            "models",
            "generate.models",
            "generate.seed",
            "generate.max_new_tokens",
            "generate.temperature",
            "generate.template_version",
        ],
        [
            "rules/phd.smk",
            "src/halluscope/stages/phd.py",
            "src/halluscope/stages/answering.py",
            "src/halluscope/data/demo_benchmarks.py",
            "src/halluscope/data/phd.py",
            "src/halluscope/metrics/phd.py",
            "src/halluscope/models",
            "data/demo/phd_questions.yaml",
        ],
        ["results/phd"],
        ["results/data"],
        "PhD prompts, answers and PhD Index per mode x task",
    ),
    Stage(
        "nope",
        "nope_all",
        [
            "nope",
            "models",
            "generate.models",
            "generate.seed",
            "generate.max_new_tokens",
            "generate.temperature",
            "generate.template_version",
        ],
        [
            "rules/nope.smk",
            "src/halluscope/stages/nope.py",
            "src/halluscope/stages/answering.py",
            "src/halluscope/nope",
            "src/halluscope/metrics/nope.py",
            "src/halluscope/metrics/lexical_diversity.py",
            "src/halluscope/objects/coco.py",
            "src/halluscope/objects/normalize.py",
            "src/halluscope/models",
            "src/halluscope/commands/stages_nope.py",
            "data/demo/nope_fallback.yaml",
        ],
        ["results/nope"],
        ["results/data"],
        "NOPE questions (list-then-rewrite), answers, accuracy / METEOR / NegP accuracy",
    ),
    Stage(
        "embed",
        "embed_all",
        ["embed", "caos.frequent"],
        ["rules/embed.smk", "src/halluscope/embeddings.py", "src/halluscope/stages/embed.py"],
        ["results/embeddings"],
        ["results/objects", "results/data"],
        "object vectors",
    ),
    Stage(
        "score",
        "score_all",
        ["caos.k", "caos.k_max", "caos.frequent", "tables.table1_instructions"],
        [
            "rules/score.smk",
            "src/halluscope/metrics",
            "src/halluscope/stages/score.py",
            "src/halluscope/stages/summarize.py",
            "src/halluscope/stages/csvio.py",
        ],
        ["results/scores"],
        ["results/objects", "results/oracle", "results/embeddings", "results/pope"],
        "CAOS, CHAIR, precision, recall",
    ),
    Stage(
        "figures",
        "figures_all",
        [
            "figures",
            "caos.k",
            "caos.frequent",
            "embed.specs",
            "trihe.judges",
            "phd.modes",
            "nope.enabled",
        ],
        [
            "rules/figures.smk",
            "rules/nope.smk",
            "src/halluscope/report",
            "src/halluscope/stages/report.py",
            "src/halluscope/commands/stages_benchmarks.py",
            "src/halluscope/commands/stages_nope.py",
        ],
        ["results/figures"],
        ["results/scores", "results/trihe", "results/phd", "results/nope"],
        "Figures 3-6, Tri-HE bars, PhD heatmap, NOPE question types",
    ),
    Stage(
        "tables",
        "tables metrics",
        [
            "tables",
            "caos.k",
            "caos.frequent",
            "caos.sensitivity",
            "embed.specs",
            "generate.models",
            "trihe.judges",
            "trihe.mitigation",
            "phd.modes",
            "nope.enabled",
        ],
        [
            "rules/tables.smk",
            "rules/trihe.smk",
            "rules/phd.smk",
            "rules/nope.smk",
            "src/halluscope/report",
            "src/halluscope/stages/report.py",
            "src/halluscope/commands/stages_benchmarks.py",
            "src/halluscope/commands/stages_nope.py",
        ],
        ["results/report", "results/tables"],
        ["results/scores", "results/trihe", "results/phd", "results/nope"],
        "Tables 1-2 (LaTeX + CSV twins), Tri-HE, PhD and NOPE tables, metrics JSON",
        ["results/metrics"],
    ),
]


def dvc_yaml() -> str:
    """Render ``dvc.yaml`` from :data:`STAGES` (deterministic text)."""
    stages = {}
    profile = dvc_profile()
    for stage in STAGES:
        stages[stage.name] = {
            "desc": stage.description,
            "cmd": f"snakemake --cores all --rerun-incomplete {stage.target}",
            "deps": [*CORE_CODE, *stage.code, *(f"{u}/{profile}" for u in stage.upstream)],
            "params": list(stage.params),
            # only the params.yaml profile's folders: other profiles' results are not DVC's
            "outs": [{f"{out}/{profile}": {"persist": True}} for out in stage.outs],
        }
        if stage.metrics:
            stages[stage.name]["metrics"] = [
                {f"{m}/{profile}.json": {"cache": False}} for m in stage.metrics
            ]
    header = (
        "# GENERATED by scripts/write_dvc_yaml.py from src/halluscope/registry.py;"
        " do not edit by hand.\n"
    )
    return header + yaml.safe_dump({"stages": stages}, sort_keys=False, width=100)


def dvc_profile(root: Path | None = None) -> str:
    """The profile ``dvc repro`` runs: the ``profile`` of params.yaml (DVC reads no overlay)."""
    path = (root or Path(__file__).resolve().parents[2]) / "params.yaml"
    return str(yaml.safe_load(path.read_text(encoding="utf-8"))["profile"])


def code_files(stage: str, root: Path) -> list[Path]:
    """The Python files a stage runs: the core modules plus the stage's code entries, folders
    expanded to their ``*.py`` files (rules, schemas and data files are tracked otherwise)."""
    by_name = {s.name: s for s in STAGES}
    if stage not in by_name:
        raise ValueError(f"unknown stage {stage!r}; stages: {', '.join(by_name)}")
    files: set[Path] = set()
    for entry in (*CORE_CODE, *by_name[stage].code):
        path = root / entry
        if path.is_dir():
            files.update(path.rglob("*.py"))
        elif path.suffix == ".py":
            files.add(path)
    return sorted(files)


def code_digest(stage: str, root: Path) -> str:
    """SHA-256 over the stage's Python files (paths and bytes), for a Snakemake ``params:`` value.

    Why: Snakemake reruns a job when its params change but does not see the package code that
    its shell command runs; with this digest an edit of a stage's code reruns that stage's jobs
    (and what depends on them), as ``dvc repro`` does with the same code lists.
    """
    digest = hashlib.sha256()
    for path in code_files(stage, root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
