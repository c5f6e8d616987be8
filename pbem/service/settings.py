"""Operator settings, from the environment with command-line overrides.

Everything has a default that works on one machine with no mail server: a
SQLite file and a local Maildir in the working directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    db_url: str = "sqlite:///pbem.sqlite"
    domain: str = "pbem.localhost"
    local_part: str = "pbem"
    relay_url: str | None = None
    maildir: Path = Path("mail")
    listen_host: str = "127.0.0.1"
    listen_port: int = 8025
    protocol: str = "smtp"
    deadline_hours: int = 48
    #: Hours before a deadline when each player still asked gets one reminder (0: none).
    reminder_hours: int = 12
    #: Deadlines a player may miss before the moderator is asked to replace him (0: never asked).
    missed_limit: int = 2
    max_message_bytes: int = 1_000_000
    #: Bounces of letters to one player before the moderator is told (each is recorded from the first).
    bounce_limit: int = 3

    @property
    def sender(self) -> str:
        return f"{self.local_part}@{self.domain}"

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        env = os.environ
        base = cls(
            db_url=env.get("PBEM_DATABASE_URL", cls.db_url),
            domain=env.get("PBEM_DOMAIN", cls.domain),
            relay_url=env.get("PBEM_SMTP_RELAY") or None,
            maildir=Path(env.get("PBEM_MAILDIR", str(cls.maildir))),
            listen_host=env.get("PBEM_LISTEN_HOST", cls.listen_host),
            listen_port=int(env.get("PBEM_LISTEN_PORT", cls.listen_port)),
            protocol=env.get("PBEM_PROTOCOL", cls.protocol),
            deadline_hours=int(env.get("PBEM_DEADLINE_HOURS", cls.deadline_hours)),
            bounce_limit=int(env.get("PBEM_BOUNCE_LIMIT", cls.bounce_limit)),
            reminder_hours=int(env.get("PBEM_REMINDER_HOURS", cls.reminder_hours)),
            missed_limit=int(env.get("PBEM_MISSED_LIMIT", cls.missed_limit)),
        )
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})
