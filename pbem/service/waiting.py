"""Letters that wait in the outbox a while for what follows them, for the same reader (issue 31).

Two kinds wait `Settings.gather_minutes`:

* ``news``: a report to a player who is asked nothing now. The next letter
  written to him (a prompt, an answer to his orders, another report) joins
  it: a prompt or an answer takes it along at once, another report is added
  to it and it keeps its time.
* ``update``: a prompt brought up to date by what others did (a trade offer
  made to him), written over by each later update (`Letters.new_prompts`).

A letter found waiting is joined only while it is far from due: once its
time is near, the outbox's sender may be taking it (its lease), and a part
written into it then could be sent without the rest, so a new letter is
begun instead. The same holds for a digest released at the end of its turn.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Row

from pbem.store.outbox import Outbox

NEWS = "news"
UPDATE = "update"


def joinable(row: Row, now: datetime, lease_seconds: int) -> bool:
    """Whether a waiting letter is far enough from due that no sender can hold it now."""
    due = row.next_attempt_at
    if due.tzinfo is None and now.tzinfo is not None:
        now = now.replace(tzinfo=None)
    return row.sent_at is None and row.attempts == 0 and due > now + timedelta(seconds=2 * lease_seconds + 1)


class Waiting:
    """A game's letters waiting in the outbox, by kind and reader, read once a unit of work."""

    def __init__(self, outbox: Outbox, game_id: str, now: datetime, lease_seconds: int) -> None:
        self.outbox, self.game_id, self.now, self.lease = outbox, game_id, now, lease_seconds
        self._by_kind: dict[str, dict[str, Row]] = {}

    def of(self, kind: str) -> dict[str, Row]:
        """Each reader's waiting letter of ``kind`` that can still be joined, by address."""
        if kind not in self._by_kind:
            rows = self.outbox.unsent_of_kind(self.game_id, kind)
            self._by_kind[kind] = {r.recipient: r for r in rows if joinable(r, self.now, self.lease)}
        return self._by_kind[kind]

    def remember(self, kind: str, recipient: str, message_id: str) -> None:
        row = self.outbox.by_message_id(message_id)
        if row is not None:
            self.of(kind)[recipient] = row

    def forget(self, kind: str, recipient: str) -> None:
        self.of(kind).pop(recipient, None)
