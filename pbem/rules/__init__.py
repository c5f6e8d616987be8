"""The rules of Advanced Civilization as a pure, deterministic engine.

Nothing in this package reads a clock, the network or a global random source;
randomness comes from `core.draws.Draws`, keyed by the game's committed seed.
Layers, each importing only those below it: `core`, `ruleset`, `board`,
`phases`, then `turn`, `engine`, and `view` / `invariants` on top
(docs/architecture.md; tests/test_architecture.py keeps it so).
"""
