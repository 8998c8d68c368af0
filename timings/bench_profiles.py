"""Wall time and peak memory of the real-question-set profiles (trihe-gqa, phd-ccs).

Each profile runs from scratch in its own temporary copy of the project (raw files from
``../shared/data`` or ``$HALLUSCOPE_DATA_MIRROR``), as ``snakemake --cores 2 results/tables/
all`` under ``/usr/bin/time -v`` when available (peak RSS of the largest process).

Usage: python timings/bench_profiles.py [profile ...] [--smoke]

``--smoke`` (seconds, no data mirror needed): the same measurement of the demo's data stage alone
(``params.yaml`` without a profile, target ``results/data/demo/items.jsonl``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from pipeline_helpers import ROOT, copy_project, run  # noqa: E402

PROFILES = ("trihe-gqa", "phd-ccs")
TARGETS = ("results/tables/", "all")


def bench(profile: str, targets: tuple[str, ...] = TARGETS) -> None:
    """Build ``targets`` of ``profile`` (``demo``: params.yaml alone) from scratch, timed."""
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_project(Path(tmp) / "halluscope")
        cmd = [sys.executable, "-m", "snakemake", "--cores", "2"]
        if profile != "demo":
            cmd += ["--configfile", f"config/profiles/{profile}.yaml"]
        cmd += ["--", *targets]
        timer = shutil.which("time") or (
            "/usr/bin/time" if Path("/usr/bin/time").exists() else None
        )
        if timer:
            cmd = [timer, "-v", *cmd]
        t = time.perf_counter()
        proc = run(cmd, root)
        wall = time.perf_counter() - t
        peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
        memory = f", peak RSS {int(peak.group(1)) / 1024:.0f} MB" if peak else ""
        what = "" if targets == TARGETS else f" ({' '.join(targets)})"
        print(f"{profile}{what}: {wall:.1f} s from scratch{memory}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profiles", nargs="*", help=f"default: {' '.join(PROFILES)}")
    parser.add_argument("--smoke", action="store_true", help="the demo's data stage alone")
    args = parser.parse_args()
    os.environ.setdefault("HALLUSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
    if args.smoke:
        bench("demo", ("results/data/demo/items.jsonl",))
        return
    for profile in args.profiles or PROFILES:
        bench(profile)


if __name__ == "__main__":
    main()
