"""The explorer page's data (halluscope.stages.explorer) on a small profile whose score files the
real score stage writes: every count and CAOS value on the page is the score files' value, every
object's kind is the scorer's, and bad input is one error naming its file and line.

Fast: two images, two models, one instruction, made-up word vectors. The page drawn by a browser
is tests/test_explorer_browser.py's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from halluscope.benchmarks import BENCHMARKS
from halluscope.benchmarks.caos.score import CaosScoreSettings
from halluscope.embeddings import save_vectors
from halluscope.explorer.page import data_json
from halluscope.io import InputError, write_jsonl
from halluscope.objects.parser import tokenize
from halluscope.stage_command import run
from halluscope.stages.explorer import ExplorerSettings, explorer, plugins

PROFILE = "tiny"
MODELS = ["m1", "m2"]
ITEMS_PATH = f"results/data/{PROFILE}/items.jsonl"
ITEMS = [
    {
        "image_id": "a",
        "image": f"results/data/{PROFILE}/images/a.png",
        "gt_objects": ["dog", "person"],
    },
    {"image_id": "b", "image": None, "gt_objects": ["cat"], "other_objects": ["rug"]},
]
# per model and image: the caption and its objects (name, in domain, source), caption order
CAPTIONS = {
    "m1": {
        "a": ("A person with a dog and a surfboard near a tree.",
              [("person", True), ("dog", True), ("surfboard", True), ("tree", False)]),
        "b": ("A cat on a rug beside a vase.", [("cat", True), ("rug", False), ("vase", True)]),
    },
    "m2": {
        "a": ("A dog, a dog and a kite.", [("dog", True), ("dog", True), ("kite", True)]),
        "b": ("A cat and a lamp.", [("cat", True), ("lamp", False)]),
    },
}  # fmt: skip
# the oracle's decisions on the out-of-domain objects: tree rejected, rug kept, lamp unverified
ORACLE = {("a", "tree"): False, ("b", "rug"): True, ("b", "lamp"): None}
WORDS = ["person", "dog", "surfboard", "tree", "cat", "rug", "vase", "kite", "lamp", "car", "chair"]
FREQUENT = ["person", "car", "chair", "dog", "cat", "tree", "kite", "vase", "rug", "lamp"]  # K
POPE = [
    {"image": "a", "label": "yes", "question_id": 1, "text": "Is there a dog in the image?"},
    {"image": "a", "label": "no", "question_id": 2, "text": "Is there a car in the image?"},
]
POPE_ANSWERS = {"m1": ["Yes, there is.", "Yes."], "m2": ["No.", "No, there is no car."]}


def objects_record(image_id: str, text: str, objects: list[tuple[str, bool]]) -> dict:
    """An object list as extraction writes it: each name at its first unused token."""
    tokens = [t.text for t in tokenize(text)]
    used: set[int] = set()
    out = []
    for name, in_domain in objects:
        position = next(i for i, t in enumerate(tokens) if t == name and i not in used)
        used.add(position)
        out.append({"in_domain": in_domain, "name": name, "position": position,
                    "source": "rule" if in_domain else "lexicon", "surface": name})  # fmt: skip
    return {"image_id": image_id, "objects": out}


def config() -> dict:
    """The params the page reads, for profile ``tiny`` (CAOS and POPE enabled)."""
    return {
        "profile": PROFILE,
        "generate": {"models": MODELS, "instructions": ["i01"]},
        "instructions": {"i01": "Describe the image."},
        "embed": {"embedders": ["glove"], "specs": {"glove": {"kind": "glove"}}},
        "caos": {"k": 3, "k_max": 10, "frequent": FREQUENT},
        "pope": {"enabled": True, "settings": ["random"], "parser": "original"},
    }


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Profile ``tiny``'s results, scored by the real score stage, in the working directory."""
    from PIL import Image

    monkeypatch.chdir(tmp_path)
    results = Path("results")
    images = results / "data" / PROFILE / "images"
    images.mkdir(parents=True)
    Image.new("RGB", (64, 48), (200, 40, 40)).save(images / "a.png")
    write_jsonl(results / "data" / PROFILE / "items.jsonl", ITEMS)
    vectors = results / "embeddings" / PROFILE / "glove.npz"
    vectors.parent.mkdir(parents=True)
    save_vectors(vectors, WORDS, np.random.default_rng(0).normal(size=(len(WORDS), 8)))
    for model, captions in CAPTIONS.items():
        paths = {a: results / a / PROFILE / model / "i01.jsonl" for a in ("responses", "objects")}
        paths["oracle"] = results / "oracle" / PROFILE / model / "i01.jsonl"
        responses = [
            {"image_id": i, "instruction_id": "i01", "model": model, "text": text}
            for i, (text, _) in captions.items()
        ]
        write_jsonl(paths["responses"], responses)
        write_jsonl(paths["objects"], [objects_record(i, t, o) for i, (t, o) in captions.items()])
        decisions = [
            {"image_id": i, "name": n, "present": ORACLE[i, n], "method": "annotations"}
            for i, (_, objects) in captions.items()
            for n, in_domain in objects
            if not in_domain
        ]
        write_jsonl(paths["oracle"], decisions)
        scores = results / "scores" / PROFILE / "glove" / model
        settings = CaosScoreSettings.from_config(config(), "glove").to_json()
        # the score stage's command line, as rule score runs it
        argv = ["score", "--settings", settings, "--objects", paths["objects"], "--oracle",
                paths["oracle"], "--items", ITEMS_PATH, "--vectors", vectors, "--model-id", model,
                "--out-captions", scores / "i01.captions.csv",
                "--out-objects", scores / "i01.objects.csv"]  # fmt: skip
        assert run([str(a) for a in argv]) == 0
    questions = results / "pope" / PROFILE / "questions" / "random.jsonl"
    write_jsonl(questions, POPE)
    for model, texts in POPE_ANSWERS.items():
        answers = [
            {"question_id": q["question_id"], "text": t} for q, t in zip(POPE, texts, strict=True)
        ]
        write_jsonl(results / "pope" / PROFILE / model / "random.answers.jsonl", answers)
    return tmp_path


def build(out: Path = Path("page.html")) -> dict:
    """Run the stage on ``tiny`` and return the data inlined in the page."""
    explorer(ExplorerSettings.from_config(config()), Path(ITEMS_PATH), out)
    page = out.read_text(encoding="utf-8")
    match = re.search(r'<script id="explorer-data" type="application/json">(.*?)</script>', page)
    assert match, "no page data"
    return json.loads(match.group(1))


def csv_rows(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def rounded(cell: str) -> float | None:
    return None if cell == "" else round(float(cell), 4)


def test_the_page_data_equals_the_score_files(project: Path) -> None:
    data = build()
    scores = Path("results/scores") / PROFILE / "glove"
    rows = {
        (m, r["image_id"]): r for m in MODELS for r in csv_rows(scores / m / "i01.captions.csv")
    }
    objects = {
        (m, r["image_id"], int(r["position"])): r
        for m in MODELS
        for r in csv_rows(scores / m / "i01.objects.csv")
    }
    assert data["summary"] == {
        "images": 2,
        "models": 2,
        "captions": len(rows),
        "hallucinated": sum(int(r["n_hallucinated"]) for r in rows.values()),
        "answers": 4,
        "wrong": 2,  # m1 says yes to the car, m2 no to the dog
    }
    assert data["summary"]["hallucinated"] == 4  # surfboard, tree (rejected), vase, kite
    kinds = [k for k, _, _ in data["kinds"]]
    seen = 0
    for image in data["images"]:
        for _, m, _, text, n_hallucinated, marks, values in image["c"]:
            model = data["models"][m]
            row = rows[model, image["id"]]
            assert n_hallucinated == int(row["n_hallucinated"])
            assert values == [rounded(row[c]) for c in ("CAOS_T", "CAOS_X", "CAOS_K")]
            for start, end, kind, name, numbers in marks:
                assert text[start:end] == name
                found = objects.get((model, image["id"], _position(text, start)))
                if found and found["name"] == name and numbers:
                    seen += 1
                    assert numbers == [rounded(found[c]) for c in ("sim_T", "sim_X", "sim_K3")]
                    assert kinds[kind] in ("hallucinated", "ood-rejected")
    assert seen == 4  # every hallucinated object, once
    by_name = {
        (data["models"][c[1]], mark[3]): kinds[mark[2]]
        for image in data["images"]
        for c in image["c"]
        for mark in c[5]
    }
    assert by_name == {
        ("m1", "person"): "grounded",
        ("m1", "dog"): "grounded",
        ("m1", "surfboard"): "hallucinated",
        ("m1", "tree"): "ood-rejected",
        ("m1", "cat"): "grounded",
        ("m1", "rug"): "ood-kept",
        ("m1", "vase"): "hallucinated",
        ("m2", "dog"): "grounded",
        ("m2", "kite"): "hallucinated",
        ("m2", "cat"): "grounded",
        ("m2", "lamp"): "unverified",
    }


def _position(text: str, start: int) -> int:
    """The token index of the token starting at character ``start``."""
    return next(i for i, t in enumerate(tokenize(text)) if t.start == start)


def test_images_come_worst_first_with_their_thumbnail_and_answers(project: Path) -> None:
    data = build()
    first, second = data["images"]
    assert [first["id"], second["id"]] == ["a", "b"]
    assert first["h"] >= second["h"]
    assert first["thumb"].startswith("data:image/jpeg;base64,") and second["thumb"] is None
    assert second["other"] == ["rug"]
    pope = [b["name"] for b in data["benchmarks"]].index("pope")
    wrong = {(data["models"][a[1]], a[3]): a[7] for a in first["a"] if a[0] == pope}
    assert wrong == {
        ("m1", "Is there a dog in the image?"): 0,
        ("m1", "Is there a car in the image?"): 1,
        ("m2", "Is there a dog in the image?"): 1,
        ("m2", "Is there a car in the image?"): 0,
    }


def test_the_page_is_offline_and_the_same_bytes_twice(project: Path) -> None:
    build(Path("one.html"))
    build(Path("two.html"))
    page = Path("one.html").read_bytes()
    assert page == Path("two.html").read_bytes()
    text = page.decode("utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "fetch(" not in text and "XMLHttpRequest" not in text
    # the data cannot end its script element early
    assert "</" not in data_json({"text": "</script><script>alert(1)</script>"})


def test_a_malformed_line_gives_an_error_naming_its_file_and_line(project: Path) -> None:
    path = Path("results/objects") / PROFILE / "m2" / "i01.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text(lines[0] + "\n" + lines[1][:-5] + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"{path}:2: malformed JSON")):
        build()
    record = json.loads(lines[1])
    del record["objects"][0]["position"]
    path.write_text(lines[0] + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"{path}:2: an object without field")):
        build()


def test_a_stale_score_file_is_named_with_its_line(project: Path, capsys) -> None:
    """A score file whose count disagrees with the object list is older than it: the command
    says which file and line, in one line, with exit status 2."""
    path = Path("results/scores") / PROFILE / "glove" / "m1" / "i01.captions.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    cells = lines[1].split(",")
    column = header.index("n_hallucinated")
    cells[column] = str(int(cells[column]) + 1)
    path.write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n", encoding="utf-8")
    settings = ExplorerSettings.from_config(config()).to_json()
    argv = ["explorer", "--settings", settings, "--items", ITEMS_PATH, "--out", "page.html"]
    assert run(argv) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"halluscope stage explorer: error: {path}:2: n_hallucinated")
    assert "\n" not in error


def test_every_benchmark_has_an_explorer_part_and_the_settings_round_trip() -> None:
    """Each registered benchmark has per-image outputs and its part of the page; the settings
    hold only the enabled ones."""
    parts = plugins()
    assert list(parts) == [b.name for b in BENCHMARKS]
    for module in parts.values():
        assert {"TITLE", "options", "files", "contribution"} <= set(vars(module))
    settings = ExplorerSettings.from_config(config())
    assert sorted(settings.benchmarks) == ["caos", "pope"]
    assert ExplorerSettings.from_json(settings.to_json()) == settings
