"""One module or package per phase of the turn (and setup), named after the phase.

A phase never imports another phase, the turn or the engine: it shares only
what lies below it (`board`, `ruleset`, `core`). docs/architecture.md lists
which phase lives where.
"""
