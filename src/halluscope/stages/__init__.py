"""Stage entry points called by the Snakemake rules (through ``halluscope stage-*``).

Each stage reads its inputs, calls the library, and writes its artifacts atomically. Parameters
arrive as command-line arguments from the rules' ``params:`` so Snakemake tracks them.
"""
