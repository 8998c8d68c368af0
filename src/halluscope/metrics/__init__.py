"""Hallucination metrics: CHAIR (chair.py) and CAOS (caos.py)."""
