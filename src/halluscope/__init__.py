"""halluscope: reproducible measurement of hallucination in vision-language models."""

from halluscope.determinism import pin_kernels

__version__ = "0.1.0"

# Before any torch/MKL/oneDNN initialisation in this process: one kernel set on every CPU.
pin_kernels()
