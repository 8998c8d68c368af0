"""Tri-HE's intervals, the one method of the judge stage and ``halluscope trihe``.

The resampled unit is the image: its questions (and their triplets) move together, and Hallu_Q
and Hallu_I are both ratios of per-image sums, so the cluster bootstrap gives every rate's
interval from one set of resamples (docs/statistics.md).
"""

from __future__ import annotations

from typing import Any


def trihe_intervals(
    questions: list[Any], rates: dict[str, Any], unattributed: str, settings: Any
) -> dict[str, Any]:
    """The intervals of the six rates (percent), the image resampled with all its questions.

    Per question the shares h/n of its triplets judged hallucinated (object, relation), counted
    as :func:`~halluscope.benchmarks.trihe.metric.hallucination_rates` counts them; per image
    their means. Hallu_Q = sum of the question shares / scored questions and Hallu_I = sum of
    the image means / scored images are both ratios of per-image sums: the cluster bootstrap.
    """
    from halluscope.hand_check_intervals import bootstrapped, share

    per_image: dict[str, list[tuple[float, float, float]]] = {}
    for q in questions:
        shares = per_image.setdefault(q.image_id, [])
        n = len(q.judgments)
        if n == 0:
            continue
        errors = q.errors if q.errors is not None else (None,) * n
        no = [e for j, e in zip(q.judgments, errors, strict=True) if j == "no"]
        obj = sum(e == "object" for e in no)
        rel = sum(e == "relation" or (e not in ("object", "relation") and unattributed ==
                  "relation") for e in no)  # fmt: skip
        shares.append((len(no) / n, obj / n, rel / n))
    images = list(per_image)
    columns: dict[str, list[float]] = {"scored": [len(per_image[i]) for i in images]}
    columns["scored_image"] = [int(bool(per_image[i])) for i in images]
    for k, name in enumerate(("hallu", "object", "relation")):
        sums = [sum(s[k] for s in per_image[i]) for i in images]
        columns[f"{name}_q"] = sums
        columns[f"{name}_i"] = [t / len(per_image[i]) if per_image[i] else 0.0
                                for t, i in zip(sums, images, strict=True)]  # fmt: skip
    nan = float("nan")

    def percent(key: str) -> Any:
        rate = share(key, "scored" if key.endswith("_q") else "scored_image", nan)
        return lambda t: 100 * rate(t)

    statistics = {
        key: percent(key)
        for key in ("hallu_q", "hallu_i", "object_q", "object_i", "relation_q", "relation_i")
        if rates[key] is not None
    }
    return bootstrapped(images, columns, statistics, settings)
