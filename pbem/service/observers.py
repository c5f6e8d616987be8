"""Observers: someone who is not playing asks to watch; the moderator says yes or no.

`OBSERVE [name]` mailed to the game's address from the address the observer
wants the reports at records a request (``ObserverAsked``: a number and a
name in the log, the address in the ``observers`` table) and asks the
moderator, who answers `APPROVE <number>` or `DENY <number> [reason]`. An
observer gets the phase reports as the public sees them, nothing else, and
`UNOBSERVE` from the same address ends it. A forged UNOBSERVE can at worst
stop someone's reports, and he is told, so the From line is trusted for it;
it proves nothing anywhere else.
"""

from __future__ import annotations

import itertools
import re
from datetime import datetime

from pbem.mail.inbound import InboundMail
from pbem.mail.tokens import game_address
from pbem.rules import engine as rules
from pbem.rules import table
from pbem.rules.core.commands import AskToObserve, DismissObserver
from pbem.rules.core.events import Event
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.store.unit_of_work import UnitOfWork

from .batch import Batch, letters_for, mail_source, open_game
from .letters import Letters
from .settings import Settings

_VERB = re.compile(r"^\s*(UN)?OBSERVE\b[ \t:]*(.*)$", re.IGNORECASE)


#: How many written lines may come before OBSERVE ("Hello, I would like to follow your game.").
_LINES_BEFORE = 10


def observer_verb(body: str) -> tuple[str, str] | None:
    """("OBSERVE", name) or ("UNOBSERVE", "") when a line near the top of ``body`` asks it."""
    written = (line for line in body.splitlines() if line.strip() and not line.strip().startswith(("#", ">")))
    for line in itertools.islice(written, _LINES_BEFORE):
        match = _VERB.match(line)
        if match:
            return ("UNOBSERVE", "") if match.group(1) else ("OBSERVE", match.group(2).strip())
    return None


def _known(uow: UnitOfWork, state: GameState, game_id: str, email: str) -> tuple[int, str] | None:
    """The sender's observer number and its standing (asked, watching), if he asked before and is not gone."""
    for row in reversed(uow.observers.by_email(game_id, email)):
        held = state.table.get(f"observer:{row.id}")
        if held:
            return row.id, held[1]
    return None


def handle_observer_mail(
    uow: UnitOfWork, settings: Settings, mail: InboundMail, game_id: str, now: datetime, key: str,
    asked: tuple[str, str] | None = None,
) -> str:
    """A request to watch, or to stop: recorded, the asker and the moderator told. Returns the outcome's detail.

    ``asked`` is `observer_verb` of the body when the caller read it already (before its transaction)."""
    verb, name = asked or observer_verb(mail.body or "") or ("", "")
    batch, game = open_game(uow, game_id, now)
    letters = letters_for(uow, settings, game, now)
    sender = mail.from_addr
    known = _known(uow, batch.state, game_id, sender)
    reply = game_address(game_id, settings.domain, settings.local_part)
    if uow.players.by_email(game_id, sender):
        letters.notice(sender, game_id, "You play in this game", [
            "You get every report of this game already, as a player; OBSERVE is for those who do not play.",
        ], f"observe-player:{key}")
        return "OBSERVE from a player: answered"
    if verb == "UNOBSERVE":
        if known is None:
            return "UNOBSERVE from an address that does not watch: not answered"
        dismiss(batch, letters, known[0], "asked to stop", reply)
        return f"observer {known[0]} stopped watching"
    if known is not None:
        status = "you watch it already" if known[1] == "watching" else "your request waits for the moderator"
        letters.notice(sender, game_id, f"You asked to watch {game_id}", [f"Nothing new: {status}."],
                       f"observe-again:{key}", reply_to=reply)
        return f"OBSERVE again from observer {known[0]}"
    name = " ".join((name or mail.from_name or sender.split("@", 1)[0]).split())[:60]
    number = uow.observers.add(game_id, name, sender, now)
    try:
        batch.decide(AskToObserve(number, name), actor="observer", source=mail_source(key))
    except Rejection as exc:
        letters.notice(sender, game_id, f"You asked to watch {game_id}", [f"Not now: {exc}."],
                       f"observe-refused:{key}", reply_to=reply)
        return f"OBSERVE refused: {exc}"
    letters.notice(sender, game_id, f"You asked to watch {game_id}", [
        f"Your request went to the moderator of {game_id}. If it is approved you will get each phase report "
        "as the public sees it (no player's hand or secret).",
        "Changed your mind? Send UNOBSERVE to this address.",
    ], f"observe-asked:{number}", reply_to=reply, first=True)
    letters.notice(game.moderator_email, game_id, f"{name} asks to watch", [
        f"{name} <{sender}> asks to watch the game as observer {number}.",
        f"Reply APPROVE {number} to let {name} watch, or DENY {number} <reason> to say no.",
    ], f"observe-moderator:{number}", reply_to=letters.moderator_reply_to(batch.state))
    return f"OBSERVE from {sender}: observer {number} asked, moderator told"


def dismiss(batch: Batch, letters: Letters, number: int, reason: str, reply_to: str) -> None:
    batch.decide(DismissObserver(number, reason), actor="observer", source="mail")
    tell_observers(batch, letters, [batch.events[-1]], reply_to)


def tell_observers(batch: Batch, letters: Letters, events: list[Event], reply_to: str) -> None:
    """Each observer admitted or turned away in ``events`` hears of it; the table hears who watches now."""
    for event in events:
        row = batch.uow.observers.get(event.data["observer"])
        if row is None:
            continue
        if event.type == "ObserverJoined":
            letters.notice(row.email, batch.state.game_id, f"You watch {batch.state.game_id}", [
                f"The moderator let you watch game {batch.state.game_id}. Each phase report comes to you as the "
                "public sees it: the board, what happened, never a player's hand or secret.",
                "To stop, send UNOBSERVE to this address.",
            ], f"observer-joined:{row.id}", reply_to=reply_to)
            text = rules.describe_event(batch.state, event, "observer") or ""
            letters.announce(batch.state, text, f"observer-joined:{batch.state.game_id}:{row.id}",
                             title=f"{row.name} watches the game")
        elif event.type == "ObserverLeft":
            why = f" ({event.data['reason']})" if event.data.get("reason") else ""
            letters.notice(row.email, batch.state.game_id, f"You do not watch {batch.state.game_id}", [
                f"You get no more reports of game {batch.state.game_id}{why}.",
                "To watch again, send OBSERVE to this address; the moderator decides.",
            ], f"observer-left:{row.id}:{batch.state.version}", reply_to=reply_to)


def watching(uow: UnitOfWork, state: GameState) -> list[tuple[str, str]]:
    """(name, address) of each observer who watches now."""
    out = []
    for number, name in sorted(table.observers(state).items()):
        row = uow.observers.get(number)
        if row is not None:
            out.append((name, row.email))
    return out
