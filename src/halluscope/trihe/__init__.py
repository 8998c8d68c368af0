"""Tri-HE: the model-backed judges (:mod:`halluscope.trihe.judges`). The metric (judgement
rules, object/relation split, Hallu_Q / Hallu_I) is :mod:`halluscope.metrics.trihe`; the data
loader :mod:`halluscope.data.trihe`; the stages :mod:`halluscope.stages.trihe`."""
