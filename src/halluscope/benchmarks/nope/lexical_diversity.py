"""Length-agnostic lexical diversity: MATTR, MTLD and HD-D (NOPE §4.1, Figure 6).

NOPE checks that its generated questions are as lexically diverse as human-written VQA questions
with three measures, averaged, computed by LexicalRichness v0.5.0. They are implemented here from
their published definitions (no extra dependency), with LexicalRichness's conventions where the
definitions leave a choice open:

* **MATTR** (Covington & McFall 2010): the mean type-token ratio of every window of ``window``
  consecutive tokens (windows 1..W, 2..W+1, ... N-W+1..N). Undefined (``ValueError``) when the
  text has fewer tokens than the window. Default window 50 (LexicalRichness defaults to 100).
* **MTLD** (McCarthy 2005; McCarthy & Jarvis 2010): walk the tokens keeping the TTR of the current
  segment; when it falls to the threshold (TTR <= 0.72) a factor is complete and the segment
  restarts. The leftover segment adds the partial factor (1 - TTR) / (1 - 0.72). MTLD of one
  direction = tokens / factors; the reported MTLD is the mean of the forward and the backward
  (reversed text) values. When no factor and no partial factor accrue (every token distinct) the
  factor count is taken as 1, i.e. MTLD = N, as LexicalRichness does.
* **HD-D** (McCarthy & Jarvis 2007, 2010): for each type with frequency f in a text of N tokens,
  the probability of drawing it at least once in a random sample of n = 42 tokens without
  replacement, 1 - hypergeom.pmf(0; N, f, n); HD-D = sum over types of that probability / n (the
  TTR-like 0-1 form; multiply by n for the expected number of types in a sample). Undefined when
  N < n.

Tokens: :func:`tokenize` reproduces LexicalRichness's default preprocessing (lower case, digits and
dashes removed, every ASCII punctuation mark replaced by a space, whitespace split).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "DEFAULT_HDD_SAMPLE",
    "DEFAULT_MATTR_WINDOW",
    "DEFAULT_MTLD_THRESHOLD",
    "hdd",
    "lexical_diversity",
    "mattr",
    "mtld",
    "tokenize",
    "ttr",
]

DEFAULT_MATTR_WINDOW = 50
DEFAULT_MTLD_THRESHOLD = 0.72
DEFAULT_HDD_SAMPLE = 42

_DIGITS = re.compile(r"[0-9]+")
_PUNCT_TO_SPACE = str.maketrans({p: " " for p in string.punctuation})


def tokenize(text: str) -> list[str]:
    """LexicalRichness's default tokens: lower case, no digits, no dashes, punctuation -> space."""
    text = _DIGITS.sub("", text.lower())
    for dash in ("\u2013", "\u2014", "-"):
        text = text.replace(dash, "")
    return text.translate(_PUNCT_TO_SPACE).split()


def ttr(tokens: Sequence[str]) -> float:
    """Type-token ratio: distinct tokens / tokens."""
    if not tokens:
        raise ValueError("TTR of an empty text is undefined")
    return len(set(tokens)) / len(tokens)


def mattr(tokens: Sequence[str], window: int = DEFAULT_MATTR_WINDOW) -> float:
    """Moving-average TTR over every window of ``window`` tokens (Covington & McFall 2010).

    Computed in O(N) with a running frequency table, so long corpora are cheap.
    """
    if not isinstance(window, int) or window < 1:
        raise ValueError(f"MATTR window must be a positive integer, got {window!r}")
    n = len(tokens)
    if n < window:
        raise ValueError(f"MATTR needs at least window={window} tokens, the text has {n}")
    counts: Counter[str] = Counter(tokens[:window])
    total = len(counts)
    for start in range(1, n - window + 1):
        leaving, entering = tokens[start - 1], tokens[start + window - 1]
        counts[leaving] -= 1
        if counts[leaving] == 0:
            del counts[leaving]
        counts[entering] += 1
        total += len(counts)
    return total / ((n - window + 1) * window)


def _mtld_one_way(tokens: Iterable[str], threshold: float) -> float:
    """Tokens / factors for one reading direction (see the module docstring)."""
    n = 0
    factors = 0.0
    types: set[str] = set()
    segment = 0
    value = 1.0
    for token in tokens:
        n += 1
        segment += 1
        types.add(token)
        value = len(types) / segment
        if value <= threshold:
            factors += 1
            types = set()
            segment = 0
    if segment > 0:
        factors += (1 - value) / (1 - threshold)
    if factors == 0:
        factors = 1.0
    return n / factors


def mtld(tokens: Sequence[str], threshold: float = DEFAULT_MTLD_THRESHOLD) -> float:
    """Bidirectional MTLD (McCarthy & Jarvis 2010): mean of the forward and backward values."""
    if not tokens:
        raise ValueError("MTLD of an empty text is undefined")
    if not 0 < threshold < 1:
        raise ValueError(f"MTLD threshold must be in (0, 1), got {threshold}")
    forward = _mtld_one_way(tokens, threshold)
    backward = _mtld_one_way(reversed(tokens), threshold)
    return (forward + backward) / 2


def hdd(tokens: Sequence[str], sample_size: int = DEFAULT_HDD_SAMPLE) -> float:
    """HD-D: sum over types of P(type in a random ``sample_size``-token sample) / sample_size."""
    from scipy.stats import hypergeom

    if not isinstance(sample_size, int) or sample_size < 1:
        raise ValueError(f"HD-D sample size must be a positive integer, got {sample_size!r}")
    n = len(tokens)
    if n < sample_size:
        raise ValueError(f"HD-D needs at least sample_size={sample_size} tokens, the text has {n}")
    total = 0.0
    for frequency in Counter(tokens).values():
        total += (1.0 - float(hypergeom.pmf(0, n, frequency, sample_size))) / sample_size
    return total


def lexical_diversity(
    tokens: Sequence[str],
    window: int = DEFAULT_MATTR_WINDOW,
    threshold: float = DEFAULT_MTLD_THRESHOLD,
    sample_size: int = DEFAULT_HDD_SAMPLE,
) -> dict[str, Any]:
    """All three measures of one token sequence; an undefined measure is ``None`` with a reason.

    ``average`` is the unweighted mean of the three, as NOPE §4.1 reports it (note the scales
    differ: MATTR and HD-D lie in [0, 1], MTLD is a length in tokens, so MTLD dominates it).
    """
    out: dict[str, Any] = {
        "tokens": len(tokens),
        "types": len(set(tokens)),
        "ttr": ttr(tokens) if tokens else None,
        "params": {"mattr_window": window, "mtld_threshold": threshold, "hdd_sample": sample_size},
        "undefined": {},
    }
    for name, func, arg in (
        ("mattr", mattr, window),
        ("mtld", mtld, threshold),
        ("hdd", hdd, sample_size),
    ):
        try:
            out[name] = func(tokens, arg)
        except ValueError as err:
            out[name] = None
            out["undefined"][name] = str(err)
    values = [out[name] for name in ("mattr", "mtld", "hdd")]
    out["average"] = sum(values) / 3 if all(v is not None for v in values) else None
    return out
