"""NOPE (Lovenia et al.): list-then-rewrite generation of negative-pronoun (NegP) VQA data.

``generate.py`` holds the prompts, parsers, validators and the generation loop; the answer metrics
live in ``halluscope.metrics.nope`` and the lexical diversity measures in
``halluscope.metrics.lexical_diversity``.
"""
