"""AMBER generative metric (halluscope.benchmarks.amber.metric) against hand-computed numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pipeline_helpers import ROOT

from halluscope.benchmarks.amber.metric import (
    AmberVocabulary,
    aggregate,
    glove_similarity,
    load_annotations,
    load_vocabulary,
    score_response,
    score_responses,
    spacy_nouns,
)
from halluscope.io import InputError

AMBER_DATA = ROOT.parent / "shared" / "data" / "amber"

RELATION = {
    "person": ["man", "woman"],
    "grass": ["ground"],
    "ground": [],
    "dog": ["puppy"],
    "car": [],
    "cat": [],
    "light": [],  # also a global safe word
    "ship": [],
}
ANNOTATIONS = [
    {
        "id": 1,
        "type": "generative",
        "truth": ["person", "grass", "ground"],
        "hallu": ["dog", "car"],
    },
    {"id": 2, "type": "generative", "truth": ["cat"], "hallu": ["person"]},
    {"id": 3, "type": "discriminative-hallucination", "truth": "yes"},
    {"id": 4, "type": "generative", "truth": ["ship", "ship"], "hallu": ["car"]},
]


def split_nouns(text: str) -> list[str]:
    """Test noun extractor: every whitespace-separated word is a (lemmatised) noun."""
    return text.split()


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    relation = tmp_path / "relation.json"
    relation.write_text(json.dumps(RELATION), encoding="utf-8")
    safe = tmp_path / "safe_words.txt"
    safe.write_text("light\r\nrange\n", encoding="utf-8")  # CRLF read as in text mode
    annotations = tmp_path / "annotations.json"
    annotations.write_text(json.dumps(ANNOTATIONS), encoding="utf-8")
    return relation, safe, annotations


@pytest.fixture()
def vocab(files) -> AmberVocabulary:
    return load_vocabulary(files[0], files[1])


def test_loaders(files, vocab) -> None:
    assert vocab.safe_words == frozenset({"light", "range"})
    assert "puppy" in vocab.hallucination_words and "table" not in vocab.hallucination_words
    annotations = load_annotations(files[2])
    assert sorted(annotations) == [1, 2, 3, 4]
    assert annotations[3]["truth"] == "yes"


def test_hand_computed_scores(files, vocab) -> None:
    annotations = load_annotations(files[2])
    # Response 1: "man" (associated with truth "person") covers person; "light" is a global safe
    # word: skipped but counted in CHAIR's denominator; "dog" (a hallu word) is hallucinated and
    # covers hallu "dog" (Cog); "table" is outside the vocabulary: dropped; the second "dog" is
    # a second hallucinated mention; "grass" covers grass.
    one = score_response(split_nouns("man light dog table dog grass"), annotations[1], vocab)
    assert one.n_nouns == 5  # man light dog dog grass
    assert one.hallucinated == ["dog", "dog"]
    assert (one.covered_truth, one.n_truth) == (2, 3)  # person, grass; not ground
    assert (one.covered_hallu, one.n_hallu) == (1, 2)  # dog; not car
    responses = [
        {"id": 1, "response": "man light dog table dog grass"},
        {"id": 2, "response": "cat"},  # 1 noun, no hallucination, cat covered, Cog 0/1
        {"id": 3, "response": "dog dog dog"},  # discriminative: ignored
    ]
    result = score_responses(responses, annotations, vocab, split_nouns)
    # CHAIR 2/(0.001+5+1) = 33.33; Cover 3/(0.001+3+1) = 74.98; Cog 1/(0.001+2+1) = 33.32;
    # Hal 100 - 1/(0.001+2)*100 = 50.02.
    assert result == {
        "CHAIR": 33.3,
        "Cover": 75.0,
        "Hal": 50.0,
        "Cog": 33.3,
        "n_responses": 2,
        "n_nouns": 6,
    }


def test_first_match_wins_so_some_truth_words_are_never_covered(files, vocab) -> None:
    annotations = load_annotations(files[2])
    # "ground" is associated with truth "grass" and that entry comes first: it covers grass.
    score = score_response(["ground"], annotations[1], vocab)
    assert (score.covered_truth, score.hallucinated) == (1, [])
    score = score_response(["ground", "grass"], annotations[1], vocab)
    assert score.covered_truth == 1  # still only grass: truth "ground" cannot be covered
    # A duplicated truth word: the first copy is always the match.
    score = score_response(["ship", "ship"], annotations[4], vocab)
    assert (score.covered_truth, score.n_truth) == (1, 2)


def test_similarity_quirks(files, vocab) -> None:
    relation = {"dog": ["puppy"], "cat": [], "tiger": ["lion"], "lion": [], "wolf": []}
    small = AmberVocabulary(relation, frozenset())
    annotation = {
        "id": 9,
        "type": "generative",
        "truth": ["dog"],
        "hallu": ["cat", "tiger", "wolf"],
    }
    pairs = {frozenset({"cat", "lion"}), frozenset({"wolf", "dog"})}

    def similar(a: str, b: str) -> bool:
        return a == b or frozenset({a, b}) in pairs

    without = score_response(["cat", "wolf"], annotation, small, None)
    assert without.hallucinated == ["cat", "wolf"]
    assert (without.covered_truth, without.covered_hallu) == (0, 2)
    with_sim = score_response(["cat", "wolf"], annotation, small, similar)
    # "cat": exact hallu match covers cat; the similarity scan then also covers tiger (via its
    # associated "lion", listed before the hallu words); no safe word is similar: hallucinated.
    # "wolf": covers wolf, and being similar to truth "dog" it is rescued (not hallucinated) and
    # covers dog.
    assert with_sim.hallucinated == ["cat"]
    assert (with_sim.covered_truth, with_sim.covered_hallu) == (1, 3)


def test_denominators_start_at_a_thousandth() -> None:
    assert aggregate([]) == {
        "CHAIR": 0.0,
        "Cover": 0.0,
        "Hal": 100.0,  # 100 - 0/0.001*100
        "Cog": 0.0,
        "n_responses": 0,
        "n_nouns": 0,
    }
    small = AmberVocabulary({"cat": [], "dog": []}, frozenset())
    annotation = {"id": 1, "type": "generative", "truth": ["cat"], "hallu": ["dog"]}
    # One perfect response: Cover 1/1.001 = 99.9, Hal 100 - 1/1.001*100 = 0.1.
    result = aggregate([score_response(["cat"], annotation, small)])
    assert (result["CHAIR"], result["Cover"], result["Hal"], result["Cog"]) == (0.0, 99.9, 0.1, 0.0)


def test_errors_name_the_problem(tmp_path: Path, files, vocab) -> None:
    annotations = load_annotations(files[2])
    with pytest.raises(InputError, match="id 99 is not in the AMBER annotations"):
        score_responses([{"id": 99, "response": "cat"}], annotations, vocab, split_nouns)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([ANNOTATIONS[0], {"id": 2, "type": "generative", "truth": "cat"}]))
    with pytest.raises(InputError, match=r"bad\.json: record 1: expected 'truth' to be a list"):
        load_annotations(bad)
    bad.write_text(json.dumps([{"id": 2, "type": "generative", "truth": [], "hallu": []}]))
    with pytest.raises(InputError, match=r"bad\.json: record 0: expected id 1"):
        load_annotations(bad)
    unknown = {"id": 7, "type": "generative", "truth": ["zebra"], "hallu": []}
    with pytest.raises(InputError, match="annotation id 7: truth word 'zebra' not in relation"):
        score_response([], unknown, vocab)


def test_spacy_nouns_keeps_capitalised_words_unchanged() -> None:
    # Tagged Dogs/NNP, cats/NNS, grass/NN; "Dogs" is not lower-case so it is not lemmatised
    # (like WordNetLemmatizer), and the lower-case vocabulary will never match it.
    assert spacy_nouns("Dogs run past two cats on the grass.") == ["Dogs", "cat", "grass"]


@pytest.fixture(scope="module")
def glove():
    return glove_similarity(0.8)


def test_glove_similarity(glove) -> None:
    assert glove("dog", "dog")
    assert glove("man", "woman")  # cosine 0.886
    assert not glove("tree", "forest")  # cosine 0.678
    assert not glove("qzxvbnm", "qzxvbnm")  # no vector: never similar
    small = AmberVocabulary({"man": [], "woman": []}, frozenset())
    annotation = {"id": 1, "type": "generative", "truth": ["man"], "hallu": ["woman"]}
    # The reference's rescue with real vectors: a hallucinated "woman" covers "man".
    score = score_response(["woman"], annotation, small, glove)
    assert (score.hallucinated, score.covered_truth, score.covered_hallu) == ([], 1, 1)


@pytest.mark.skipif(not AMBER_DATA.is_dir(), reason=f"AMBER data not at {AMBER_DATA}")
def test_real_annotations_first_fifty() -> None:
    entries = json.loads((AMBER_DATA / "annotations.json").read_text(encoding="utf-8"))[:50]
    relation = json.loads((AMBER_DATA / "relation.json").read_text(encoding="utf-8"))
    safe = set((AMBER_DATA / "safe_words.txt").read_text(encoding="utf-8").split("\n"))
    responses = [
        {"id": e["id"], "response": f"There is a {e['truth'][0]} and a {e['hallu'][0]}."}
        for e in entries
    ]
    vocabulary = {w for k, v in relation.items() for w in [k, *v]}

    def truth_index(word: str, truth: list[str]) -> int | None:
        """The truth word a mention covers: the first whose associated words hold it, else the
        word itself."""
        for i, w in enumerate(truth):
            if word in relation[w]:
                return i
        return truth.index(word) if word in truth else None

    chair, chair_num, cover, cover_num, cog, cog_num = 0, 0.001, 0, 0.001, 0, 0.001
    for e in entries:
        t0, h0 = e["truth"][0], e["hallu"][0]
        assert spacy_nouns(f"There is a {t0} and a {h0}.") == [t0, h0]
        assert t0 in vocabulary and h0 in vocabulary
        covered = {truth_index(w, e["truth"]) for w in (t0, h0) if w not in safe}
        covered.discard(None)
        hallucinated = h0 not in safe and truth_index(h0, e["truth"]) is None
        chair += hallucinated
        chair_num += 2
        cover += len(covered)
        cover_num += len(e["truth"])
        cog += hallucinated  # a hallucinated hallu word covers itself
        cog_num += len(e["hallu"])

    annotations = load_annotations(AMBER_DATA / "annotations.json")
    vocab = load_vocabulary(AMBER_DATA / "relation.json", AMBER_DATA / "safe_words.txt")
    result = score_responses(responses, annotations, vocab, spacy_nouns)
    assert result["n_responses"] == 50 and result["n_nouns"] == 100
    assert result["CHAIR"] == round(chair / chair_num * 100, 1)
    assert result["Cover"] == round(cover / cover_num * 100, 1)
    assert result["Cog"] == round(cog / cog_num * 100, 1)
    assert 0 < chair < 50  # some first hallu words are truth-associated or safe: not flagged
