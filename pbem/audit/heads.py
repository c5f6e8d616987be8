"""A chain head kept from a letter, looked up in the log (`pbem verify --head`, `VERIFY <head>` by mail).

Every letter ends with the game's chain head as it stood when the letter
was written, its first 16 hex digits: enough to tell one event from every
other, short enough to copy from a phone. A reader who kept it can later
ask whether the log still holds it. If it does, what he was told is still
part of the record; if no event's hash begins so, the log he was shown
has been cut short or rewritten since, which is what the head is kept for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from pbem.store.events import RecordedEvent

#: Hex digits of the chain head a letter shows ("chain head c982c37a85d6770a"): fewer is no proof.
SHOWN_HEAD_DIGITS = 16
_HEX = frozenset("0123456789abcdef")


def is_head(text: str) -> bool:
    """Whether ``text`` is written as a chain head: 16 to 64 hexadecimal digits."""
    kept = text.strip().lower()
    return SHOWN_HEAD_DIGITS <= len(kept) <= 64 and all(c in _HEX for c in kept)


@dataclass(frozen=True)
class Found:
    """Where a kept head is in the log: ``version`` (0 when no event has it), or several (ambiguous)."""

    kept: str
    versions: tuple[int, ...]
    head: int  # the log's current version

    @property
    def version(self) -> int:
        return self.versions[0] if len(self.versions) == 1 else 0

    def text(self, shown: bool | None = None) -> str:
        """One sentence: held (and how far the log has gone since), not held, or too short to tell.

        A head no event has is evidence only if a letter of the game showed it (``shown``, when the
        letters sent can be searched): otherwise it may be a slip in copying it, and is said to be unknown.
        """
        if not self.versions:
            missing = f"head NOT FOUND: no event of this log has a hash beginning {self.kept}"
            if shown:
                return f"{missing}, though a letter of this game showed it: the log was cut short or rewritten since"
            if shown is False:
                return f"{missing}, and no letter of this game showed it: check that it was copied whole"
            return (f"{missing}. Check that it was copied whole; if it was, the log was cut short or rewritten after "
                    "the letter that showed it")
        if len(self.versions) > 1:
            return f"{self.kept} begins the hash of versions {', '.join(map(str, self.versions))}: give more of it"
        after = self.head - self.version
        return (f"head ok: the hash you kept is version {self.version}; "
                f"{after} event{'s' if after != 1 else ''} were recorded after it")


def find_head(recorded: Sequence[RecordedEvent], kept: str) -> Found:
    """The versions whose hash begins with ``kept`` (lower-cased; `is_head` says whether it may be asked)."""
    prefix = kept.strip().lower()
    return Found(prefix, tuple(r.version for r in recorded if r.hash.startswith(prefix)), len(recorded))


def shown_in(raw: bytes, kept: str) -> bool:
    """Whether a letter as sent shows the head ``kept`` (a quoted-printable soft break undone first)."""
    return f"chain head {kept[:SHOWN_HEAD_DIGITS]}".encode() in raw.replace(b"=\r\n", b"")
