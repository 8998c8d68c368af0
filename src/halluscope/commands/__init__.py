"""Hand-check subcommands of the ``halluscope`` CLI, one module each.

Each module defines ``add_parser(subparsers) -> None`` which adds its subcommand and sets
``func=<callable(args) -> None>`` with ``set_defaults`` (:func:`halluscope.hand_check.add_command`
does both, with the shared ``--help`` layout). ``halluscope.cli`` discovers them, so a new
benchmark adds a command without touching the CLI; ``_``-prefixed modules are shared helpers.
Modules must import heavy libraries inside ``func`` only, so that ``halluscope --help`` stays
fast.
"""
