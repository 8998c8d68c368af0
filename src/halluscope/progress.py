"""A progress line for the loops that call models: redrawn in place when stderr is a terminal,
plain lines otherwise.

Why not a progress bar library: in a file (a job's log under ``logs/``) a bar's carriage returns
pile every redraw onto one line; here a log gets one plain ``progress`` line every few seconds,
each complete, which the repository's Snakemake logger
(:mod:`snakemake_logger_plugin_halluscope`) reads to show every running job on its own line.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from typing import TextIO

#: How a plain progress line starts (the logger finds a job's latest one by it).
PREFIX = "progress "
#: Seconds between redraws: on a terminal, and in a file (a log stays readable).
TTY_INTERVAL = 0.1
FILE_INTERVAL = 2.0


def is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


class ProgressLine:
    """``label: done/total unit (pct%), rate unit/s[, counts]``, on ``stream`` (stderr).

    On a terminal the line is redrawn in place (at most every :data:`TTY_INTERVAL` seconds, cut
    to the terminal's width) and erased by :meth:`close`; elsewhere a plain line starting with
    :data:`PREFIX` is written when the loop starts and then at most every
    :data:`FILE_INTERVAL` seconds. The caller prints its own closing summary.
    """

    def __init__(
        self,
        label: str,
        total: int,
        *,
        unit: str = "req",
        stream: TextIO | None = None,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.stream = sys.stderr if stream is None else stream
        self.tty = is_terminal(self.stream)
        self.interval = interval if interval is not None else (
            TTY_INTERVAL if self.tty else FILE_INTERVAL
        )  # fmt: skip
        self.clock = clock
        self.done = 0
        self.counts: dict[str, int] = {}
        self.start = clock()
        self._drawn = float("-inf")
        self._closed = False
        self._draw()

    def update(self, n: int = 1, **counts: int) -> None:
        """``n`` more items done; ``counts`` (e.g. ``cache_hits=3``) replace the shown counts."""
        self.done += n
        self.counts.update(counts)
        if self.clock() - self._drawn >= self.interval:
            self._draw()

    def text(self) -> str:
        elapsed = self.clock() - self.start
        pct = f" ({100 * self.done // self.total}%)" if self.total else ""
        parts = [f"{self.label}: {self.done}/{self.total} {self.unit}{pct}"]
        if elapsed > 0 and self.done:
            parts.append(f"{self.done / elapsed:.1f} {self.unit}/s")
        parts += [f"{value} {name.replace('_', ' ')}" for name, value in self.counts.items()]
        parts.append(f"{elapsed:.0f} s")
        return ", ".join(parts)

    def _draw(self) -> None:
        self._drawn = self.clock()
        if self.tty:
            width = shutil.get_terminal_size((80, 24)).columns - 1
            self.stream.write("\r" + self.text()[:width] + "\x1b[K")
        else:
            self.stream.write(PREFIX + self.text() + "\n")
        self.stream.flush()

    def close(self) -> None:
        """Erase the line on a terminal (the caller's summary takes its place)."""
        if self._closed:
            return
        self._closed = True
        if self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    def __enter__(self) -> ProgressLine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
