"""Extract stage: the ordered object list L of each response (CAOS Algorithm 1, steps 2-4).

L1 comes from the rule-based MSCOCO parser; L2 from the out-of-domain lexicon (the LLM
extractor replaces or augments it when configured). L = L1 united with L2 in caption order;
an L2 mention overlapping an L1 mention is dropped (the MSCOCO reading wins).
"""

from __future__ import annotations

from pathlib import Path

from halluscope.io import InputError, read_jsonl, write_jsonl


def build_extractor(synonyms: str, variant: str, lexicon: str):
    """Return ``extract(text) -> list[dict]`` for the given parser settings."""
    from halluscope.objects.coco import load_synonyms
    from halluscope.objects.lexicon import find_objects
    from halluscope.objects.ood_nouns import load_lexicon
    from halluscope.objects.parser import ObjectParser

    parser = ObjectParser(
        load_synonyms(None if synonyms == "builtin" else Path(synonyms)), variant=variant
    )
    nouns = load_lexicon(lexicon)

    def extract(text: str) -> list[dict]:
        l1 = parser.parse(text)
        taken = set()
        objects = []
        for m in l1:
            taken.update(range(m.start, m.end))
            objects.append(
                {
                    "name": m.class_name,
                    "surface": m.surface,
                    "position": m.position,
                    "in_domain": True,
                    "source": "rule",
                    "_start": m.start,
                }
            )
        for m in find_objects(text, nouns):
            if taken.intersection(range(m.start, m.end)):
                continue
            objects.append(
                {
                    "name": m.class_name,
                    "surface": m.surface,
                    "position": m.position,
                    "in_domain": False,
                    "source": "lexicon",
                    "_start": m.start,
                }
            )
        objects.sort(key=lambda o: (o["_start"], o["position"]))
        for o in objects:
            del o["_start"]
        return objects

    return extract


def run(responses: Path, synonyms: str, variant: str, lexicon: str, out: Path) -> None:
    """Write one object record per response, in response order."""
    extract = build_extractor(synonyms, variant, lexicon)
    records = []
    for number, rec in enumerate(read_jsonl(responses), start=1):
        text = rec.get("text")
        if not isinstance(text, str):
            raise InputError(f"{responses}:{number}: expected a string 'text' field")
        records.append({"image_id": rec["image_id"], "objects": extract(text)})
    write_jsonl(out, records)
