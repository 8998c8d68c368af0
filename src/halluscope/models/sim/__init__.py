"""Simulated LVLMs (the ``sim`` backend): documented, seeded answer generators with *known*
hallucinations.

Why: the demo profile must run anywhere without a GPU, and the metrics need test instruments whose
truth is known. A simulated LVLM composes its answers from the answer key of each request (an
image's annotations from ``results/data/{profile}/items.jsonl`` plus the question's expected
answer) and injects hallucinations at configured rates and styles, recording what it did in
``Response.meta``. Every table or figure made from them must say they are simulated (their names
start with ``sim-``).

Layout (one plug-in module per benchmark, each registering the answerer of its tasks):

- :mod:`~halluscope.models.sim.core`: the backend (:class:`SimulatedLVLM`, registered as ``sim``),
  seeded randomness, the answer key and the answerer registry;
- :mod:`~halluscope.models.sim.presets`: the presets (rates and styles) and their validation;
- :mod:`~halluscope.models.sim.pools`: the hallucination pools shared by the answerers;
- :mod:`~halluscope.models.sim.captions` (``caption``), :mod:`~halluscope.models.sim.oracle`
  (``oracle``): what each task answers, in their docstrings. The packaged benchmarks register
  their own (``halluscope.benchmarks.<name>.simulated``: ``yesno`` (POPE), ``trihe``,
  ``trihe-describe`` and ``trihe-answer``, ``phd``, ``nope``, ...).
"""

from halluscope.models.sim import captions, oracle  # noqa: F401 (plug-ins)
from halluscope.models.sim.captions import compose_text, instruction_style
from halluscope.models.sim.core import (
    SIM_VERSION,
    SimulatedLVLM,
    answered_tasks,
    frequency_order,
    from_spec,
    register_answerer,
    seeded_rng,
    sim_items,
)
from halluscope.models.sim.oracle import question_object
from halluscope.models.sim.pools import COOCCURRENCE, OOD_POOL, RELATION_POOL, noun_phrase
from halluscope.models.sim.presets import (
    KINDS,
    PRESET_DEFAULTS,
    PRESET_FIELDS,
    PRESETS,
    resolve_preset,
    validate_preset,
)
from halluscope.models.sim.registry_plugins import load_benchmark_answerers

load_benchmark_answerers()  # the packaged benchmarks' answerers (halluscope.benchmarks)

__all__ = [
    "COOCCURRENCE",
    "KINDS",
    "OOD_POOL",
    "PRESETS",
    "PRESET_DEFAULTS",
    "PRESET_FIELDS",
    "RELATION_POOL",
    "SIM_VERSION",
    "SimulatedLVLM",
    "answered_tasks",
    "compose_text",
    "frequency_order",
    "from_spec",
    "instruction_style",
    "noun_phrase",
    "question_object",
    "register_answerer",
    "resolve_preset",
    "seeded_rng",
    "sim_items",
    "validate_preset",
]
