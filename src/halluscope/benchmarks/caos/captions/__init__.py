"""CAOS's caption pipeline, one module per stage: captions per model x instruction
(:mod:`.generate`), their ordered object lists (:mod:`.extract`), the presence of their
out-of-domain objects (:mod:`.oracle`) and the vectors of every object name (:mod:`.embed`).

Their rules are ``generate.smk``, ``extract.smk``, ``oracle.smk`` and ``embed.smk`` beside this
package; the libraries they call (the object parser and lexicon, the LLM extractor, the oracle
ensemble, the embedders) are shared and stay in ``halluscope.objects``, ``halluscope.models`` and
``halluscope.embeddings``.
"""
