"""What a run prints: a progress line in place on a terminal and plain lines in a log; the
repository's Snakemake logger (one line per finished job, running jobs on lines of their own,
errors as Snakemake prints them, the closing block last); and the closing block's paths and
headline numbers."""

from __future__ import annotations

import io
import json
import logging
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from pipeline_helpers import ROOT, copy_of_build, snakemake

from halluscope.progress import PREFIX, ProgressLine
from halluscope.report.closing import closing_block

JSON_LINE = re.compile(r"^\s*\{.*\}\s*$")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# -- the progress line ---------------------------------------------------------------------------


def test_progress_in_a_log_is_plain_lines_at_most_every_interval() -> None:
    stream, clock = io.StringIO(), Clock()
    bar = ProgressLine("captions", 10, stream=stream, interval=2.0, clock=clock)
    for step in range(10):
        clock.now = step * 0.5
        bar.update(1, cache_hits=step // 2)
    bar.close()
    text = stream.getvalue()
    assert "\r" not in text and "\x1b" not in text
    lines = text.splitlines()
    # the start, then one line per 2 s of the 4.5 s loop
    assert len(lines) == 3, lines
    assert all(line.startswith(PREFIX + "captions: ") for line in lines)
    assert lines[0] == PREFIX + "captions: 0/10 req (0%), 0 s"
    assert lines[-1] == PREFIX + "captions: 9/10 req (90%), 2.2 req/s, 4 cache hits, 4 s"


def test_progress_on_a_terminal_is_redrawn_in_place_and_erased() -> None:
    stream, clock = Terminal(), Clock()
    bar = ProgressLine("answers", 4, stream=stream, interval=0.1, clock=clock)
    for step in range(4):
        clock.now = step + 1.0
        bar.update(1)
    bar.close()
    text = stream.getvalue()
    assert "\n" not in text and PREFIX not in text
    draws = text.split("\r")[1:]
    assert draws[-1] == "\x1b[K"  # erased for the caller's summary line
    assert draws[-2].startswith("answers: 4/4 req (100%)")


# -- the logger ----------------------------------------------------------------------------------


def _handler(**overrides):
    from snakemake_logger_plugin_halluscope import LogHandler

    settings = dict(printshellcmds=False, nocolor=True, quiet=set(), debug_dag=False,
                    verbose=False, show_failed_logs=False, stdout=False, dryrun=False)  # fmt: skip
    settings.update(overrides)
    return LogHandler(SimpleNamespace(**settings), None)


def _record(msg, level=logging.INFO, **extra) -> logging.LogRecord:
    record = logging.LogRecord("snakemake", level, __file__, 1, msg, None, None)
    record.__dict__.update(extra)
    return record


def _job_info(jobid: int, rule: str, log: Path, **wildcards) -> logging.LogRecord:
    from snakemake_interface_logger_plugins.common import LogEvent

    return _record(
        f"Rule: {rule}, Jobid: {jobid}", event=LogEvent.JOB_INFO, jobid=jobid, rule_msg=None,
        rule_name=rule, local=True, input=[], output=[], log=[str(log)], benchmark=None,
        wildcards=wildcards, reason="Missing output files", resources={}, priority=0, threads=1,
        indent=False, is_checkpoint=False, printshellcmd=True, is_handover=False, shellcmd="",
    )  # fmt: skip


def test_logger_prints_one_line_per_finished_job_and_the_closing_block_last(
    tmp_path: Path, capsys
) -> None:
    from snakemake_interface_logger_plugins.common import LogEvent

    log = tmp_path / "answers.log"
    log.write_text(
        PREFIX + "PhD answers: 0/2 req (0%), 0 s\n"
        '{"answers": 2, "failed": 0}\n'
        "PhD answers: 2 requests, 0 cache hits, 0 failures, 0.1 s\n",
        encoding="utf-8",
    )
    handler = _handler()
    records = [
        _record(None, event=LogEvent.WORKFLOW_STARTED),
        _record("Building DAG of jobs..."),
        _record("Provided cores: 2", event=LogEvent.RESOURCES_INFO, cores=2),
        _record("Job stats:\n...", event=LogEvent.RUN_INFO, stats={"a": 1, "total": 2}),
        _record("Execute 1 jobs...", event=LogEvent.JOB_STARTED, jobs=[7]),
        _job_info(7, "phd_answers", log, dataset="phd-ccs", model="sim-a"),
        _record("Done: profile phd-ccs", halluscope_closing=True),
        _record("Finished jobid: 7", event=LogEvent.JOB_FINISHED, job_id=7),
        _record(None, event=LogEvent.PROGRESS, done=1, total=2),
        _record("a warning", level=logging.WARNING),
        _record("Complete log(s): .snakemake/log/x.snakemake.log"),
    ]
    for record in records:
        handler.handle(record)
    handler.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "2 jobs to run",
        "[1/2] phd_answers phd-ccs/sim-a (0 s): "
        "PhD answers: 2 requests, 0 cache hits, 0 failures, 0.1 s",
        "a warning",
        "Complete log(s): .snakemake/log/x.snakemake.log",
        "Done: profile phd-ccs",
    ]


def test_logger_passes_errors_on_with_the_end_of_the_job_log(tmp_path: Path, capsys) -> None:
    from snakemake_interface_logger_plugins.common import LogEvent

    log = tmp_path / "extract.log"
    log.write_text("".join(f"line {i}\n" for i in range(40)) + "ValueError: bad\n", "utf-8")
    handler = _handler()
    handler.handle(_job_info(3, "extract", log, model="m"))
    handler.handle(_record(
        "Error in rule extract, jobid: 3", level=logging.ERROR, event=LogEvent.JOB_ERROR,
        rule_name="extract", rule_msg=None, jobid=3, input=[], output=["o.jsonl"], log=[str(log)],
        conda_env=None, container_img=None, aux={}, indent=False, shellcmd="halluscope ...",
    ))  # fmt: skip
    handler.close()
    err = capsys.readouterr().err
    assert "Error in rule extract:" in err and f"log: {log}" in err
    assert f"last lines of {log}:" in err and "    ValueError: bad" in err
    assert "line 20" not in err  # the end of the log, not all of it


def test_logger_prints_a_dry_run_as_snakemake_does(tmp_path: Path, capsys) -> None:
    handler = _handler(dryrun=True, stdout=True)
    handler.handle(_job_info(1, "generate", tmp_path / "g.log", model="sim-a"))
    handler.close()
    out = capsys.readouterr().out
    assert "rule generate:" in out and "wildcards: model=sim-a" in out


def test_logger_draws_running_jobs_on_lines_of_their_own(tmp_path: Path, monkeypatch) -> None:
    """Two running jobs: two lines below the finished ones, each with its job's latest progress
    line; redrawn (erased and written again) as the finished line is printed above them."""
    import snakemake_logger_plugin_halluscope as plugin

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setattr(plugin, "REDRAW", 3600.0)  # draws only when a line is printed
    logs = {}
    for name in ("a", "b"):
        logs[name] = tmp_path / f"{name}.log"
        logs[name].write_text(f"{PREFIX}{name}: 3/9 req (33%), 1.5 req/s, 2 s\n", "utf-8")
    handler = _handler()
    handler.handle(_job_info(1, "extract", logs["a"], model="m1"))
    handler.handle(_job_info(2, "extract", logs["b"], model="m2"))
    text = terminal.getvalue()
    block = text.rsplit("\x1b[J", 1)[-1]
    assert block.splitlines() == [
        "  running extract m1 (0 s): a: 3/9 req (33%), 1.5 req/s",
        "  running extract m2 (0 s): b: 3/9 req (33%), 1.5 req/s",
    ]
    handler.close()
    assert terminal.getvalue().endswith("\x1b[2F\x1b[J")  # erased at the end


# -- the closing block ---------------------------------------------------------------------------


def _results(root: Path, headline: bool) -> None:
    tables = root / "results/tables/demo"
    tables.mkdir(parents=True)
    for name in ("caos_table1", "nope_table"):
        (tables / f"{name}.tex").write_text("", "utf-8")
        (tables / f"{name}.csv").write_text("", "utf-8")
    metrics = root / "results/metrics"
    metrics.mkdir(parents=True)
    (metrics / "demo.json").write_text("{}", "utf-8")
    if headline:
        (root / "metrics/demo").mkdir(parents=True)
        for model, negp, chair in (("sim-a", 0.555556, 0.25), ("sim-b", 0.098765, 0.75)):
            values = {"PhD_base": 0.9, "TriHE_HalluI": 0.3, "NOPE_NegP": negp, "POPE_F1": 0.8,
                      "CAOS_avg_glove": 0.3, "CHAIR_S": chair}  # fmt: skip
            (root / "metrics/demo" / f"{model}.json").write_text(json.dumps(values), "utf-8")


def _config() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))


def test_closing_block_names_the_results_and_headline_numbers(tmp_path: Path) -> None:
    _results(tmp_path, headline=True)
    block = closing_block(_config(), tmp_path).splitlines()
    assert block[:5] == [
        "Done: profile demo (simulated LVLMs: test instruments)",
        "  tables   results/tables/demo/ (2 LaTeX tables, CSV twins beside them)",
        "  metrics  results/metrics/demo.json; per model: metrics/demo/",
        "  report   make paper -> results/paper/report.pdf",
        "Headline (per model)     sim-a   sim-b",
    ]
    # in the order of the headline metrics, at most 5, every one a fraction
    assert [line.split() for line in block[5:]] == [
        ["CHAIR_S", "0.250", "0.750"],
        ["CAOS_avg_glove", "0.300", "0.300"],
        ["POPE_F1", "0.800", "0.800"],
        ["NOPE_NegP", "0.556", "0.099"],
        ["TriHE_HalluI", "0.300", "0.300"],
    ]


def test_closing_block_gives_each_headline_number_its_tables_interval(tmp_path: Path) -> None:
    """A headline number whose table cell has an interval (the CSV twin's lo and hi) is printed
    with it; one without (POPE-F1 here) alone."""
    from halluscope.report.latex import TWIN_COLUMNS

    _results(tmp_path, headline=True)
    twin = ",".join(TWIN_COLUMNS) + "\n"
    twin += (
        "sim-a,,CHAIR_S,0.250000,0.104000,0.480000,,\nsim-b,,CHAIR_S,0.750000,0.520000,0.890000,,\n"
    )
    twin += "sim-a,,POPE-F1,0.800000,,,,\n"
    (tmp_path / "results/tables/demo/caos_table1.csv").write_text(twin, "utf-8")
    block = closing_block(_config(), tmp_path).splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in block[5:]}
    assert rows["CHAIR_S"] == ["0.250", "[0.10,0.48]", "0.750", "[0.52,0.89]"]
    assert rows["POPE_F1"] == ["0.800", "0.800"]


def test_closing_block_of_a_profile_without_a_report_section_names_no_report(
    tmp_path: Path,
) -> None:
    """An own-captions profile has no section in the reproduction report: the block must not
    send the user to a PDF without their numbers."""
    _results(tmp_path, headline=False)
    config = _config() | {"profile": "my-lvlm"}
    assert "report" not in closing_block(config, tmp_path)
    assert "  report   make paper -> results/paper/report.pdf" in closing_block(_config(), tmp_path)


def test_closing_block_without_headline_numbers(tmp_path: Path) -> None:
    _results(tmp_path, headline=False)
    block = closing_block(_config(), tmp_path)
    assert "results/tables/demo/" in block and "Headline" not in block
    shutil.rmtree(tmp_path / "results")
    _results(tmp_path, headline=True)
    assert "Headline" not in closing_block(_config(), tmp_path, numbers=False)


# -- a run's terminal ----------------------------------------------------------------------------


def _terminal_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]


@pytest.mark.slow
def test_a_run_prints_one_line_per_job_no_json_and_the_closing_block(
    demo_build: Path, tmp_path: Path
) -> None:
    root = copy_of_build(demo_build, tmp_path / "run")
    answers = "results/pope/demo/sim-precise/random.answers.jsonl"
    proc = snakemake(root, "--cores", "2", "--forcerun", "pope_answers", "--", answers)
    lines = _terminal_lines(proc)
    assert not [line for line in lines if JSON_LINE.match(line)], lines
    finished = [line for line in lines if line.startswith("[1/1] pope_answers ")]
    assert len(finished) == 1 and "POPE answers: 14 requests, 14 cache hits" in finished[0], lines
    log = (root / "logs/pope/demo/sim-precise/random.answers.log").read_text("utf-8")
    assert "\r" not in log and PREFIX + "POPE answers: 0/14 req" in log
    assert not any(line.startswith("Done: profile") for line in lines)  # no tables in this run

    proc = snakemake(root, "--cores", "2", "--forcerun", "tables", "metrics", "--",
                     "results/tables/", "all")  # fmt: skip
    lines = _terminal_lines(proc)
    assert not [line for line in lines if JSON_LINE.match(line)], lines
    jobs = int(next(m.group(1) for line in lines if (m := re.match(r"^(\d+) jobs? to run$", line))))
    assert len([line for line in lines if re.match(rf"^\[\d+/{jobs}\] ", line)]) == jobs
    assert len(lines) <= jobs + 20, lines
    block = lines[lines.index("Done: profile demo (simulated LVLMs: test instruments)") :]
    assert lines[-len(block) :] == block  # last
    assert any(line.startswith("  tables   results/tables/demo/ (") for line in block), block
    rows = block[block.index(next(line for line in block if line.startswith("Headline"))) + 1 :]
    assert 3 <= len(rows) <= 5 and rows[0].split()[0] == "CHAIR_S", block
    # each model's number, then its interval in brackets where its table cell has one
    numbers = [float(v) for row in rows for v in row.split()[1:] if not v.startswith("[")]
    assert len(numbers) == 3 * len(rows)
    assert re.search(r"CHAIR_S +0\.\d{3} \[0\.\d\d,[01]\.\d\d\]", "\n".join(rows)), rows


def test_summaries_of_one_kind_asked_of_several_models_are_one_line_of_sums() -> None:
    """An oracle job asks each member in turn: its job line carries one sum, not a line each."""
    from snakemake_logger_plugin_halluscope import merged_summaries

    log = [
        "questions to sim-frequent: 23 requests, 17 cache hits, 0 failures, 0.2 s",
        "progress questions to sim-precise: 23/23 req (100%), 0 s",
        "questions to sim-precise: 23 requests, 17 cache hits, 1 failures, 0.3 s",
        "questions to sim-verbose: 23 requests, 16 cache hits, 0 failures, 0.1 s",
        "captions: 9 requests, 0 cache hits, 0 failures, 9.2 s",
        "captions: 2 requests, 2 cache hits, 0 failures, 0.0 s",
    ]
    assert merged_summaries(log) == [
        "questions to 3 models: 69 requests, 50 cache hits, 1 failures, 0.6 s",
        "captions: 9 requests, 0 cache hits, 0 failures, 9.2 s",
        "captions: 2 requests, 2 cache hits, 0 failures, 0.0 s",
    ]
    one = ["questions to sim-a: 4 requests, 0 cache hits, 0 failures, 0.1 s"]
    assert merged_summaries(one) == one  # one model: its own line, named
