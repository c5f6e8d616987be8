"""pbem: an event-sourced play-by-email server for Advanced Civilization."""

__version__ = "0.1.0"
