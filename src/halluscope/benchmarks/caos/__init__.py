"""CAOS (Context-Aware Object Similarities, the CAOS paper's Algorithm 1) with the CHAIR-style
counts of its Table 1: score each caption's objects (``metric.py``; ``score.py`` per model x
instruction x embedder), pool them into ``summary.csv`` (``summarize.py``; POPE-F1 joins it),
and draw Figures 3-6 and Tables 1-2 with the ratio, sensitivity and comparison tables
(``report.py``, ``figures.py``, ``tables.py``). The captions, object lists, oracle decisions and
vectors it reads come from the data stage and the caption pipeline (``captions/``: generate,
extract, oracle, embed)."""
