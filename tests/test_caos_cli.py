"""``halluscope caos`` (the hand-check command): name-to-vector rule, strict input, help text.

Every expected number is worked out by hand in the comments from tiny 2-d vectors.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from halluscope.cli import main


def write_vectors(path: Path, vectors: dict[str, tuple[float, ...]]) -> Path:
    """A word2vec text file: ``count dim`` header, then one ``word x1 ... xd`` line per word."""
    dim = len(next(iter(vectors.values())))
    path.write_text(
        f"{len(vectors)} {dim}\n"
        + "".join(f"{w} {' '.join(map(str, v))}\n" for w, v in vectors.items()),
        encoding="utf-8",
    )
    return path


def write_lines(path: Path, *lines: dict[str, Any] | str) -> Path:
    """JSONL; a str is written as is (a blank or hand-broken line)."""
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return path


def obj(name: Any, in_domain: Any = True, present: Any = False) -> dict[str, Any]:
    return {"name": name, "in_domain": in_domain, "present": present}


def caos(
    tmp_path: Path, objects: Path, vectors: Path, frequent: str, k: int, *extra: str
) -> list[str]:
    return [
        "caos", "--objects", str(objects), "--vectors", str(vectors), "--frequent", frequent,
        "--k", str(k), "--out", str(tmp_path / "out.json"), *extra,
    ]  # fmt: skip


def run_ok(argv: list[str], tmp_path: Path) -> dict[str, Any]:
    assert main(argv) == 0
    return json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))


def run_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line of a failed run (exit status 2, no traceback)."""
    capsys.readouterr()
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("halluscope caos: error: "), lines
    return lines[0]


@pytest.fixture
def vectors(tmp_path: Path) -> Path:
    return write_vectors(
        tmp_path / "v.txt",
        {"cat": (1, 0), "dog": (3, 4), "car": (0, 2), "person": (1, 1)},
    )


# ------------------------------------------------------------------------------------------------
# numbers


def test_hand_computed_scores(tmp_path: Path, vectors: Path) -> None:
    """GT {cat}; the caption hallucinates dog then car; K = (car, person), k = 2.

    |cat| = 1, |dog| = 5, |car| = 2, |person| = sqrt 2.
    dog: sim_T = cos(dog, cat) = 3/5 = 0.6; X is still T, so sim_X = 0.6;
         sim_K = max(cos(dog, car), cos(dog, person)) = max(8/10, 7/(5 sqrt 2)) = 7/(5 sqrt 2).
    car: sim_T = cos(car, cat) = 0; X = {cat, dog}: sim_X = max(0, 8/10) = 0.8;
         sim_K = max(cos(car, car), cos(car, person)) = max(1, 2/(2 sqrt 2)) = 1.
    CAOS_T = (0.6 + 0) / 2 = 0.3, CAOS_X = (0.6 + 0.8) / 2 = 0.7,
    CAOS_K = (7/(5 sqrt 2) + 1) / 2 = 0.994975, CAOS_T/X = 3/7, CAOS_X/K = 0.7 / CAOS_K.
    """
    objects = write_lines(
        tmp_path / "o.jsonl", {"id": "c1", "gt": ["cat"], "objects": [obj("dog"), obj("car")]}
    )
    result = run_ok(caos(tmp_path, objects, vectors, "car,person", 2), tmp_path)
    [caption] = result["captions"]
    k = (7 / (5 * math.sqrt(2)) + 1) / 2
    assert caption["id"] == "c1" and caption["missing"] == []
    assert caption["CAOS_T"] == pytest.approx(0.3)
    assert caption["CAOS_X"] == pytest.approx(0.7)
    assert caption["CAOS_K"] == pytest.approx(k)
    assert caption["CAOS_TX"] == pytest.approx(3 / 7)
    assert caption["CAOS_XK"] == pytest.approx(0.7 / k)
    assert caption["CAOS_avg"] == pytest.approx((0.3 + 0.7 + k) / 3)
    # one caption: its means are the overall means
    for key in ("CAOS_T", "CAOS_X", "CAOS_K"):
        assert result["overall"][key] == pytest.approx(caption[key])
    assert result["k"] == 2 and result["frequent"] == ["car", "person"]


def test_multiword_name_is_mean_of_its_words(tmp_path: Path) -> None:
    """ "dining table" has no phrase vector: mean of dining (1, 0) and table (0, 1) = (0.5, 0.5),
    so cos with person (1, 1) = 1 and cos with cat (1, 0) = 0.5 / (sqrt 0.5) = 1/sqrt 2."""
    vectors = write_vectors(
        tmp_path / "v.txt", {"dining": (1, 0), "table": (0, 1), "person": (1, 1), "cat": (1, 0)}
    )
    objects = write_lines(
        tmp_path / "o.jsonl",
        {"id": 1, "gt": ["person"], "objects": [obj("dining table")]},
        {"id": 2, "gt": ["cat"], "objects": [obj("dining table"), obj("dining chair")]},
    )
    result = run_ok(caos(tmp_path, objects, vectors, "person", 1), tmp_path)
    first, second = result["captions"]
    assert first["missing"] == [] and first["CAOS_T"] == pytest.approx(1.0)
    assert second["CAOS_T"] == pytest.approx(1 / math.sqrt(2))
    assert second["missing"] == ["dining chair"]  # "chair" has no vector: no mean, no zero


def test_phrase_vector_wins_over_the_mean(tmp_path: Path) -> None:
    """With dining_table = (0, 1) in the file, "dining table" is (0, 1): cos with cat (1, 0) = 0."""
    vectors = write_vectors(
        tmp_path / "v.txt",
        {"dining": (1, 0), "table": (1, 0), "dining_table": (0, 1), "cat": (1, 0)},
    )
    objects = write_lines(
        tmp_path / "o.jsonl", {"id": "c", "gt": ["cat"], "objects": [obj("dining table")]}
    )
    result = run_ok(caos(tmp_path, objects, vectors, "cat", 1), tmp_path)
    assert result["captions"][0]["CAOS_T"] == pytest.approx(0.0)


# ------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        pytest.param(
            {"id": "b", "gt": ["cat"], "objects": [obj("dog", present="false")]},
            'objects[0].present must be true, false or null, got the string "false"',
            id="present-string",
        ),
        pytest.param(
            {"id": "b", "gt": "cat", "objects": []},
            "'gt' must be a list of object names, got the string \"cat\"",
            id="gt-string",
        ),
        pytest.param(
            {"id": "b", "gt": ["cat"], "objects": [obj(3)]},
            "objects[0].name must be a non-empty string, got the number 3",
            id="name-number",
        ),
        pytest.param(
            {"id": "b", "gt": ["cat"], "objects": [obj("dog"), obj("car", in_domain="yes")]},
            'objects[1].in_domain must be true or false, got the string "yes"',
            id="in-domain-string",
        ),
        pytest.param(
            {"id": "b", "gt": ["cat"], "objects": [obj("dog", in_domain=1)]},
            "objects[0].in_domain must be true or false, got the number 1",
            id="in-domain-number",
        ),
    ],
)
def test_type_errors_name_file_and_line(
    tmp_path: Path,
    vectors: Path,
    capsys: pytest.CaptureFixture[str],
    record: dict[str, Any],
    expected: str,
) -> None:
    """The bad record is on line 3 (line 2 is blank and still counts)."""
    objects = write_lines(
        tmp_path / "o.jsonl", {"id": "a", "gt": ["cat"], "objects": []}, "", record
    )
    line = run_error(caos(tmp_path, objects, vectors, "car,person", 2), capsys)
    assert f"{objects}:3: {expected}" in line
    assert not (tmp_path / "out.json").exists()


def test_duplicate_ids_name_both_lines(
    tmp_path: Path, vectors: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    objects = write_lines(
        tmp_path / "o.jsonl",
        {"id": "a", "gt": ["cat"], "objects": []},
        {"id": "b", "gt": ["cat"], "objects": []},
        {"id": "a", "gt": ["dog"], "objects": []},
    )
    line = run_error(caos(tmp_path, objects, vectors, "car,person", 2), capsys)
    assert f'{objects}:3: duplicate caption id "a" (first on line 1)' in line


def test_empty_frequent_has_its_own_error(
    tmp_path: Path, vectors: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    objects = write_lines(tmp_path / "o.jsonl", {"id": "a", "gt": ["cat"], "objects": []})
    line = run_error(caos(tmp_path, objects, vectors, "", 2), capsys)
    assert line == (
        "halluscope caos: error: --frequent: expected a comma-separated list of at least k "
        "names, got an empty list"
    )


def test_non_finite_result_is_an_error_naming_the_caption(
    tmp_path: Path, vectors: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    """NaN must never be written: a non-finite score stops the run and names the caption."""
    from halluscope.benchmarks.caos import metric

    def nan_scores(self, gt, objects):
        return SimpleNamespace(scores={"CAOS_T": math.nan}, missing=[])

    monkeypatch.setattr(metric.CAOSScorer, "score_caption", nan_scores)
    objects = write_lines(tmp_path / "o.jsonl", {"id": "c7", "gt": ["cat"], "objects": []})
    line = run_error(caos(tmp_path, objects, vectors, "car,person", 2), capsys)
    assert f"{objects}:1: caption 'c7': CAOS_T is nan" in line
    assert not (tmp_path / "out.json").exists()


# ------------------------------------------------------------------------------------------------
# help


def test_help_documents_formats_and_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["caos", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    formats = text.split("input formats (one line each):\n", 1)[1].splitlines()

    def format_line(flag: str) -> str:
        """The one format line of ``flag`` (after the header, not the option's own line)."""
        [line] = [x for x in formats if x.startswith(f"  {flag} ")]
        return line

    assert '"gt"' in format_line("--objects") and '"present"' in format_line("--objects")
    assert "null" in format_line("--objects") and "JSONL" in format_line("--objects")
    assert "word2vec" in format_line("--vectors") and "header" in format_line("--vectors")
    assert "comma-separated" in format_line("--frequent")
    assert '"captions"' in format_line("--out")
    assert "example:" in text and "halluscope caos --objects" in text
