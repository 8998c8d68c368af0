"""Make the test helper modules (tests/*.py without test_ prefix) importable."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
