"""CAOS: context-aware object similarities (Datta & Sundararaman, Algorithm 1).

For one caption with ground-truth objects ``G`` and the list ``L`` of the *distinct* objects it
mentions, in order of first mention (Algorithm 1, step 4: ``L = L1 ∪ L2`` preserving caption
order; each in-domain or not, each judged present or hallucinated):

* ``T`` = G plus the out-of-domain objects of L judged present (step 7).
* ``X`` starts as T and grows with every object of L, in caption order, *after* that object has
  been scored (steps 6-16), so a hallucination is compared with everything said before it.
* ``K`` = the top-k most frequent objects of the training data (MSCOCO).
* A name mentioned twice is one element of L: it is processed once, at its first mention, and
  enters H (the hallucinated objects) at most once. (Scoring a repeated mention again would give
  it CAOS_X = 1.0 against its own earlier mention.)

For every hallucinated object ``h``: ``sim_T = max_{o in T} cos(E(h), E(o))``, likewise ``sim_X``
and ``sim_K``. Per caption (steps 18-23), CAOS_T/X/K are the means over its hallucinated objects;
CAOS_T/X = CAOS_T / CAOS_X, CAOS_X/K = CAOS_X / CAOS_K, CAOS_avg = (T + X + K) / 3.

Over a set of captions (the paper's tables, see :func:`aggregate`): CAOS_T, CAOS_X and CAOS_K are
the means over captions with at least one hallucination of the per-caption values; CAOS_T/X,
CAOS_X/K and CAOS_avg are computed *from those pooled means* (47 of the 48 ratio and avg cells of
the paper's Tables 1-2 equal the ratio or mean of its printed means; the 48th is at a rounding
boundary). The mean over captions of the per-caption ratios is a secondary view, returned as
``CAOS_TX_mor``, ``CAOS_XK_mor`` and ``CAOS_avg_mor`` and always labelled "mean of ratios".

Edge cases, stated because the paper is silent on them:
* A caption with no hallucinated object has no CAOS value (None); it is excluded from the means
  and counted (``n_no_hallucination``).
* A name without a vector is never treated as a zero vector: a hallucinated object without one is
  skipped (and listed in ``missing``), a reference object without one is left out of its set.
* A set with no usable vector (e.g. an image with no GT object) makes that similarity None.
* CAOS_T/X and CAOS_X/K are defined only when the denominator is positive: cosines (GloVe
  especially) can be negative, and a ratio of two negative means is not a meaningful ratio.
* Objects whose presence is unknown (``present is None``: out-of-domain objects no oracle
  verified) are handled by ``unverified``: ``exclude`` (the headline: neither hallucinations nor
  part of T; they still enter X in caption order), ``present`` (all join T, none is scored) or
  ``absent`` (all are hallucinations). The last two bound the effect of not having an oracle.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

K_MAX_DEFAULT = 10
SCORES = ("CAOS_T", "CAOS_X", "CAOS_K", "CAOS_TX", "CAOS_XK", "CAOS_avg")
#: Secondary view of the pooled ratios: the mean over captions of the per-caption values.
MEAN_OF_RATIOS = ("CAOS_TX_mor", "CAOS_XK_mor", "CAOS_avg_mor")
#: How objects of unknown presence are treated (see the module docstring).
UNVERIFIED_MODES = ("exclude", "present", "absent")


@dataclass(frozen=True)
class CaptionObject:
    """One object mention of a caption, in caption order."""

    name: str
    in_domain: bool
    present: bool | None  # None = unverified (no oracle / no image)
    position: int = -1


@dataclass
class VectorTable:
    """Unit-normalised vectors by name with a precomputed similarity matrix.

    All similarities CAOS needs are cosines between a small set of names (every object, GT and
    frequent name of the run), so the full Gram matrix is computed once and each caption reduces
    to index look-ups: this is what makes paper-scale scoring fast.
    """

    words: list[str]
    vectors: np.ndarray
    index: dict[str, int] = field(init=False)
    sim: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        vectors = np.asarray(self.vectors, dtype=np.float64)
        if vectors.ndim != 2 or vectors.shape[0] != len(self.words):
            raise ValueError(
                f"vector table: expected {len(self.words)} rows, got array of shape {vectors.shape}"
            )
        if not np.all(np.isfinite(vectors)):
            bad = [self.words[i] for i in np.where(~np.isfinite(vectors).all(axis=1))[0][:5]]
            raise ValueError(f"vector table: non-finite values (NaN/inf) in the vectors of {bad}")
        norms = np.linalg.norm(vectors, axis=1)
        if np.any(norms == 0):
            bad = [self.words[i] for i in np.where(norms == 0)[0][:5]]
            raise ValueError(f"vector table: zero vectors for {bad}; a zero vector has no cosine")
        unit = vectors / norms[:, None]
        self.index = {w: i for i, w in enumerate(self.words)}
        self.sim = unit @ unit.T

    def __contains__(self, name: str) -> bool:
        return name in self.index


@dataclass
class CaptionResult:
    """Per-caption CAOS values plus per-object rows for the hallucinated objects."""

    scores: dict[str, float | None]
    objects: list[dict]
    n_hallucinated: int
    missing: list[str]


def _mean(values: Sequence[float]) -> float | None:
    return float(sum(values) / len(values)) if values else None


def _ratio(a: float | None, b: float | None) -> float | None:
    """a / b, defined only for a positive denominator (cosines can be negative: a ratio of two
    negative means would read as a large positive "T/X" and distort the mean of ratios)."""
    if a is None or b is None or b <= 0:
        return None
    return a / b


class CAOSScorer:
    """Scores captions with Algorithm 1 against one vector table and one frequency list."""

    def __init__(
        self, table: VectorTable, frequent: Sequence[str], k: int, k_max: int = K_MAX_DEFAULT
    ) -> None:
        if not 1 <= k <= k_max:
            raise ValueError(f"caos.k must be between 1 and k_max={k_max}, got {k}")
        if len(frequent) < k_max:
            raise ValueError(f"need at least k_max={k_max} frequent objects, got {len(frequent)}")
        self.table = table
        self.k = k
        self.k_max = k_max
        self.frequent = list(frequent[:k_max])
        # cumulative max over the top-k frequent objects, for every word and every k
        k_idx = [table.index.get(name) for name in self.frequent]
        missing = [n for n, i in zip(self.frequent, k_idx, strict=True) if i is None]
        if missing:
            raise ValueError(f"frequent objects without a vector: {missing}")
        self.k_cummax = np.maximum.accumulate(table.sim[:, k_idx], axis=1)  # (V, k_max)

    def score_caption(
        self,
        gt: Iterable[str],
        objects: Sequence[CaptionObject],
        unverified: str = "exclude",
    ) -> CaptionResult:
        """Algorithm 1 for one caption (``objects`` in caption order; repeats are dropped)."""
        objects = resolve_unverified(distinct_objects(objects), unverified)
        index = self.table.index
        sim = self.table.sim
        missing: list[str] = []
        base: list[int] = []
        for name in dict.fromkeys(gt):
            i = index.get(name)
            if i is None:
                missing.append(name)
            else:
                base.append(i)
        for obj in objects:  # step 7: present out-of-domain objects join T (and X)
            if not obj.in_domain and obj.present:
                i = index.get(obj.name)
                if i is None:
                    missing.append(obj.name)
                elif i not in base:
                    base.append(i)
        t_idx = np.asarray(base, dtype=np.intp)
        x_extra: list[int] = []
        rows: list[dict] = []
        for obj in objects:
            i = index.get(obj.name)
            if obj.present is False:
                if i is None:
                    missing.append(obj.name)
                else:
                    row_sim = sim[i]
                    sim_t = float(row_sim[t_idx].max()) if t_idx.size else None
                    x_vals = [float(row_sim[t_idx].max())] if t_idx.size else []
                    if x_extra:
                        x_vals.append(float(row_sim[x_extra].max()))
                    sim_x = max(x_vals) if x_vals else None
                    row = {
                        "name": obj.name,
                        "position": obj.position,
                        "in_domain": obj.in_domain,
                        "sim_T": sim_t,
                        "sim_X": sim_x,
                    }
                    for kk in range(self.k_max):
                        row[f"sim_K{kk + 1}"] = float(self.k_cummax[i, kk])
                    rows.append(row)
            if i is not None:  # step 16: every object (scored or not) joins X afterwards
                x_extra.append(i)
        scores = caption_scores(rows, self.k)
        return CaptionResult(scores, rows, len(rows), sorted(set(missing)))


def distinct_objects(objects: Sequence[CaptionObject]) -> list[CaptionObject]:
    """L of Algorithm 1: each distinct name once, at its first mention, in caption order."""
    seen: set[str] = set()
    out = []
    for obj in objects:
        if obj.name not in seen:
            seen.add(obj.name)
            out.append(obj)
    return out


def resolve_unverified(objects: Sequence[CaptionObject], mode: str) -> list[CaptionObject]:
    """Objects with ``present is None`` kept unknown (``exclude``) or set present / absent."""
    if mode not in UNVERIFIED_MODES:
        raise ValueError(f"unverified: expected one of {UNVERIFIED_MODES}, got {mode!r}")
    if mode == "exclude":
        return list(objects)
    value = mode == "present"
    return [
        CaptionObject(o.name, o.in_domain, value, o.position) if o.present is None else o
        for o in objects
    ]


def caption_scores(rows: Sequence[Mapping], k: int) -> dict[str, float | None]:
    """Per-caption CAOS from the rows of its hallucinated objects (None where undefined)."""
    t = _mean([r["sim_T"] for r in rows if r["sim_T"] is not None])
    x = _mean([r["sim_X"] for r in rows if r["sim_X"] is not None])
    kk = _mean([r[f"sim_K{k}"] for r in rows])
    avg = (t + x + kk) / 3 if None not in (t, x, kk) else None
    return {
        "CAOS_T": t,
        "CAOS_X": x,
        "CAOS_K": kk,
        "CAOS_TX": _ratio(t, x),
        "CAOS_XK": _ratio(x, kk),
        "CAOS_avg": avg,
    }


def aggregate(captions: Iterable[Mapping[str, float | None]]) -> dict[str, float | int | None]:
    """Overall CAOS over captions, as in the paper's tables.

    CAOS_T, CAOS_X, CAOS_K: mean over captions with at least one hallucination of the per-caption
    values. CAOS_TX, CAOS_XK, CAOS_avg: computed from those pooled means (ratio of means).
    ``*_mor``: the mean over captions of the per-caption ratios and averages (secondary view).
    Captions whose values are all None (no hallucinated object) are excluded and counted.
    """
    values: dict[str, list[float]] = {s: [] for s in SCORES}
    n_total = 0
    n_none = 0
    for cap in captions:
        n_total += 1
        if all(cap.get(s) is None for s in SCORES):
            n_none += 1
            continue
        for s in SCORES:
            v = cap.get(s)
            if v is not None and not math.isnan(v):
                values[s].append(float(v))
    t, x, k = (_mean(values[s]) for s in ("CAOS_T", "CAOS_X", "CAOS_K"))
    out: dict[str, float | int | None] = {
        "CAOS_T": t,
        "CAOS_X": x,
        "CAOS_K": k,
        "CAOS_TX": _ratio(t, x),
        "CAOS_XK": _ratio(x, k),
        "CAOS_avg": (t + x + k) / 3 if None not in (t, x, k) else None,
    }
    for s in ("CAOS_TX", "CAOS_XK", "CAOS_avg"):
        out[f"{s}_mor"] = _mean(values[s])
    out["n_captions"] = n_total
    out["n_no_hallucination"] = n_none
    return out


def caption_then_mean(rows: Iterable[Mapping], column: str, key: Sequence[str]) -> float | None:
    """Mean over captions (grouped by ``key``) of the mean over each caption's objects.

    This is how CAOS averages objects (per caption first), used for the k-sweep and subsets.
    """
    groups: dict[tuple, list[float]] = {}
    for r in rows:
        v = r[column]
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        groups.setdefault(tuple(r[c] for c in key), []).append(float(v))
    return _mean([sum(v) / len(v) for v in groups.values()])
