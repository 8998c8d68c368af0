"""Snakemake's terminal output for this repository: a logger plugin (``logger: [halluscope]`` in
``profiles/default/config.yaml``).

What a run prints: one line per finished job (``[done/total] rule wildcards (seconds)``, with
the closing summary of each model-calling stage in its log: requests, cache hits, failures);
when stderr is a terminal, below them one line per running job, redrawn in place, with the
job's latest progress line (:mod:`halluscope.progress`); errors, warnings and dry runs exactly
as Snakemake prints them; and last, the run's closing block (where the results are, headline
numbers; the Snakefile's ``onsuccess``). Each job's output goes to its log under ``logs/`` and
Snakemake's full record (every job's input, output, reason) to ``.snakemake/log/``.

Why a plugin: only the process that prints every line can keep the running jobs' lines apart
from the finished ones; jobs that drew their own progress bars on a shared terminal wrote over
each other's line.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field

from snakemake_interface_logger_plugins.base import LogHandlerBase
from snakemake_interface_logger_plugins.common import LogEvent

#: A job's latest progress line in its log starts with this (halluscope.progress.PREFIX).
PROGRESS_PREFIX = "progress "
#: A model-calling stage's closing summary (halluscope.models.answers.answer_all).
SUMMARY = re.compile(
    r"^(?P<label>\S.*): (?P<requests>\d+) requests, (?P<hits>\d+) cache hits, "
    r"(?P<failures>\d+) failures, (?P<seconds>[\d.]+) s$"
)
#: Snakemake's routine messages, kept in .snakemake/log/ but not shown here.
CHATTER = re.compile(
    r"^(Building DAG of jobs\.\.\.|Using shell: .*|Select jobs to execute\.\.\.|"
    r"Execute \d+ jobs\.\.\.|Assuming unrestricted shared filesystem usage\.|"
    r"Conda environments: ignored|Singularity containers: ignored|"
    r"Group jobs: inactive \(local execution\)|host: .*)$"
)
#: ``extra`` key of the closing block's record: held back and printed after everything else.
CLOSING = "halluscope_closing"
#: Seconds between redraws of the running jobs' lines.
REDRAW = 0.5
#: Bytes read from the end of a job's log for its latest progress line.
TAIL = 8192


@dataclass
class _Job:
    rule: str
    wildcards: str
    logs: list[str]
    started: float
    summaries: list[str] = field(default_factory=list)


def _tail_lines(path: str, size: int = TAIL) -> list[str]:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            end = handle.tell()
            handle.seek(max(0, end - size))
            data = handle.read()
    except OSError:
        return []
    return data.decode("utf-8", "replace").replace("\r", "\n").splitlines()


def merged_summaries(lines: list[str]) -> list[str]:
    """The summary lines among ``lines``; those of one kind asked of several models (``questions
    to <model>``, one per oracle member) as one line of sums, so the job's line fits a terminal.

    Each model's own line stays in the job's log. Seconds add up: the models are asked in turn.
    """
    groups: dict[str | int, list[re.Match]] = {}  # "<what>" of "<what> to <model>", else index
    for index, line in enumerate(lines):
        match = SUMMARY.match(line)
        if match:
            what, to, _model = match["label"].partition(" to ")
            groups.setdefault(what if to else index, []).append(match)
    out = []
    for key, matches in groups.items():
        if len(matches) == 1:
            out.append(matches[0].group(0))
            continue
        total = {k: sum(int(m[k]) for m in matches) for k in ("requests", "hits", "failures")}
        seconds = sum(float(m["seconds"]) for m in matches)
        out.append(
            f"{key} to {len(matches)} models: {total['requests']} requests, {total['hits']} "
            f"cache hits, {total['failures']} failures, {seconds:.1f} s"
        )
    return out


def _whole_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().replace("\r", "\n").splitlines()
    except OSError:
        return []


class LogHandler(LogHandlerBase):
    """The stream handler (replaces Snakemake's default one; see the module docstring)."""

    @property
    def writes_to_stream(self) -> bool:
        return True

    @property
    def writes_to_file(self) -> bool:
        return False

    @property
    def has_filter(self) -> bool:
        return True

    @property
    def has_formatter(self) -> bool:
        return True

    @property
    def needs_rulegraph(self) -> bool:
        return False

    def __post_init__(self) -> None:
        from snakemake.logging import ColorizingTextHandler, DefaultFilter, DefaultFormatter

        settings = self.common_settings
        self.stream = sys.stdout if settings.stdout else sys.stderr
        # Snakemake's own handler prints what this one passes on (errors, warnings, dry runs)
        self.default = ColorizingTextHandler(
            nocolor=settings.nocolor,
            stream=self.stream,
            formatter=DefaultFormatter(settings.quiet, settings.show_failed_logs),
            filter=DefaultFilter(
                settings.quiet,
                settings.debug_dag,
                settings.verbose,
                settings.dryrun,
                settings.printshellcmds,
            ),
        )
        quiet = {str(q).lower().rsplit(".", 1)[-1] for q in settings.quiet or ()}
        # a dry run lists its jobs, --verbose and --debug-dag ask for everything: as Snakemake
        self.passthrough = bool(settings.dryrun or settings.verbose or settings.debug_dag)
        self.show_finished = not ({"progress", "all"} & quiet)
        self.jobs: dict[int, _Job] = {}
        self.running: list[int] = []
        self.finished: list[int] = []
        self.closing: list[str] = []
        self.drawn = 0  # lines of the running block now on the terminal
        self.shown: list[str] = []  # and their text
        self.lock = threading.RLock()
        self.live = self.default.is_tty and not self.passthrough
        self._stop = threading.Event()
        self._thread = None
        if self.live:
            self._thread = threading.Thread(target=self._redraw_loop, daemon=True)
            self._thread.start()

    # -- records -------------------------------------------------------------------------------

    def emit(self, record: logging.LogRecord) -> None:
        try:
            with self.lock:
                self._emit(record)
        except Exception:
            self.handleError(record)

    def _emit(self, record: logging.LogRecord) -> None:
        event = getattr(record, "event", None)
        if getattr(record, CLOSING, False):
            self.closing.append(record.getMessage())
            return
        if self.passthrough:
            self._print_default(record)
            return
        if event == LogEvent.JOB_INFO:
            wildcards = getattr(record, "wildcards", None) or {}
            # logged as the job is handed to the executor: its start
            self.jobs[record.jobid] = _Job(
                rule=record.rule_name,
                wildcards="/".join(str(v) for v in wildcards.values()),
                logs=[str(f) for f in (getattr(record, "log", None) or [])],
                started=time.monotonic(),
            )
            self.running.append(record.jobid)
            self._erase()
            self._draw()
        elif event == LogEvent.JOB_STARTED:
            return  # "Execute N jobs...", before the jobs' JOB_INFO
        elif event == LogEvent.JOB_FINISHED:
            self._stopped(record.job_id)
            self.finished.append(record.job_id)
        elif event == LogEvent.PROGRESS:
            for jobid in self.finished:
                if self.show_finished and jobid in self.jobs:
                    self._write(self._finished_line(jobid, record.done, record.total))
            self.finished.clear()
        elif event in (LogEvent.JOB_ERROR, LogEvent.GROUP_ERROR):
            self._stopped(getattr(record, "jobid", None))
            self._print_default(record)
            self._print_log_tail(getattr(record, "log", None) or [])
        elif event == LogEvent.RUN_INFO:
            stats = getattr(record, "stats", None) or {}
            if "total" in stats:
                total = stats["total"]
                self._write(f"{total} job{'s' if total != 1 else ''} to run")
        elif event in (LogEvent.WORKFLOW_STARTED, LogEvent.RESOURCES_INFO):
            return  # in .snakemake/log/
        elif event is None and record.levelno == logging.INFO:
            if not CHATTER.match(record.getMessage()):
                self._print_default(record)
        else:
            self._print_default(record)

    def _stopped(self, jobid) -> None:
        if jobid in self.running:
            self.running.remove(jobid)

    def _finished_line(self, jobid: int, done: int, total: int) -> str:
        job = self.jobs.pop(jobid)
        seconds = f" ({time.monotonic() - job.started:.0f} s)"
        summaries = merged_summaries(
            [line.strip() for log in job.logs for line in _whole_lines(log)]
        )
        name = f"{job.rule} {job.wildcards}".rstrip()
        line = f"[{done}/{total}] {name}{seconds}"
        return line + (": " + "; ".join(summaries) if summaries else "")

    def _print_log_tail(self, logs: list[str], lines: int = 15) -> None:
        """The last lines of a failed job's logs (Snakemake names them; the cause is in them)."""
        if self.common_settings.show_failed_logs:
            return  # Snakemake prints the whole logs
        for log in logs:
            tail = [line for line in _tail_lines(log) if line.strip()][-lines:]
            if tail:
                self._write(f"last lines of {log}:")
                for line in tail:
                    self._write("    " + line)

    # -- the terminal --------------------------------------------------------------------------

    def _print_default(self, record: logging.LogRecord) -> None:
        self._erase()
        self.default.handle(record)
        self._draw()

    def _write(self, text: str) -> None:
        self._erase()
        self.stream.write(text + "\n")
        self._draw()
        self.stream.flush()

    def _erase(self) -> None:
        if self.drawn:
            self.stream.write(f"\x1b[{self.drawn}F\x1b[J")
            self.drawn = 0
            self.shown = []

    def _block(self) -> list[str]:
        """One line per running job: rule, wildcards, seconds, its log's latest progress line
        (without the seconds it was written at)."""
        width = shutil.get_terminal_size((80, 24)).columns - 1
        now = time.monotonic()
        lines = []
        for jobid in self.running:
            job = self.jobs[jobid]
            progress = ""
            for log in job.logs:
                found = [ln for ln in _tail_lines(log) if ln.startswith(PROGRESS_PREFIX)]
                if found:
                    progress = re.sub(r", \d+ s$", "", found[-1][len(PROGRESS_PREFIX) :])
            text = f"  running {job.rule} {job.wildcards}".rstrip()
            text += f" ({now - job.started:.0f} s)" + (f": {progress}" if progress else "")
            lines.append(text[:width])
        return lines

    def _draw(self, lines: list[str] | None = None) -> None:
        if not self.live or not self.running:
            return
        lines = self._block() if lines is None else lines
        self.stream.write("".join(line + "\n" for line in lines))
        self.drawn = len(lines)
        self.shown = lines
        self.stream.flush()

    def _redraw_loop(self) -> None:
        while not self._stop.wait(REDRAW):
            with self.lock:
                lines = self._block()
                if lines != self.shown:
                    self._erase()
                    self._draw(lines)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        with self.lock:
            self._erase()
            for text in self.closing:
                self.stream.write(text + "\n")
            self.closing.clear()
            self.stream.flush()
        super().close()
