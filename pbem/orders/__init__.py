"""The order language: one order per line, short verbs, forgiving names (`language` reads a message)."""
