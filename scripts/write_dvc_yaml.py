"""Write dvc.yaml from the stage registry (src/halluscope/registry.py).

Usage: python scripts/write_dvc_yaml.py [--check]
With --check, exit 1 when the committed dvc.yaml differs from what the registry gives.
"""

from __future__ import annotations

import sys
from pathlib import Path

from halluscope.registry import dvc_yaml

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    text = dvc_yaml()
    path = ROOT / "dvc.yaml"
    if "--check" in argv:
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            print("dvc.yaml is out of date: run python scripts/write_dvc_yaml.py", file=sys.stderr)
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
