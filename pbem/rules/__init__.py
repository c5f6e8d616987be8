"""The rules of Advanced Civilization as a pure, deterministic engine.

Nothing in this package reads a clock, the network or a global random source;
randomness comes from `draws.Draws`, keyed by the game's committed seed.
"""
