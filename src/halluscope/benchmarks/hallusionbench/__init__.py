"""HallusionBench (Guan et al., CVPR 2024): yes/no questions on figures, charts, maps, tables,
illusions and videos, built so that language hallucination and visual illusion can be told
apart; scored per question (aAcc), per figure (fAcc) and per question pair (qAcc)."""

from halluscope.benchmarks import Parts

# No pipeline rule yet (rules.smk says why): scored by hand (``halluscope hallusionbench``).
PARTS = Parts(sources="sources", check="check")
