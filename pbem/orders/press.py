"""Press: messages between players, written in the order mail.

    PRESS TO Crete, Italy
    Shall we leave Thrace alone this turn?
    END

or on one line, ``PRESS TO ALL: Good luck everyone``. The message is kept in
the game's log and mailed at once to the players it names (``ALL``: every
player); nobody else reads it, save the moderator.
"""

from __future__ import annotations

import re

from pbem.rules.core.commands import SendPress
from pbem.rules.core.state import GameState

from .grammar import Actor, LineError, name, player_of

_TO = re.compile(r"TO\s", re.I)
END = "END"


def targets(state: GameState, text: str) -> tuple[str, ...]:
    parts = [p for p in re.split(r"[,;\s]+", text.strip()) if p]
    if [p.upper() for p in parts] == ["ALL"]:
        return ("ALL",)
    nations = [n for n in state.nations]
    if not nations:
        raise LineError("before nations are chosen, press goes TO ALL")
    return tuple(dict.fromkeys(name(p, nations, "nation") for p in parts))


def press(state: GameState, actor: Actor, head_rest: str, body: list[str]) -> SendPress:
    """The command of a PRESS line (``head_rest``: what follows PRESS) and the lines it carries."""
    head_rest = head_rest.strip()
    # Cut at the first colon by hand: a pattern doing it ("TO (.+?)\s*(:.*)?$") read a long run of blanks again
    # from each of its characters.
    to, _colon, first = head_rest[3:].partition(":") if _TO.match(head_rest) else ("", "", "")
    to, first = to.strip(), first.strip()
    if not to:
        raise LineError("write PRESS TO <nation>, <nation> (or ALL), then the message, then a line END")
    text = "\n".join([first, *body]).strip() if first else "\n".join(body).strip()
    if not text:
        raise LineError("the press message is empty: write it below PRESS TO ..., then a line END")
    return SendPress(player_of(actor), targets(state, to), text)


def canonical(command: SendPress) -> str:
    """The order as an acknowledgement or the log's history shows it; a reply to press names nobody (it may be grey)."""
    if command.reader is not None:
        return f"PRESS in reply to press ({len(command.text)} characters)"
    return f"PRESS TO {', '.join(command.to)} ({len(command.text)} characters)"
