"""CHAIR (chair.py); every other metric is in its benchmark's folder
(benchmarks/<name>/metric.py)."""
