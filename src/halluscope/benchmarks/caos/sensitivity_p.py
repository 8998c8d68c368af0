"""A labelled sensitivity view, not a result: Table 1 with the unverified out-of-domain objects
hallucinated at a per-model rate p, p solved from the paper's printed CHAIR_S.

Without an oracle, Table 1 leaves the out-of-domain objects unverified and bounds their effect
(all present / all hallucinated). The paper verified them, so its printed CHAIR_S fixes how many
it found hallucinated. Assume each unverified distinct object of a model's captions is
hallucinated independently with one rate p per model:

* CHAIR_S(p) = mean over captions of 1 for a caption with a verified hallucination, else
  1 - (1 - p)^u (u: its unverified objects). It rises from the ``present`` bound (p = 0) to the
  ``absent`` bound (p = 1), so the printed CHAIR_S gives one p (:func:`solve_rate`; a printed
  value outside the bounds gives p = 0 or 1, flagged).
* precision(p) = mean over captions with an object of (n - h - p u) / n (n distinct objects, h
  verified hallucinations): every object counts once p decides it. Linear in p, so solving it
  from the printed precision is a check of the same assumption (:func:`solve_precision_rate`).
* CAOS at rate p: every unverified object is drawn hallucinated (u < p, u a uniform number
  hashed from model, instruction, image, name and draw: the same on every machine, and the same
  objects stay hallucinated as p grows) or present (it then joins T and X, Algorithm 1 step 7),
  the captions are scored again with Algorithm 1, and CAOS_T, CAOS_X, CAOS_K are the mean over
  :data:`DRAWS` draws of the pooled means; the ratios and the average come from those means.

CHAIR_S and precision are the expectations (exact); the CAOS cells are Monte Carlo means.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from halluscope.benchmarks.caos.metric import (
    CAOSScorer,
    CaptionObject,
    VectorTable,
    aggregate,
    distinct_objects,
)
from halluscope.benchmarks.caos.settings import RateSettings
from halluscope.benchmarks.caos.tables import (
    BOUND_SUFFIXES,
    CAOS_COLUMN_OF,
    CAOS_COLUMNS,
    CAOS_METRIC,
    _nan,
    _render,
    block_starts,
    caos_label,
    latex_escape,
    metric_label,
    model_columns,
    published_value,
    summary_rows,
    summary_value,
    table1_records,
    table_rows,
    twin_record,
)
from halluscope.stage_command import stage

#: Monte Carlo draws of the CAOS cells at rate p.
DRAWS = 20
#: Suffix of the rows at rate p (CSV twin metric names).
AT_RATE = " [at rate p]"
P_FROM_CHAIR = "p [from printed CHAIR_S]"
P_FROM_PRECISION = "p [from printed precision]"


@dataclass(frozen=True)
class CaptionCounts:
    """A caption's distinct objects: all, verified hallucinations, unverified."""

    n_objects: int
    n_hallucinated: int
    n_unverified: int


def counts_of(objects: Sequence[CaptionObject]) -> CaptionCounts:
    objs = distinct_objects(objects)
    return CaptionCounts(
        len(objs),
        sum(o.present is False for o in objs),
        sum(o.present is None for o in objs),
    )


def expected_chair_s(counts: Sequence[CaptionCounts], p: float) -> float | None:
    """Expected CHAIR_S with every unverified object hallucinated with probability ``p``."""
    if not counts:
        return None
    hit = [1.0 if c.n_hallucinated else 1.0 - (1.0 - p) ** c.n_unverified for c in counts]
    return sum(hit) / len(hit)


def expected_precision(counts: Sequence[CaptionCounts], p: float) -> float | None:
    """Expected mean per-caption precision (captions with an object) at rate ``p``."""
    values = [
        (c.n_objects - c.n_hallucinated - p * c.n_unverified) / c.n_objects
        for c in counts
        if c.n_objects
    ]
    return sum(values) / len(values) if values else None


def solve_rate(counts: Sequence[CaptionCounts], target: float) -> tuple[float | None, str]:
    """The p whose expected CHAIR_S is ``target``, and how it was found: ``solved``, ``low``
    (the target is below the value at p = 0: p = 0), ``high`` (above the value at p = 1: p = 1)
    or ``none`` (no unverified object: p is undefined)."""
    if not any(c.n_unverified for c in counts):
        return None, "none"
    low, high = expected_chair_s(counts, 0.0), expected_chair_s(counts, 1.0)
    if target <= low:
        return 0.0, "solved" if target == low else "low"
    if target >= high:
        return 1.0, "solved" if target == high else "high"
    a, b = 0.0, 1.0
    for _ in range(80):  # bisection: CHAIR_S(p) is increasing; 2^-80 is below float precision
        mid = (a + b) / 2
        if expected_chair_s(counts, mid) < target:
            a = mid
        else:
            b = mid
    return (a + b) / 2, "solved"


def solve_precision_rate(
    counts: Sequence[CaptionCounts], target: float
) -> tuple[float | None, str]:
    """The p whose expected precision is ``target`` (linear in p), clamped to [0, 1] as
    :func:`solve_rate` does."""
    at0, at1 = expected_precision(counts, 0.0), expected_precision(counts, 1.0)
    if at0 is None or at1 is None or at0 == at1:
        return None, "none"
    p = (at0 - target) / (at0 - at1)
    if p < 0:
        return 0.0, "low"
    if p > 1:
        return 1.0, "high"
    return p, "solved"


def uniform(*key: object) -> float:
    """A uniform number in [0, 1) from ``key`` (blake2b): the same on every machine."""
    digest = hashlib.blake2b(repr(key).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def at_rate(objects: Sequence[CaptionObject], p: float, key: tuple, draw: int) -> list:
    """The caption's objects with each unverified one hallucinated when its uniform is < p."""
    return [
        o
        if o.present is not None
        else CaptionObject(o.name, o.in_domain, uniform(*key, o.name, draw) >= p, o.position)
        for o in objects
    ]


@dataclass(frozen=True)
class Caption:
    """One caption to score again: its key (model, instruction, image), GT and objects."""

    key: tuple[str, str, str]
    gt: list[str]
    objects: list[CaptionObject]


def caos_at_rate(
    scorer: CAOSScorer, captions: Sequence[Caption], p: float, draws: int = DRAWS
) -> dict[str, float | None]:
    """Table 1's CAOS cells with the unverified objects drawn hallucinated at rate ``p``: T, X,
    K the mean over ``draws`` of the pooled means, the ratios and the average from those."""
    cache: dict[tuple[int, tuple[str, ...]], dict] = {}
    pooled = []
    for draw in range(draws):
        scores = []
        for i, caption in enumerate(captions):
            objects = at_rate(caption.objects, p, caption.key, draw)
            drawn = tuple(
                o.name for o, r in zip(objects, caption.objects, strict=True)
                if r.present is None and o.present is False
            )  # fmt: skip
            if (i, drawn) not in cache:
                cache[(i, drawn)] = scorer.score_caption(caption.gt, objects).scores
            scores.append(cache[(i, drawn)])
        pooled.append(aggregate(scores))
    means = {}
    for column in ("CAOS_T", "CAOS_X", "CAOS_K"):
        values = [d[column] for d in pooled if d[column] is not None]
        means[column] = sum(values) / len(values) if values else None
    t, x, k = means["CAOS_T"], means["CAOS_X"], means["CAOS_K"]
    return {
        **means,
        "CAOS_TX": t / x if t is not None and x is not None and x > 0 else None,
        "CAOS_XK": x / k if x is not None and k is not None and k > 0 else None,
        "CAOS_avg": (t + x + k) / 3 if None not in (t, x, k) else None,
    }


def load_captions(
    model: str,
    instructions: Sequence[str],
    objects: Mapping[str, Path],
    oracle: Mapping[str, Path],
    items: Mapping[str, dict],
) -> list[Caption]:
    """A model's captions of the Table 1 instructions, labelled as the score stage labels them
    (:func:`halluscope.benchmarks.caos.score.caption_objects`), distinct objects only."""
    from halluscope.benchmarks.caos.captions.oracle import load_decisions
    from halluscope.benchmarks.caos.score import caption_objects
    from halluscope.io import read_jsonl

    out = []
    for instruction in instructions:
        decisions = load_decisions(oracle[instruction])
        for rec in read_jsonl(objects[instruction]):
            image_id = rec["image_id"]
            gt = set(items[image_id].get("gt_objects", []))
            objs = distinct_objects(caption_objects(rec, gt, decisions))
            out.append(Caption((model, instruction, str(image_id)), sorted(gt), objs))
    return out


def rate_records(
    settings: RateSettings,
    summary: pd.DataFrame,
    captions: Mapping[str, Sequence[Caption]],
    scorers: Mapping[str, CAOSScorer],
    published: Mapping[str, Mapping[str, float]],
    draws: int = DRAWS,
) -> list[dict]:
    """CSV-twin records: p per model (from CHAIR_S, and from precision as a check), then for
    precision, CHAIR_S and each embedder's CAOS cells the value at rate p (published = the
    paper's) beside the two bounds of summary.csv."""
    rows = summary_rows(summary, "table1")
    models, embedders = settings.models, settings.embedders
    rates: dict[str, float | None] = {}
    counts_by_model: dict[str, list[CaptionCounts]] = {}
    records: list[dict] = []
    checks: list[dict] = []
    for model in models:
        counts = counts_by_model[model] = [counts_of(c.objects) for c in captions[model]]
        chair = published_value(published, model, "CHAIR_S")
        precision = published_value(published, model, "precision")
        p, _ = solve_rate(counts, chair) if chair is not None else (None, "none")
        p2, _ = solve_precision_rate(counts, precision) if precision is not None else (None, "none")
        rates[model] = p
        records.append(twin_record(model, "", P_FROM_CHAIR, p))
        checks.append(twin_record(model, "", P_FROM_PRECISION, p2))
    records.extend(checks)

    def block(embedding: str, column: str, metric: str, key: str, values: Mapping) -> None:
        emb = [embedding] if embedding else embedders
        for model in models:
            records.append(
                twin_record(
                    model, embedding, metric + AT_RATE, values.get(model),
                    published_value(published, model, key),
                )
            )  # fmt: skip
        for bound, suffix in BOUND_SUFFIXES.items():
            for model in models:
                value = summary_value(rows, model, emb, f"{column}_if_{bound}")
                records.append(twin_record(model, embedding, metric + suffix, value))

    for column, func in (("precision", expected_precision), ("CHAIR_S", expected_chair_s)):
        values = {
            m: None if rates[m] is None else func(counts_by_model[m], rates[m]) for m in models
        }
        block("", column, column, column, values)
    for embedder in embedders:
        cells = {
            m: caos_at_rate(scorers[embedder], captions[m], rates[m], draws)
            if rates[m] is not None
            else {}
            for m in models
        }
        for column in CAOS_COLUMNS:
            block(
                embedder, column, CAOS_METRIC[column], f"{embedder}:{column}",
                {m: cells[m].get(column) for m in models},
            )  # fmt: skip
    return records


def rate_latex(
    records: Sequence[Mapping],
    models: Sequence[str],
    decimals: int,
    k: int,
    *,
    draws: int = DRAWS,
    label: str = "tab:caos-sensitivity-p",
) -> str:
    """Rows: p, then each Table 1 cell at rate p with its two bounds in brackets. The paper's
    values stay in the CSV twin (``published``) and in Table 1's (published) columns: beside the
    bracketed cells they would make the table too wide for the page at 8 pt."""
    cell = {(r["embedding"], r["metric"], r["model"]): r for r in records}
    shown = [(e, m) for e, m in table_rows(records) if m.startswith("p [") or m.endswith(AT_RATE)]

    def fmt(value: float | None) -> str:
        return "--" if value is None else f"{value:.{decimals}f}"

    def text(embedding: str, metric: str, model: str) -> str:
        r = cell.get((embedding, metric, model))
        if r is None or r["value"] is None:
            return "--"
        if metric.startswith("p ["):
            return f"{r['value']:.3f}"
        base = metric.removesuffix(AT_RATE)
        ends = [
            cell.get((embedding, base + suffix, model), {}).get("value")
            for suffix in BOUND_SUFFIXES.values()
        ]
        span = f" [{fmt(ends[0])}, {fmt(ends[1])}]" if None not in ends else ""
        return f"{fmt(r['value'])}{span}"

    frame = model_columns(shown, models, text)
    labels = []
    for embedding, metric in shown:
        if metric.startswith("p ["):
            labels.append(
                "$p$ " + latex_escape(metric.removeprefix("p ")).replace("CHAIR\\_S", "CHAIR$_S$")
            )
            continue
        base = metric.removesuffix(AT_RATE)
        column = CAOS_COLUMN_OF.get(base)
        name = (
            caos_label(column, embedding, k)
            if column
            else {"CHAIR_S": "CHAIR$_S$", "precision": "Precision"}[base]
        )
        labels.append(name)  # every cell of these rows is at rate p (the caption says so)
    breaks = block_starts(shown)
    undefined = all(
        r["value"] is None for r in records if r["metric"] == P_FROM_CHAIR and r["model"] in models
    )
    caption = (
        (
            "No out-of-domain object is unverified here (or no printed CHAIR$_S$ is known for "
            "these models), so no rate $p$ is defined and the table is empty. "
            if undefined
            else ""
        )
        + "\\emph{Sensitivity view, not a result.} Table~1 with the out-of-domain objects no "
        "oracle verified taken as hallucinated at one rate $p$ per model, $p$ solved so that "
        "the expected CHAIR$_S$ equals the paper's printed CHAIR$_S$ (each unverified distinct "
        "object hallucinated independently with probability $p$; $p = 0$ is the bound "
        "\\emph{unverified present}, $p = 1$ the bound \\emph{unverified absent}, given in "
        "brackets as [present, absent]); every cell below the rows $p$ is at rate $p$. The "
        "paper's printed values are Table~1's (published) columns (and this table's CSV twin). "
        "The row $p$ from the printed precision solves the same "
        "assumption from the other printed column, as a check. Precision and CHAIR$_S$ at rate "
        "$p$ are expectations; each CAOS cell is the mean over "
        f"{draws} seeded draws of which unverified objects are hallucinated (the others join "
        "$T$ and $X$ as present objects), its ratios and average computed from those means. "
        "The assumption (one rate per model, independent of the object and the caption) is "
        "ours, not the paper's; the paper's oracle votes would replace it."
    )
    return _render(frame, labels, decimals=decimals, caption=caption, label=label, breaks=breaks)


def agreement_latex(
    table1: Sequence[Mapping], records: Sequence[Mapping], decimals: int, label: str
) -> str:
    """Per metric: mean absolute difference to the paper and Spearman's rho over the models,
    for the unmarked Table 1 (``table1``: its records) and at rate p (``records``)."""
    from halluscope.benchmarks.caos.reproduction import rank_agreement

    head = {(r["embedding"], r["metric"]): r for r in rank_agreement(table1)}
    at = {
        (r["embedding"], r["metric"].removesuffix(AT_RATE)): r
        for r in rank_agreement([r for r in records if r["metric"].endswith(AT_RATE)])
    }
    keys = [key for key in head if key in at]
    if not keys:  # no unverified object: no rate, nothing to compare
        return ""
    frame = pd.DataFrame(
        {
            "mean $|\\Delta|$, Table~1": [head[key]["mean_abs_diff"] for key in keys],
            "mean $|\\Delta|$, at rate $p$": [at[key]["mean_abs_diff"] for key in keys],
            "Spearman $\\rho$, Table~1": [_nan(head[key]["spearman"]) for key in keys],
            "Spearman $\\rho$, at rate $p$": [_nan(at[key]["spearman"]) for key in keys],
        },
        index=range(len(keys)),
    )
    caption = (
        "\\emph{Sensitivity view, not a result.} Agreement with the paper's Table~1 per metric, "
        "for the unmarked cells of Table~1 (unverified objects left out) and for the cells at "
        "the rate $p$ solved from the printed CHAIR$_S$ (over the five models; CHAIR$_S$ at "
        "rate $p$ equals the printed values by construction)."
    )
    return _render(
        frame, [metric_label(e, m) for e, m in keys], decimals=decimals, caption=caption,
        label=label, columns_name="Metric",
    )  # fmt: skip


@stage("sensitivity-p")
def run(
    settings: RateSettings,
    summary: Path,
    objects: dict[str, dict[str, Path]],
    oracle: dict[str, dict[str, Path]],
    items: Path,
    vectors: dict[str, Path],
    out_dir: Path,
) -> None:
    """CAOS Table 1 with unverified out-of-domain objects hallucinated at a per-model rate p.

    ``caos_sensitivity_p.tex`` and its CSV twin (``objects`` and ``oracle``: model ->
    instruction -> file)."""
    from halluscope.benchmarks.caos.k_order import frequent_objects
    from halluscope.benchmarks.caos.published import PUBLISHED_TABLE1
    from halluscope.benchmarks.caos.tables import write_table
    from halluscope.embeddings import load_vectors
    from halluscope.io import InputError
    from halluscope.stages.data import load_items

    if not summary.exists():
        raise InputError(f"{summary}: file not found")
    table = pd.read_csv(summary, keep_default_na=True)
    by_image = load_items(items)
    captions = {
        m: load_captions(m, settings.table1, objects[m], oracle[m], by_image)
        for m in settings.models
    }
    scorers = {}
    for embedder in settings.embedders:
        words, matrix = load_vectors(vectors[embedder])
        scorers[embedder] = CAOSScorer(
            VectorTable(words, matrix),
            frequent_objects(settings.frequent),
            k=settings.k,
            k_max=settings.k_max,
        )
    records = rate_records(settings, table, captions, scorers, PUBLISHED_TABLE1)
    table1 = table1_records(table, settings.models, settings.embedders, PUBLISHED_TABLE1)
    label = f"tab:{settings.run}:caos-sensitivity-p"
    latex = rate_latex(
        records, settings.models, settings.decimals, settings.k, label=label
    ) + agreement_latex(table1, records, settings.decimals, label + "-agreement")
    write_table(Path(out_dir) / "caos_sensitivity_p.tex", latex, records, settings.k)
