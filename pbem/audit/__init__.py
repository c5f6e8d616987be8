"""Auditing a game: its history per viewer, and re-deriving every ruling."""
