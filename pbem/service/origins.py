"""Where each order came from, kept with it: the line as the player wrote it and the mail that carried it.

A dispute ("I didn't mean to move there") turns on the player's own line, not
on the canonical order the engine made of it, and on which mail it came in.
`pbem explain` and EXPLAIN by mail show it (`pbem.audit.explain.origin`).

Two sources, in this order:

* the note written with each order at append time (`Said`): the line, its
  line number in the mail, the mail's Subject and Date as written. It lives in
  the event's metadata, outside what verify re-derives, and travels with the
  log to the archive and to an export made for the moderator, where no inbox
  exists; any other export withholds that metadata already
  (`pbem.audit.disclosure.metadata_public`).
* for an order recorded before notes were written, the inbox (`InboxOrigins`):
  its dedupe key names the Message-ID and the order's index among the lines
  read, and the stored message is read again the way it was read then.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pbem.audit.explain import Explanation, explain
from pbem.audit.explain.origin import ORDER_KEY
from pbem.mail.inbound import MailRejected, parse_message
from pbem.orders.language import Actor, OrderLine, Written, parse_orders, written_lines
from pbem.rules.branches import fold_log
from pbem.rules.core.events import Event
from pbem.rules.engine import command_for, is_input
from pbem.store.events import RecordedEvent
from pbem.store.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class Letter:
    """The headers of the mail that carried orders, as the sender's client wrote them (what he will quote back)."""

    subject: str
    date: str


@dataclass(frozen=True)
class Said:
    """The lines of one message as written, to note with each order made of them.

    ``written`` holds the lines the player wrote, ``quoted`` those he wrote
    inside a quote of our letter; an `OrderLine` keeps only the line with its
    spaces evened out, so the line as written is looked up by its number.
    """

    written: Written
    quoted: Written
    letter: Letter | None = None

    @classmethod
    def of(cls, text: str | Written, quoted_orders: Sequence[str], letter: Letter | None) -> Said:
        written = text if isinstance(text, Written) else written_lines(text)
        return cls(written, written_lines("\n".join(quoted_orders)), letter)

    def _line(self, line: OrderLine, quoted: bool) -> dict[str, Any]:
        found = (self.quoted if quoted else self.written).lines
        raw = next((text for number, text, _ in found if number == line.number), line.text)
        return {"line": raw, "line_number": line.number, **({"quoted": True} if quoted else {})}

    def _mail(self) -> dict[str, str]:
        return {"subject": self.letter.subject, "date": self.letter.date} if self.letter is not None else {}

    def note(self, line: OrderLine, quoted: bool = False) -> dict[str, Any]:
        """The metadata note of the order made of ``line``."""
        return {ORDER_KEY: {**self._line(line, quoted), **self._mail()}}

    def kept_note(self, lines: Sequence[OrderLine]) -> dict[str, Any]:
        """The metadata note of orders kept for the player's turn: each line with the order it was kept as."""
        kept = [{**self._line(line, False), "order": line.canonical} for line in lines]
        return {ORDER_KEY: {"lines": kept, **self._mail()}}


class InboxOrigins(Mapping[int, Mapping[str, Any]]):
    """Where the inputs of an older log came from, read from the inbox on demand (the `found` of `explain`).

    Only the versions an explanation asks for are read: each costs a fold of
    the log up to it and a second reading of one stored message. The line is
    given only when reading the message again makes the very order the log
    recorded; otherwise only the mail's headers are.
    """

    def __init__(self, uow: UnitOfWork, game_id: str, recorded: Sequence[RecordedEvent]):
        self._uow, self._game_id, self._recorded = uow, game_id, recorded
        self._found: dict[int, Mapping[str, Any] | None] = {}

    def __getitem__(self, version: int) -> Mapping[str, Any]:
        if version not in self._found:
            self._found[version] = self._look_up(version)
        found = self._found[version]
        if found is None:
            raise KeyError(version)
        return found

    def __bool__(self) -> bool:
        """Always true, whether or not anything is found: truth must not read every message of the game."""
        return True

    def __iter__(self) -> Iterator[int]:
        return iter(v for v in range(1, len(self._recorded) + 1) if v in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, version: object) -> bool:
        try:
            self[version]  # type: ignore[index]
        except (KeyError, TypeError):
            return False
        return True

    def _look_up(self, version: int) -> Mapping[str, Any] | None:
        if not 1 <= version <= len(self._recorded):
            return None
        rec = self._recorded[version - 1]
        key, _, index = (rec.dedupe_key or "").rpartition("#")
        if ORDER_KEY in rec.metadata or not key or not str(rec.metadata.get("source", "")).startswith("mail:"):
            return None
        row = self._uow.inbox.by_message_id(key)
        if row is None:
            return None
        try:
            mail = parse_message(bytes(row.raw))
        except MailRejected:
            return None
        found: dict[str, Any] = {"subject": mail.subject, "date": mail.date}
        if index.isdigit():
            line = self._line(rec, version, mail.body, int(index))
            if line is not None:
                raw = next((text for number, text, _ in written_lines(mail.body).lines if number == line.number), line.text)
                found.update(line=raw, line_number=line.number)
        return found

    def _line(self, rec: RecordedEvent, version: int, body: str, index: int) -> OrderLine | None:
        """The line of ``body`` that made the order at ``version``: the ``index``-th read, if it makes that order."""
        events = [Event.from_payload(r.type, r.payload) for r in self._recorded[:version]]
        if not is_input(events[-1]):
            return None
        before = fold_log(self._game_id, events[:-1], state_at=lambda target: fold_log(self._game_id, events[:target]))
        actor = str(rec.metadata.get("actor", ""))
        who = Actor(player_id=int(actor[7:])) if actor.startswith("player:") and actor[7:].isdigit() \
            else Actor(moderator=actor == "moderator")
        try:
            wanted = command_for(before, events[-1])
        except (ValueError, KeyError):
            return None
        lines = parse_orders(body, before, who).lines
        same = [line for line in lines if line.command == wanted]
        if index < len(lines) and lines[index].command == wanted:
            return lines[index]
        return same[0] if same else None


def explained(uow: UnitOfWork, game_id: str, recorded: Sequence[RecordedEvent], version: int, viewer: str) -> Explanation:
    """`explain` with the inbox at hand: an input of an older log is named by the mail it came in, when kept.

    The one way the service (EXPLAIN by mail) and the command line explain a
    stored game; an export or the archive explains from the log alone."""
    return explain(game_id, recorded, version, viewer, found=InboxOrigins(uow, game_id, recorded))
