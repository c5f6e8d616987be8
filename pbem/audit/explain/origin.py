"""Who started an event's batch, and with what: the order line as written, the mail that carried it, when.

"I didn't mean to move there" is settled by the player's own line, not by
the canonical order the engine made of it: a slip the parser read one way,
a sign-off read as an order. So an explanation names the input's sender
(player and nation, the moderator, the clock), and to those who may read it
the line as he wrote it, its line in the mail, the mail's Subject and Date
as his client wrote them, the ``source`` digest a moderator matches against
the mail he holds, and when the server recorded it.

Where it is read from: the service writes it into the input event's metadata
at append time (`ORDER_KEY`, a note outside what verify re-derives); a log
from before that carries none, and the service or command line may pass what
it found in its inbox instead (``found``, by version). This module reads
recorded events only: the archive and an imported export explain with it,
where there is no inbox.

A player's raw line can say what the told order does not (a trade offer's
terms, a message to another player), so the line and the mail are shown only
to the moderator, an auditor after the end and the player who sent it
(`pbem.audit.disclosure.reads_origin`); everyone else reads the sender and
the time, which every export already shows (``actor``, ``recorded_at``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pbem.audit.disclosure import ORIGIN_METADATA, reads_origin, sender_of
from pbem.rules.core.state import GameState
from pbem.store.events import RecordedEvent

#: The metadata key of an input's origin: ``line``, ``line_number``, ``quoted`` (written inside a quote of our
#: letter), the mail's ``subject`` and ``date``; an ``OrdersQueued`` holds ``lines`` (each with the ``order`` it became).
ORDER_KEY = ORIGIN_METADATA[0]
#: The metadata key of an order played from those kept early: the kept order's text, to find the mail it came in.
KEPT_KEY = ORIGIN_METADATA[1]


def sender(actor: str, state: GameState) -> str:
    """Who ``actor`` (the metadata's ``actor``) is, in words: a player by name and nation, or what else it is."""
    if actor.startswith("player:") and actor[7:].isdigit():
        try:
            player = state.player(int(actor[7:]))
        except KeyError:
            return f"player {actor[7:]}"
        return f"{player.name} ({player.nation})" if player.nation else player.name
    return {"moderator": "the moderator", "clock": "the clock (the server's schedule)", "observer": "an observer",
            "mail": "the mail system (a bounce)", "": "an unknown sender"}.get(actor, actor)


def _kept_from(recorded: Sequence[RecordedEvent], start: int, actor: str, text: str) -> int | None:
    """The version of the latest ``OrdersQueued`` of ``actor`` before ``start`` that kept ``text``.

    Read from the payload (the kept orders as the engine wrote them), so an
    older log finds it too; the latest one, since a player who sends the same
    order twice played the later one (the earlier was taken up before). Orders
    kept again because they still had to wait (source ``kept``) are passed
    over: the mail they came in is that of the first keeping.
    """
    for rec in reversed(recorded[: start - 1]):
        if (rec.type == "OrdersQueued" and rec.metadata.get("actor") == actor and rec.metadata.get("source") != "kept"
                and text in rec.payload.get("lines", ())):
            return rec.version
    return None


def _line(line: Mapping[str, Any], kept: bool = False) -> str:
    where = "in the quote of our letter, line" if line.get("quoted") else "line"
    number = f", {where} {line['line_number']}" if line.get("line_number") else ""
    read = f" (kept as {line.get('order', '?')})" if kept else ""
    return f"  As written{number}: \"{line.get('line', '')}\"{read}"


def _details(note: Mapping[str, Any], text: str | None) -> list[str]:
    """The line (or, for the kept orders themselves, every line) of ``note``, and the mail that carried it.

    ``text`` is the kept order an event played: of a note of kept orders only
    the line that became it is shown."""
    if "lines" not in note:
        out = [_line(note)] if "line" in note else []
    elif text is None:
        out = [_line(line, kept=True) for line in note["lines"]]
    else:
        out = [_line(line) for line in note["lines"] if line.get("order") == text][:1]
    if "subject" in note or "date" in note:
        out.append(f"  The mail: Subject \"{note.get('subject', '')}\", Date \"{note.get('date', '')}\"")
    return out


def told_origin(
    recorded: Sequence[RecordedEvent], start: int, state: GameState, viewer: str, finished: bool,
    found: Mapping[int, Mapping[str, Any]],
) -> list[str]:
    """The lines under "Started by" naming where the input at ``start`` came from, as ``viewer`` may read them.

    ``state`` is a state in which the sender sits in his seat (the names and
    nations of the players); ``found`` the origins the caller looked up for
    versions whose metadata holds none.
    """
    meta = recorded[start - 1].metadata
    actor = str(meta.get("actor", ""))
    source = str(meta.get("source", "?"))
    full = reads_origin(viewer, sender_of(actor, state), finished)
    who = f"  By {sender(actor, state)}"
    if full:
        who += f" (actor {actor or '?'}, source {source})"
    lines = [f"{who}, recorded at {meta.get('recorded_at', '?')}."]
    if not full:
        return lines
    note: Mapping[str, Any] | None = meta.get(ORDER_KEY) or found.get(start)
    text = meta.get(KEPT_KEY)
    kept = _kept_from(recorded, start, actor, text) if source == "kept" and isinstance(text, str) else None
    if kept is not None:
        first = recorded[kept - 1].metadata
        lines.append(f"  Played from the orders kept at version {kept} (sent before the turn came), recorded at "
                     f"{first.get('recorded_at', '?')}, source {first.get('source', '?')}.")
        note = first.get(ORDER_KEY) or found.get(kept)
    if note:
        lines += _details(note, text if isinstance(text, str) else None)
    elif source.startswith("mail:"):
        lines.append("  The line as written is not in this log (it was recorded before lines were kept).")
    return lines
