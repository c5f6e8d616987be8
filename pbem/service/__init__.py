"""Use cases: create a game, take orders, run deadlines, move mail (the unit-of-work layer)."""
