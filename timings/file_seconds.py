"""Write ``tests/file_seconds.json``: the seconds each test file keeps a worker busy.

Usage: python -m pytest -n 2 --dist loadfile --no-loadscope-reorder -m "not slow" \\
           --junitxml=/tmp/fast.xml
       python -m pytest -n 2 --dist loadfile --no-loadscope-reorder -m slow \\
           --junitxml=/tmp/slow.xml
       python timings/file_seconds.py /tmp/fast.xml /tmp/slow.xml [--out FILE]

Each test case's time (setup, call and teardown) is summed per file over the JUnit XML files.
``tests/conftest.py`` reads the result only to hand test files to the pytest-xdist workers
longest first; numbers from another machine change that order, never a result. ``--out``
writes elsewhere (the smoke run of tests/test_timings_smoke.py reads a small hand-made report
and must not touch the committed file).
"""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "file_seconds.json"


def file_of_classname(classname: str) -> str:
    """The test file of a JUnit ``classname`` (``tests.test_x`` or ``tests.test_x.TestY``)."""
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        path = "/".join(parts[:end]) + ".py"
        if (ROOT / path).is_file():
            return path
    raise SystemExit(f"no test file for JUnit classname {classname!r}")


def file_seconds(reports: list[Path]) -> dict[str, float]:
    """Seconds per test file, summed over every test case of ``reports``."""
    totals: dict[str, float] = {}
    for report in reports:
        for case in ET.parse(report).getroot().iter("testcase"):
            name = file_of_classname(case.get("classname", ""))
            totals[name] = totals.get(name, 0.0) + float(case.get("time", 0.0))
    return {name: round(seconds, 1) for name, seconds in sorted(totals.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path, help="pytest --junitxml files")
    parser.add_argument("--out", type=Path, default=OUT, help="default: tests/file_seconds.json")
    args = parser.parse_args()
    seconds = file_seconds(args.reports)
    args.out.write_text(json.dumps(seconds, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(seconds)} test files, {sum(seconds.values()):.1f} s in all")


if __name__ == "__main__":
    main()
