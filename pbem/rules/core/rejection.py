"""The one exception a player ever sees from the rules engine."""

from __future__ import annotations


class Rejection(Exception):
    """An order the rules do not allow, with the clause that forbids it."""

    def __init__(self, message: str, cite: str | None = None, suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.cite = cite
        self.suggestions = suggestions

    def __str__(self) -> str:
        return f"{self.message} ({self.cite})" if self.cite else self.message


class NotYourTurn(Rejection):
    """An order given before the player's turn in a step taken in turn (setup, movement, buying cards).

    It may be legal when the turn comes, so the service keeps it to be played
    then, rather than refusing it (DESIGN: orders sent early).
    """
