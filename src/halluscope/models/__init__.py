"""Model backends behind one interface, the response cache and the generation loop.

``make_backend(spec, **context)`` builds a backend from a ``params.yaml`` model spec
(``spec["backend"]`` names it); ``ResponseCache`` keeps every answer content-addressed on disk;
``answer_all`` answers requests through it (the loop every stage uses); ``generate_captions``
runs one (model, instruction) over a dataset. See ``docs/architecture.md``.
"""

from halluscope.models.answers import AnswersFailed, answer_all
from halluscope.models.base import (
    Backend,
    Request,
    Response,
    available_backends,
    item_answer_key,
    make_backend,
    register_backend,
    user_message,
)
from halluscope.models.cache import CacheMissError, ResponseCache, cache_key
from halluscope.models.generate import generate_captions

__all__ = [
    "AnswersFailed",
    "Backend",
    "CacheMissError",
    "Request",
    "Response",
    "ResponseCache",
    "answer_all",
    "available_backends",
    "cache_key",
    "generate_captions",
    "item_answer_key",
    "make_backend",
    "register_backend",
    "user_message",
]
