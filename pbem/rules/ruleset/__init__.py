"""The ruleset: the board and cards as data (`data/advciv/`), their loader, and the game's typed options."""
