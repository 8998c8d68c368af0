"""Wall time and peak memory of the real-question-set profiles (trihe-gqa, phd-ccs).

Each profile runs from scratch in its own temporary copy of the project (raw files from
``../shared/data`` or ``$HALLUSCOPE_DATA_MIRROR``), as ``snakemake --cores 2 results/tables/
all`` under ``/usr/bin/time -v`` when available (peak RSS of the largest process).

Usage: python timings/bench_profiles.py [profile ...]
"""

from __future__ import annotations

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


def bench(profile: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_project(Path(tmp) / "halluscope")
        cmd = [sys.executable, "-m", "snakemake", "--cores", "2"]
        cmd += ["--configfile", f"config/profiles/{profile}.yaml", "--", "results/tables/", "all"]
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
        print(f"{profile}: {wall:.1f} s from scratch{memory}")


def main() -> None:
    os.environ.setdefault("HALLUSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
    for profile in sys.argv[1:] or PROFILES:
        bench(profile)


if __name__ == "__main__":
    main()
