"""NOPE (Lovenia et al.): list-then-rewrite generation of negative-pronoun (NegP) VQA data.

``generate.py`` holds the generation loop and re-exports its steps: ``prompts.py`` (listing and
rewriting prompts), ``parsing.py`` (reply parsers), ``validation.py`` (object validation),
``templates.py`` (Table 6 question templates) and ``drift.py`` (paraphrase drift check); the
answer metrics live in ``halluscope.metrics.nope`` and the lexical diversity measures in
``halluscope.metrics.lexical_diversity``.
"""
