"""halluscope: reproducible measurement of hallucination in vision-language models."""

__version__ = "0.1.0"
