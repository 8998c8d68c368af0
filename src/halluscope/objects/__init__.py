"""MSCOCO vocabulary, word normalisation, the rule-based object parser and the lexicon matcher."""

from halluscope.objects.coco import COCO_CLASSES, COCO_FREQUENCY_ORDER, load_synonyms
from halluscope.objects.parser import Mention, ObjectParser, tokenize

__all__ = [
    "COCO_CLASSES",
    "COCO_FREQUENCY_ORDER",
    "Mention",
    "ObjectParser",
    "load_synonyms",
    "tokenize",
]
