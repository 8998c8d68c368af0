"""The noun check's tag store (:mod:`halluscope.objects.noun_tags`, rule ``noun_tags``): an
extract job that reads it writes the bytes it writes when it tags itself, without tagging; a
store of another tagger, or a window two files tagged differently, is not used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from halluscope.benchmarks.caos.captions.extract import (
    ExtractSettings,
    NounTagSettings,
    run,
    tag_nouns,
)
from halluscope.io import InputError, write_jsonl
from halluscope.objects.noun_tags import merge_tagged, read_store, write_store
from halluscope.objects.nouns import Tagged

CAPTIONS = {
    "i01": [
        "A bench can be seen near a trash can, and a man is wearing a watch.",
        "A coffee table stands near a street sign and a water bottle.",
    ],
    "i02": [
        "The picture shows a vase made of blue glass on a window sill.",
        "A bench can be seen near a trash can, and a man is wearing a watch.",
        "There are no signs of wear on the old wooden boat.",
    ],
}
METHOD = "rule+lexicon"
ROOT = Path(__file__).resolve().parents[1]


def responses(tmp_path: Path) -> list[Path]:
    paths = []
    for name, texts in CAPTIONS.items():
        path = tmp_path / "responses" / f"{name}.jsonl"
        path.parent.mkdir(exist_ok=True)
        write_jsonl(path, ({"image_id": n, "text": t} for n, t in enumerate(texts)))
        paths.append(path)
    return paths


def extract(path: Path, out: Path, store: Path | None) -> dict[str, int]:
    settings = ExtractSettings(METHOD, "builtin", "pattern", "builtin")
    return run(settings, path, out, noun_tags=store)


@pytest.fixture(scope="module")
def tagged(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Path, dict]:
    tmp = tmp_path_factory.mktemp("nouns")
    paths = responses(tmp)
    store = tmp / "store.jsonl"
    settings = NounTagSettings(METHOD, "builtin", "pattern", "builtin")
    stats = tag_nouns(paths, settings=settings, out=store)
    return paths, store, stats


def test_extract_reading_the_store_writes_the_same_bytes_without_tagging(
    tagged: tuple[list[Path], Path, dict], tmp_path: Path
) -> None:
    paths, store, stats = tagged
    assert stats["files"] == 2 and stats["windows"] > 0 and stats["left_out"] == 0
    for path in paths:
        alone, with_store = tmp_path / f"{path.stem}.alone", tmp_path / f"{path.stem}.store"
        tagging = extract(path, alone, None)
        reading = extract(path, with_store, store)
        assert alone.read_bytes() == with_store.read_bytes()
        assert tagging["noun_windows_tagged"] > 0
        assert reading["noun_windows_tagged"] == 0
    records = [json.loads(line) for line in alone.read_text().splitlines()]
    lexicon = [o["surface"] for r in records for o in r["objects"] if o["source"] == "lexicon"]
    assert "glass" not in lexicon and "picture" not in lexicon  # the noun check judged them
    assert "window" in lexicon and "can" in lexicon


def test_a_store_of_another_tagger_is_ignored(
    tagged: tuple[list[Path], Path, dict], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths, store, _ = tagged
    lines = store.read_text().splitlines()
    header = json.loads(lines[0])
    header["tagger"]["version"] = "0.0.1"
    other = tmp_path / "other.jsonl"
    other.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    assert read_store(other) == {}
    assert "made by another tagger" in capsys.readouterr().err
    stats = extract(paths[0], tmp_path / "out.jsonl", other)
    assert stats["noun_windows_tagged"] > 0
    extract(paths[0], tmp_path / "alone.jsonl", None)
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "alone.jsonl").read_bytes()


def test_a_window_two_files_tag_differently_is_left_out(tmp_path: Path) -> None:
    one = Tagged((0, 4), (3, 8), ("the", "can"), ("DT", "NN"))
    other = one._replace(tags=("DT", "MD"))
    store: dict = {}
    merge_tagged(store, {"the can": one, "a dog": one})
    merge_tagged(store, {"the can": other, "a dog": one})
    merge_tagged(store, {"the can": one})
    assert write_store(tmp_path / "s.jsonl", store) == 1
    assert set(read_store(tmp_path / "s.jsonl")) == {"a dog"}


def test_a_malformed_store_line_names_the_file_and_line(
    tagged: tuple[list[Path], Path, dict], tmp_path: Path
) -> None:
    _, store, _ = tagged
    lines = store.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], lines[1], '{"text": "a dog"}']) + "\n")
    with pytest.raises(InputError, match=r"bad\.jsonl:3: expected a window with 'text'"):
        read_store(bad)
    headless = tmp_path / "headless.jsonl"
    headless.write_text(lines[1] + "\n")
    with pytest.raises(InputError, match=r"headless\.jsonl:1: expected the header"):
        read_store(headless)


def test_without_a_lexicon_the_store_is_empty(tmp_path: Path) -> None:
    store = tmp_path / "store.jsonl"
    settings = NounTagSettings("rule", "builtin", "pattern", "builtin")
    stats = tag_nouns([], settings=settings, out=store)
    assert stats["windows"] == 0
    assert read_store(store) == {}


def test_extract_reading_a_complete_store_does_not_import_spacy(
    tagged: tuple[list[Path], Path, dict], tmp_path: Path
) -> None:
    """What the store is for: an extract job whose windows are all in it never loads spaCy."""
    paths, store, _ = tagged
    settings = ExtractSettings(METHOD, "builtin", "pattern", "builtin").to_json()
    code = (
        "import sys\n"
        "from halluscope.cli import main\n"
        f"main(['stage', 'extract', '--settings', {settings!r}, '--responses', {str(paths[1])!r},"
        f" '--noun-tags', {str(store)!r}, '--out', {str(tmp_path / 'out.jsonl')!r}])\n"
        "print('spacy' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )  # fmt: skip
    assert proc.stdout.strip() == "False", proc.stderr
    extract(paths[1], tmp_path / "alone.jsonl", None)
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "alone.jsonl").read_bytes()
