"""The noun check's tags of one model's captions, computed in one process and read by its
extract jobs.

Loading spaCy's tagger costs about 1.5 CPU seconds per process: more than an extract job without
LLM calls spends on everything else, paid by each of the demo's 42 extract jobs. Rule
``noun_tags`` tags, in one process per model, the windows around the lexicon matches of every
caption file of that model, each file exactly as its extract job would (a fresh
:class:`~halluscope.objects.nouns.NounCheck` per file: the same windows, in the same batches),
and the extract jobs read the result instead of loading the tagger.

The store is a memo of what the extract job would compute: a window's tags depend only on its text
and the tagger. An extract job tags itself any window the store lacks, and ignores a store that
another tagger made (one line on stderr says so). A window text two files tagged differently (a
near-tie that the batch around it decided) is left out, so that each job tags it as it would
alone.

Format, JSON lines: first ``{"tagger": {...}}`` (:func:`tagger_identity`), then one line per
window, sorted by text: ``{"text", "starts", "ends", "words", "tags"}``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from halluscope.io import InputError, iter_jsonl_numbered, write_jsonl
from halluscope.objects.nouns import EXCLUDED_PIPES, TAGGER_PACKAGE, Tagged

__all__ = ["merge_tagged", "read_store", "tagger_identity", "write_store"]

FIELDS = ("starts", "ends", "words", "tags")


def tagger_identity() -> dict[str, Any]:
    """What makes the tags: the model package and spaCy versions and the pipes left out (read
    from the installed packages' metadata, without importing spaCy)."""
    return {
        "package": TAGGER_PACKAGE,
        "version": metadata.version(TAGGER_PACKAGE),
        "spacy": metadata.version("spacy"),
        "excluded": list(EXCLUDED_PIPES),
    }


def merge_tagged(store: dict[str, Tagged | None], tagged: Mapping[str, Tagged]) -> None:
    """Add one file's windows to ``store``; a text already there with other tags becomes
    ``None`` (left out when written)."""
    for text, tags in tagged.items():
        if text not in store:
            store[text] = tags
        elif store[text] is not None and store[text] != tags:
            store[text] = None


def write_store(path: Path, store: Mapping[str, Tagged | None]) -> int:
    """Write the store (windows whose tags disagree left out); returns the windows written."""
    kept = sorted((text, tags) for text, tags in store.items() if tags is not None)
    header = {"tagger": tagger_identity()}
    rows = ({"text": text, **{f: list(getattr(tags, f)) for f in FIELDS}} for text, tags in kept)
    write_jsonl(path, [header, *rows])
    return len(kept)


def read_store(path: Path) -> dict[str, Tagged]:
    """The windows of a store; empty (with one line on stderr) when another tagger made it."""
    store: dict[str, Tagged] = {}
    header = True
    for number, rec in iter_jsonl_numbered(path):
        if header:
            header = False
            made_by = rec.get("tagger")
            if made_by is None:
                raise InputError(f"{path}:{number}: expected the header {{'tagger': ...}}")
            if made_by != tagger_identity():
                print(
                    f"{path}: made by another tagger ({made_by}); tagging every window here",
                    file=sys.stderr,
                )
                return {}
            continue
        try:
            text = rec["text"]
            values = [tuple(rec[f]) for f in FIELDS]
        except (KeyError, TypeError):
            raise InputError(
                f"{path}:{number}: expected a window with 'text', {', '.join(FIELDS)}"
            ) from None
        store[text] = Tagged(*values)
    return store
