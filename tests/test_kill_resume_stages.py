"""SIGKILL in the middle of every other model-calling stage, then a rerun: identical outputs.

``test_kill_resume.py`` covers caption generation and the LLM object extraction; this file covers
the oracle (LVLM ensemble), POPE, Tri-HE and PhD answers, NOPE answers (simulated LVLMs), and the
Tri-HE triplet extraction and NOPE question generation (SmolLM2 through llama.cpp).

Each stage runs as a real subprocess, with the command line of its rule, on inputs built in a
temporary folder (the demo annotations replicated under new image ids, the question files built by
the upstream stage commands). ``batch_size`` is 1, so the response cache gains one entry per
request while the stage runs; the test SIGKILLs the stage once the cache holds a seeded random
number k of entries (1 <= k < number of requests) and checks that the stage had not finished yet.
Then:

- every output is absent or byte-identical to an uninterrupted run's (never a half file), and the
  output folder holds nothing else than the outputs and temp files;
- every cache entry is complete JSON named by its key; anything else in the cache is a temp file;
- after a rerun on the same cache, every output is byte-identical to the uninterrupted run (made
  in its own folder with a fresh cache), has the expected number of records and unique ids, and
  the cache holds exactly the uninterrupted run's entries: one per distinct request (no record
  lost or duplicated).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from halluscope.config import overlay
from halluscope.io import read_jsonl, write_jsonl
from halluscope.stages.answering import AnswerSettings

ROOT = Path(__file__).resolve().parents[1]
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
REPLICAS = 12  # copies of the 9 demo images under new ids (distinct image hashes)
PHD_REPLICAS = 1  # one copy of the PhD records already makes ~280 prompts (4 modes x 2 labels)
SIM_SEEDS = (1, 2, 3)
LLM_SEEDS = (1, 2)


# ---------------------------------------------------------------------------------- helpers


def cli(stage: str, *args: str) -> list[str]:
    """``halluscope stage NAME ARGS`` (the rules' entry point) for ``stage-NAME``."""
    return [sys.executable, "-m", "halluscope.cli", "stage", stage.removeprefix("stage-"), *args]


def run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")


def one_per_batch() -> dict:
    """params.yaml with one request per cache batch in every LLM block (a kill loses at most
    the request in flight)."""
    one = {"batch_size": 1}
    fallback = PARAMS["nope"]["fallback_objects"]  # the file, wherever the test runs
    return overlay(
        json.loads(json.dumps(PARAMS)),
        {"generate": one, "oracle": one, "trihe": {"extractor": {"llm": one}}},
        {"nope": {"llm": one, "shards": 1, "fallback_objects": str(ROOT / fallback)}},
    )


ONE_BATCH = one_per_batch()


def cache_entries(cache: Path) -> list[Path]:
    """The complete entries of a response cache (``root/<2 hex>/<key>.json``)."""
    return sorted(cache.glob("*/*.json")) if cache.exists() else []


def count_entries(cache: Path) -> int:
    """Fast count of the cache entries (called in a tight polling loop)."""
    n = 0
    try:
        with os.scandir(cache) as folders:
            for folder in folders:
                with os.scandir(folder.path) as files:
                    n += sum(1 for f in files if f.name.endswith(".json"))
    except FileNotFoundError:
        pass
    return n


@dataclass(frozen=True)
class Stage:
    """One model-calling stage: its command line and how to check its outputs."""

    name: str
    command: Callable[[Path, Path], list[str]]  # (cache, output folder) -> argv
    outputs: tuple[str, ...]  # file names in the output folder; the first holds the records
    records: Callable[[bytes], list[str]]  # the record ids of the first output's content
    expected: int | None  # number of records (None: the uninterrupted run's)
    # distinct requests = cache entries; a function of the uninterrupted run's outputs when the
    # requests depend on earlier answers of the model
    requests: int | Callable[[dict[str, bytes]], int]
    timeout: float = 120.0  # seconds to wait for k cache entries


def jsonl_ids(*keys: str) -> Callable[[bytes], list[str]]:
    def ids(data: bytes) -> list[str]:
        rows = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
        return ["|".join(str(row[k]) for k in keys) for row in rows]

    return ids


def shard_ids(data: bytes) -> list[str]:
    return [str(c["question_id"]) for c in json.loads(data)["candidates"]]


# ----------------------------------------------------------------------------------- inputs


def demo_images() -> list[dict]:
    data = yaml.safe_load((ROOT / "data/demo/annotations.yaml").read_text(encoding="utf-8"))
    return data["images"]


def item(rec: dict, image_id: str) -> dict:
    """An ``items.jsonl`` record (the sim needs no image file, only its hash)."""
    return {
        "image_id": image_id,
        "image": None,
        "image_sha256": hashlib.sha256(image_id.encode()).hexdigest(),
        "gt_objects": rec["coco"],
        "other_objects": rec["other"],
        "relations": rec["relations"],
        "caption": " ".join(rec["caption"].split()),
        "source": {"dataset": "demo", "replica_of": rec["id"]},
    }


def replica(image_id: str, r: int) -> str:
    return f"{image_id}-r{r}"


OOD = ["giraffe", "violin", "surfboard", "teapot", "anchor", "tent"]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict:
    """Items, POPE questions, Tri-HE questions, PhD prompts, NOPE questions, oracle objects."""
    root = tmp_path_factory.mktemp("inputs")
    images = demo_images()
    items = [item(rec, replica(rec["id"], r)) for r in range(REPLICAS) for rec in images]
    write_jsonl(root / "items.jsonl", items)
    out: dict = {"items": root / "items.jsonl"}

    # POPE: the upstream stage (n and seed of params.yaml) on the replicated items
    from halluscope.benchmarks.phd.settings import PhdPromptSettings
    from halluscope.benchmarks.pope.stages import PopeQuestionSettings
    from halluscope.benchmarks.trihe import stages as trihe_stages

    out["pope"] = root / "pope.jsonl"
    run(
        cli("stage-pope-questions", "--items", str(out["items"]), "--out", str(out["pope"]))
        + ["--settings", PopeQuestionSettings.from_config(PARAMS, "adversarial").to_json()]
    )

    # Tri-HE: the demo questions replicated onto the new image ids, through the upstream stage
    trihe = yaml.safe_load((ROOT / PARAMS["trihe"]["questions"]).read_text(encoding="utf-8"))
    questions = [
        {**q, "id": replica(q["id"], r), "image": replica(q["image"], r)}
        for r in range(REPLICAS)
        for q in trihe["questions"]
    ]
    (root / "trihe.yaml").write_text(yaml.safe_dump({"questions": questions}), encoding="utf-8")
    out["trihe"] = root / "trihe.jsonl"
    run(
        cli("stage-trihe-questions", "--items", str(out["items"]), "--out", str(out["trihe"]))
        + ["--settings", trihe_stages.TriheQuestionSettings(str(root / "trihe.yaml")).to_json()]
    )

    # PhD: the demo records on replica 0, all modes, through the upstream stage
    phd = yaml.safe_load((ROOT / PARAMS["phd"]["questions"]).read_text(encoding="utf-8"))
    records = [
        {**rec, "image_id": replica(rec["image_id"], r)}
        for r in range(PHD_REPLICAS)
        for rec in phd["records"]
    ]
    (root / "phd.yaml").write_text(yaml.safe_dump({"records": records}), encoding="utf-8")
    out["phd"] = root / "phd.jsonl"
    run(
        cli("stage-phd-prompts", "--items", str(out["items"]), "--out", str(out["phd"]))
        + [
            "--settings",
            PhdPromptSettings(str(root / "phd.yaml"), PARAMS["phd"]["modes"]).to_json(),
        ]
    )

    # NOPE: NegP questions about absent objects + the other questions from the annotations
    from halluscope.benchmarks.nope.stages import QUESTION_FIELDS, annotation_questions

    negp_forms = {
        "object": ("What is the {} holding?", ["none", "nothing"]),
        "color": ("What color is the {}?", ["none", "nothing"]),
        "counting": ("How many {}s are there?", ["zero", "0", "none"]),
        "location": ("Where is the {}?", ["nowhere"]),
    }
    negp = []
    for it in items:
        for k, obj in enumerate(OOD[:2]):
            qtype = list(negp_forms)[(k + len(negp)) % len(negp_forms)]
            text, answers = negp_forms[qtype]
            negp.append(
                {
                    "question_id": f"{it['image_id']}/unrelated/{k}",
                    "image_id": it["image_id"],
                    "question": text.format(obj),
                    "reference": answers[0],
                    "acceptable_answers": answers,
                    "is_negp": True,
                    "question_type": qtype,
                    "relevance": "unrelated",
                    "source": "fallback",
                    "object": obj,
                    "template_id": None,
                }
            )
    nope_questions = [{k: q.get(k) for k in QUESTION_FIELDS} for q in negp]
    nope_questions += annotation_questions(items[: 2 * len(images)])
    out["nope"] = root / "nope.jsonl"
    write_jsonl(out["nope"], nope_questions)

    # Oracle: per image, one in-domain object (never asked) and three out-of-domain ones, two of
    # them annotated as present and one absent, mentioned twice (asked once)
    objects = []
    for it in items:
        names = [*it["other_objects"][:2], OOD[len(objects) % len(OOD)]]
        objs = [{"name": name, "in_domain": True} for name in it["gt_objects"][:1]]
        objs += [{"name": n, "in_domain": False} for n in [*names, names[0]]]
        objects.append({"image_id": it["image_id"], "objects": objs})
    out["objects"] = root / "objects.jsonl"
    write_jsonl(out["objects"], objects)
    out["oracle_pairs"] = len(
        {(o["image_id"], x["name"]) for o in objects for x in o["objects"] if not x["in_domain"]}
    )
    return out


def distinct(rows: list[dict], *keys: str) -> int:
    return len({tuple(json.dumps(r[k], sort_keys=True) for k in keys) for r in rows})


# ----------------------------------------------------------------------------------- stages


def sim_stages(inputs: dict) -> dict[str, Stage]:
    from halluscope.benchmarks.caos.captions.oracle import OracleSettings
    from halluscope.benchmarks.trihe.stages import TriheAnswerSettings

    items = str(inputs["items"])

    def answers(cmd: str, model: str, flag: str, questions: Path, mitigation: str | None = None):
        settings = AnswerSettings.from_config(ONE_BATCH, model)
        if mitigation is not None:
            settings = TriheAnswerSettings(settings.llm, mitigation=mitigation)

        def command(cache: Path, out: Path) -> list[str]:
            return cli(
                cmd, "--items", items, flag, str(questions), "--settings", settings.to_json(),
                "--cache", str(cache), "--out", str(out / "answers.jsonl"),
            )  # fmt: skip

        return command

    pope = read_jsonl(inputs["pope"])
    trihe = read_jsonl(inputs["trihe"])
    phd = read_jsonl(inputs["phd"])
    nope = read_jsonl(inputs["nope"])
    questions = {q["question_id"]: q["question"] for q in trihe}

    def describe_requests(outputs: dict[str, bytes]) -> int:
        """Describe requests (with the image), then answer requests (text only: the same
        description and question give one request)."""
        rows = [json.loads(line) for line in outputs["answers.jsonl"].splitlines()]
        second = {(r["description"], questions[r["question_id"]]) for r in rows}
        return distinct(trihe, "image_id", "question") + len(second)

    oracle = OracleSettings.from_config(ONE_BATCH)
    members = oracle.members

    def oracle_command(cache: Path, out: Path) -> list[str]:
        return [
            sys.executable, "-m", "halluscope.cli", "stage", "oracle", "decide",
            "--objects", str(inputs["objects"]), "--items", items,
            "--settings", oracle.to_json(), "--cache", str(cache),
            "--out", str(out / "decisions.jsonl"), "--accuracy", str(out / "accuracy.json"),
        ]  # fmt: skip

    return {
        "oracle": Stage(
            "oracle",
            oracle_command,
            ("decisions.jsonl", "accuracy.json"),
            jsonl_ids("image_id", "name"),
            inputs["oracle_pairs"],
            inputs["oracle_pairs"] * len(members),
        ),
        "pope": Stage(
            "pope",
            answers("stage-pope-answers", "sim-verbose", "--questions", inputs["pope"]),
            ("answers.jsonl",),
            jsonl_ids("question_id"),
            len(pope),
            distinct(pope, "image", "text"),
        ),
        "trihe": Stage(
            "trihe",
            answers(
                "stage-trihe-answers",
                "sim-frequent",
                "--questions",
                inputs["trihe"],
                PARAMS["trihe"]["mitigation"],
            ),
            ("answers.jsonl",),
            jsonl_ids("question_id"),
            len(trihe),
            distinct(trihe, "image_id", "question"),
        ),
        "trihe-describe": Stage(
            "trihe-describe",
            answers(
                "stage-trihe-answers",
                "sim-verbose",
                "--questions",
                inputs["trihe"],
                "describe",
            ),
            ("answers.jsonl",),
            jsonl_ids("question_id"),
            len(trihe),
            describe_requests,
        ),
        "phd": Stage(
            "phd",
            answers("stage-phd-answers", "sim-precise", "--prompts", inputs["phd"]),
            ("answers.jsonl",),
            jsonl_ids("id"),
            len(phd),
            distinct(phd, "image_id", "question"),
        ),
        "nope": Stage(
            "nope",
            answers("stage-nope-answers", "sim-frequent", "--questions", inputs["nope"]),
            ("answers.jsonl",),
            jsonl_ids("question_id"),
            len(nope),
            distinct(nope, "image_id", "question"),
        ),
    }


@dataclass
class Reference:
    outputs: dict[str, bytes]
    entries: list[str]  # names of the cache entries


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Callable[[Stage], Reference]:
    """The uninterrupted run of a stage (own folder, fresh cache), computed once per stage."""
    done: dict[str, Reference] = {}

    def get(stage: Stage) -> Reference:
        if stage.name not in done:
            root = tmp_path_factory.mktemp(f"ref-{stage.name}")
            (root / "out").mkdir()
            run(stage.command(root / "cache", root / "out"))
            done[stage.name] = Reference(
                {name: (root / "out" / name).read_bytes() for name in stage.outputs},
                [p.name for p in cache_entries(root / "cache")],
            )
        return done[stage.name]

    return get


# ------------------------------------------------------------------------------------ check


def kill_then_rerun(stage: Stage, ref: Reference, tmp_path: Path, seed: int) -> None:
    n_requests = len(ref.entries)
    requests = stage.requests if isinstance(stage.requests, int) else stage.requests(ref.outputs)
    assert n_requests == requests, f"{stage.name}: {n_requests} entries for {requests} requests"
    assert n_requests >= 2, f"{stage.name}: too few requests to kill the stage in the middle"
    # kill once k entries exist; the margin keeps the stage from finishing before the signal
    k = random.Random(f"{stage.name}/{seed}").randint(1, max(1, (n_requests * 9) // 10))
    cache, out = tmp_path / "cache", tmp_path / "out"
    out.mkdir()
    with (tmp_path / "stderr.log").open("wb") as log:
        proc = subprocess.Popen(stage.command(cache, out), stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + stage.timeout
        while count_entries(cache) < k:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise AssertionError(
                    f"{stage.name}: {count_entries(cache)} of k={k} cache entries when the stage "
                    f"ended (status {proc.returncode}): "
                    + (tmp_path / "stderr.log").read_text(errors="replace")[-3000:]
                )
            time.sleep(0.002)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, (
        f"{stage.name}: the stage finished (status {proc.returncode}) before the kill at k={k} "
        f"of {n_requests} entries; the test tested nothing: make the inputs bigger"
    )

    # never a half file: each output is absent or complete, and nothing else is in its folder
    for name in stage.outputs:
        if (out / name).exists():
            assert (out / name).read_bytes() == ref.outputs[name], f"{stage.name}: half {name}"
    for path in out.iterdir():
        assert path.name in stage.outputs or path.name.endswith(".tmp"), path
    # the cache: complete entries named by their key, temp files of an interrupted write
    entries = cache_entries(cache)
    for path in cache.rglob("*"):
        if path.is_file() and path not in entries:
            assert path.name.endswith(".tmp"), path
    for path in entries:
        entry = json.loads(path.read_text(encoding="utf-8"))
        assert entry["key"] == path.stem and path.parent.name == path.stem[:2]
    assert k <= len(entries) < n_requests or (
        len(entries) == n_requests and not (out / stage.outputs[0]).exists()
    ), f"{stage.name}: {len(entries)} entries after the kill at k={k} of {n_requests}"
    assert {p.name for p in entries} <= set(ref.entries), "entries the uninterrupted run lacks"

    # the rerun resumes to the bytes of the uninterrupted run
    run(stage.command(cache, out))
    for name in stage.outputs:
        assert (out / name).read_bytes() == ref.outputs[name], f"{stage.name}: {name} differs"
    ids = stage.records((out / stage.outputs[0]).read_bytes())
    expected = stage.expected
    if expected is None:  # fixed by the LLM's answers: the uninterrupted run's count
        expected = len(stage.records(ref.outputs[stage.outputs[0]]))
    assert len(ids) == expected, f"{stage.name}: {len(ids)} records, expected {expected}"
    assert len(set(ids)) == len(ids), f"{stage.name}: duplicated record ids"
    names = [p.name for p in cache_entries(cache)]
    assert len(names) == n_requests and sorted(names) == sorted(ref.entries), (
        f"{stage.name}: {len(names)} cache entries after the rerun, expected {n_requests}"
    )


# ------------------------------------------------------------------------------------- tests

SIM_CASES = [
    (name, seed)
    for name in ("oracle", "pope", "trihe", "trihe-describe", "phd", "nope")
    for seed in (SIM_SEEDS if name != "trihe-describe" else SIM_SEEDS[:2])
]  # trihe-describe: seed 1 kills during the describe requests, seed 2 during the answers


@pytest.mark.parametrize(("name", "seed"), SIM_CASES, ids=[f"{n}-{s}" for n, s in SIM_CASES])
def test_sim_stage_sigkill_then_rerun(inputs, reference, tmp_path: Path, name: str, seed: int):
    stage = sim_stages(inputs)[name]
    kill_then_rerun(stage, reference(stage), tmp_path, seed)


@pytest.fixture(scope="module")
def llm_stages(inputs, tmp_path_factory) -> dict[str, Stage]:
    """Tri-HE triplet extraction, the Tri-HE LLM judge and NOPE list-then-rewrite with SmolLM2
    (params.yaml settings, one request per batch), on a few inputs: the real LLM answers ~1.4
    short requests/s."""
    from halluscope.benchmarks.nope.stages import NopeGeneratorSettings
    from halluscope.benchmarks.trihe.stages import (
        JudgeSettings,
        TriheAnswerSettings,
        TripletSettings,
    )

    root = tmp_path_factory.mktemp("llm-inputs")
    # answers of a simulated LVLM to the first Tri-HE questions (what the rule's input holds)
    trihe = read_jsonl(inputs["trihe"])
    write_jsonl(root / "questions.jsonl", trihe[:3])
    run(
        cli("stage-trihe-answers", "--items", str(inputs["items"]), "--questions")
        + [str(root / "questions.jsonl"), "--settings"]
        + [TriheAnswerSettings.from_config(ONE_BATCH, "sim-verbose").to_json()]
        + ["--cache", str(root / "cache"), "--out", str(root / "answers.jsonl")]
    )
    answers = read_jsonl(root / "answers.jsonl")
    extractor = TripletSettings.from_config(ONE_BATCH).to_json()

    def triplets(cache: Path, out: Path) -> list[str]:
        return cli(
            "stage-trihe-triplets", "--answers", str(root / "answers.jsonl"), "--settings",
            extractor, "--cache", str(cache), "--out", str(out / "triplets.jsonl"),
        )  # fmt: skip

    from halluscope.benchmarks.trihe.triplets import split_sentences

    sentences = {s for a in answers for s in split_sentences(a["text"]) if s}

    # NOPE generation for one demo image (its own id: the fallback file names it)
    image = demo_images()[0]
    write_jsonl(root / "items.jsonl", [item(image, image["id"])])
    generator = NopeGeneratorSettings.from_config(ONE_BATCH).to_json()

    def nope(cache: Path, out: Path) -> list[str]:
        return cli(
            "stage-nope-generate", "--items", str(root / "items.jsonl"), "--settings",
            generator, "--cache", str(cache), "--shard", "0", "--out", str(out / "shard0.json"),
        )  # fmt: skip

    def nope_requests(outputs: dict[str, bytes]) -> int:
        """Listings + rewrites of the listings with a valid object (counted by the stage)."""
        stats = json.loads(outputs["shard0.json"])["stats"]
        return stats["listing_requests"] + stats["rewrite_requests"]

    # the Tri-HE LLM judge (SmolLM2, JSON-constrained replies) on rule-extracted triplets
    run(
        cli("stage-trihe-triplets", "--answers", str(root / "answers.jsonl"), "--settings")
        + [TripletSettings("rule", "sentence").to_json(), "--cache", str(root / "cache")]
        + ["--out", str(root / "rule-triplets.jsonl")]
    )
    judge_llm = {
        "model": "smollm2", "max_new_tokens": 24, "temperature": 0.0, "seed": 0,
        "batch_size": 1, "template_version": "v1", "cache_mode": "live", "reply_rule": "json",
    }  # fmt: skip
    judge = JudgeSettings.from_config(
        {**PARAMS, "trihe": {**PARAMS["trihe"], "judges": ["llm"],
                             "judge": {**PARAMS["trihe"]["judge"], "llm": judge_llm}}}
    ).to_json()  # fmt: skip
    claims = {
        (row["image_id"], tuple(t))
        for row in read_jsonl(root / "rule-triplets.jsonl")
        for t in row["triplets"]
    }

    def trihe_judge(cache: Path, out: Path) -> list[str]:
        return cli(
            "stage-trihe-judge", "--items", str(inputs["items"]), "--answers",
            str(root / "answers.jsonl"), "--triplets", str(root / "rule-triplets.jsonl"),
            "--settings", judge, "--cache", str(cache),
            "--out-judgments", str(out / "judgments.jsonl"),
            "--out-scores", str(out / "scores.json"),
        )  # fmt: skip

    return {
        "trihe-judge": Stage(
            "trihe-judge",
            trihe_judge,
            ("judgments.jsonl", "scores.json"),
            jsonl_ids("question_id"),
            len(answers),
            len(claims),
            timeout=300.0,
        ),
        "triplets": Stage(
            "triplets",
            triplets,
            ("triplets.jsonl",),
            jsonl_ids("question_id"),
            len(answers),
            len(sentences),
            timeout=300.0,
        ),
        "nope-generate": Stage(
            "nope-generate",
            nope,
            ("shard0.json",),
            shard_ids,
            None,  # how many questions depends on what the LLM lists
            nope_requests,
            timeout=300.0,
        ),
    }


LLM_STAGES = ("triplets", "trihe-judge", "nope-generate")
LLM_CASES = [(name, seed) for name in LLM_STAGES for seed in LLM_SEEDS]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "seed"), LLM_CASES, ids=[f"{n}-{s}" for n, s in LLM_CASES])
def test_llm_stage_sigkill_then_rerun(llm_stages, reference, tmp_path: Path, name: str, seed: int):
    kill_then_rerun(llm_stages[name], reference(llm_stages[name]), tmp_path, seed)
