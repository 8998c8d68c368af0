"""Model backends behind one interface, the response cache and the generation loop.

``make_backend(spec, **context)`` builds a backend from a ``params.yaml`` model spec
(``spec["backend"]`` names it); ``ResponseCache`` keeps every answer content-addressed on disk;
``generate_captions`` runs one (model, instruction) over a dataset. See ``docs/architecture.md``.
"""

from halluscope.models.base import (
    Backend,
    Request,
    Response,
    available_backends,
    make_backend,
    register_backend,
    user_message,
)
from halluscope.models.cache import CacheMissError, ResponseCache, cache_key
from halluscope.models.generate import generate_captions

__all__ = [
    "Backend",
    "CacheMissError",
    "Request",
    "Response",
    "ResponseCache",
    "available_backends",
    "cache_key",
    "generate_captions",
    "make_backend",
    "register_backend",
    "user_message",
]
