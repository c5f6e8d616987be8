"""Orders only the moderator may give."""

from __future__ import annotations

from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.state import GameState

from .grammar import Actor, LineError, Parser


def _deadline(state: GameState, actor: Actor, rest: str, notes: list[str]) -> PassDeadline:
    if not actor.moderator:
        raise LineError("only the moderator can end a step early")
    return PassDeadline(by="moderator")


VERBS: dict[str, tuple[Parser, str]] = {
    "DEADLINE": (_deadline, "DEADLINE  (moderator: apply defaults for missing orders now)"),
}
CANONICAL = {PassDeadline: lambda c: "DEADLINE"}
