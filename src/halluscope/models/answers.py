"""Answer a list of requests through the response cache: the one loop every stage uses.

Why one loop: captions, benchmark answers, oracle votes and LLM extraction all need the same
things around :meth:`ResponseCache.resolve <halluscope.models.cache.ResponseCache.resolve>`: an
optional progress line, and a failure check that raises only after the successful answers of every
batch are cached (so a rerun sends only the failures again), naming how many failed and the first.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from halluscope.models.base import Backend, Request, Response
from halluscope.models.cache import ResponseCache, is_success


class AnswersFailed(RuntimeError):
    """Some requests failed; the successful answers are cached. ``failed`` = the failures."""

    def __init__(self, message: str, failed: Sequence[Response]) -> None:
        super().__init__(message)
        self.failed = list(failed)


def answer_all(
    backend: Backend,
    requests: Sequence[Request],
    cache: ResponseCache,
    template_version: str,
    *,
    batch_size: int = 8,
    what: str = "answers",
    context: str = "",
    progress: str | None = "",
) -> list[Response]:
    """The answers to ``requests``, in order: cache first (per the cache's mode), misses to the
    backend in batches of ``batch_size``, every success stored as its batch returns.

    Raises :class:`AnswersFailed` ("<n> of <total> <what> failed<context> (first: ...)") when any
    answer failed. ``progress``: the label of a progress line on stderr
    (:class:`~halluscope.progress.ProgressLine`: items done / total, rate, cache hits; ``""`` =
    ``what``, ``None`` = none), in place on a terminal, plain lines in a job's log; one summary
    line (items, cache hits, failures, seconds) ends it either way.
    """
    import time

    from halluscope.progress import ProgressLine

    label = what if progress == "" else progress
    start = time.monotonic()
    hits0 = cache.hits
    bar = None if label is None else ProgressLine(label, len(requests), unit="req")

    def advance(n: int) -> None:
        if bar is not None:
            bar.update(n, cache_hits=cache.hits - hits0)

    try:
        responses = cache.resolve(
            backend, requests, template_version, batch_size=batch_size, progress=advance
        )
    finally:
        if bar is not None:
            bar.close()
    failed = [r for r in responses if not is_success(r)]
    print(
        f"{label or what}: {len(requests)} requests, {cache.hits - hits0} cache hits, "
        f"{len(failed)} failures, {time.monotonic() - start:.1f} s",
        file=sys.stderr,
    )
    if failed:
        first = failed[0]
        raise AnswersFailed(
            f"{len(failed)} of {len(requests)} {what} failed{context} (first: "
            f"{first.request_id!r}: {first.meta.get('error')!r}); the "
            f"{len(requests) - len(failed)} successful answers are cached, rerun to retry only "
            "the failures",
            failed,
        )
    return responses
