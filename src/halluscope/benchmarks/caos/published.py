"""The CAOS paper's published numbers (Table 1, Table 2) for the "(published)" columns of
:mod:`halluscope.benchmarks.caos.tables` (which re-exports them).
"""

from __future__ import annotations

__all__ = ["PUBLISHED_IDS", "PUBLISHED_TABLE1", "PUBLISHED_TABLE2"]

# Values of the CAOS paper (real LVLMs, 2000 MSCOCO val images), for "(published)" columns.
# Keys: summary.csv column names for the general rows, "{embedder}:{CAOS column}" for CAOS rows.
_P1_MODELS = ("InstructBLIP", "LLaVA", "mPLUG-Owl", "MiniGPT-4", "Multimodal-GPT")
_P1_ROWS: dict[str, tuple[float, ...]] = {
    "precision": (0.98, 0.85, 0.79, 0.92, 0.88),
    "recall": (0.62, 0.85, 0.74, 0.78, 0.67),
    "objects_per_caption": (2.22, 4.97, 4.49, 4.91, 3.26),
    "CHAIR_S": (0.04, 0.51, 0.56, 0.33, 0.32),
    "POPE_F1": (0.84, 0.68, 0.67, 0.74, 0.67),
    "glove:CAOS_T": (0.30, 0.38, 0.37, 0.40, 0.40),
    "glove:CAOS_X": (0.32, 0.41, 0.41, 0.45, 0.42),
    "glove:CAOS_K": (0.52, 0.50, 0.51, 0.47, 0.47),
    "glove:CAOS_TX": (0.94, 0.93, 0.90, 0.89, 0.95),
    "glove:CAOS_XK": (0.62, 0.82, 0.80, 0.96, 0.89),
    "glove:CAOS_avg": (0.38, 0.43, 0.43, 0.44, 0.43),
    "minilm:CAOS_T": (0.26, 0.40, 0.37, 0.35, 0.42),
    "minilm:CAOS_X": (0.27, 0.43, 0.40, 0.40, 0.45),
    "minilm:CAOS_K": (0.52, 0.54, 0.53, 0.45, 0.51),
    "minilm:CAOS_TX": (0.96, 0.93, 0.92, 0.88, 0.93),
    "minilm:CAOS_XK": (0.52, 0.80, 0.75, 0.89, 0.88),
    "minilm:CAOS_avg": (0.35, 0.46, 0.43, 0.40, 0.46),
}
_P2_MODELS = ("LLaVA", "mPLUG-Owl", "MiniGPT-4")
_P2_ROWS: dict[str, tuple[float, ...]] = {
    "glove:CAOS_T": (0.39, 0.40, 0.39),
    "glove:CAOS_X": (0.42, 0.43, 0.45),
    "glove:CAOS_K": (0.47, 0.50, 0.46),
    "glove:CAOS_TX": (0.93, 0.93, 0.87),
    "glove:CAOS_XK": (0.89, 0.86, 0.98),
    "glove:CAOS_avg": (0.43, 0.44, 0.43),
    "minilm:CAOS_T": (0.39, 0.40, 0.37),
    "minilm:CAOS_X": (0.41, 0.43, 0.43),
    "minilm:CAOS_K": (0.49, 0.52, 0.46),
    "minilm:CAOS_TX": (0.95, 0.93, 0.86),
    "minilm:CAOS_XK": (0.84, 0.83, 0.93),
    "minilm:CAOS_avg": (0.43, 0.45, 0.42),
}

#: Our model ids (the ``pope-captions`` profile) for the paper's model names.
PUBLISHED_IDS: dict[str, str] = {
    "instructblip": "InstructBLIP",
    "llava": "LLaVA",
    "mplug-owl": "mPLUG-Owl",
    "minigpt-4": "MiniGPT-4",
    "multimodal-gpt": "Multimodal-GPT",
}

#: Table 1 of the CAOS paper: {model: {row key: value}} (pass as ``published`` to table1_latex).
PUBLISHED_TABLE1: dict[str, dict[str, float]] = {
    model: {key: values[i] for key, values in _P1_ROWS.items()}
    for i, model in enumerate(_P1_MODELS)
}
#: Table 2 of the CAOS paper (means over 14 instructions), same layout as PUBLISHED_TABLE1.
PUBLISHED_TABLE2: dict[str, dict[str, float]] = {
    model: {key: values[i] for key, values in _P2_ROWS.items()}
    for i, model in enumerate(_P2_MODELS)
}
