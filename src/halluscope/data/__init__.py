"""Datasets: the embedded demo set and the loaders that turn raw data into ``items.jsonl``."""
