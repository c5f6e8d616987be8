"""Outbound delivery: hand finished MIME bytes to a relay or a Maildir.

A transport delivers one message or raises `DeliveryError`; `temporary`
tells the outbox whether to retry later (connection trouble, 4xx, bad relay
credentials) or to give up on this mail (5xx for the message or recipient).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import ssl
import time
from dataclasses import dataclass, field
from email.parser import BytesHeaderParser
from pathlib import Path
from typing import Protocol, runtime_checkable
from urllib.parse import unquote, urlsplit

import aiosmtplib

from pbem.spool import sync_folder

__all__ = [
    "DeliveryError",
    "MaildirDelivery",
    "MemoryTransport",
    "SmtpRelay",
    "Transport",
    "transport_from_config",
]


class DeliveryError(Exception):
    """Delivery failed.  `temporary`: retry later; otherwise give up on this mail.

    `local`: the fault is on this machine (the Maildir cannot be written: a
    full disk, a read-only mount), not the letter's nor the recipient's; the
    outbox retries such a letter every minute and never gives up on it."""

    def __init__(self, temporary: bool, reason: str, *, local: bool = False) -> None:
        super().__init__(reason)
        self.temporary = temporary
        self.reason = reason
        self.local = local

    def __repr__(self) -> str:
        return f"DeliveryError(temporary={self.temporary!r}, reason={self.reason!r}, local={self.local!r})"


@runtime_checkable
class Transport(Protocol):
    async def deliver(self, sender: str, recipients: list[str], raw: bytes) -> None:
        ...


# --------------------------------------------------------------------------
# SMTP relay

def _is_temporary_code(code: int | None) -> bool:
    # 4xx are transient by definition; anything that is not a 5xx (a garbled
    # or missing reply) is treated as transient too.
    return code is None or not 500 <= code <= 599


class SmtpRelay:
    """Deliver through an SMTP relay (Postfix, a smarthost, a provider)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        starttls: bool = False,
        use_tls: bool = False,
        username: str | None = None,
        password: str | None = None,
        timeout: float = 30,
        tls_context: ssl.SSLContext | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.starttls = starttls
        self.use_tls = use_tls
        self.username = username
        self.password = password
        self.timeout = timeout
        self.tls_context = tls_context

    def __repr__(self) -> str:  # never show the password
        scheme = "smtps" if self.use_tls else ("smtp+starttls" if self.starttls else "smtp")
        user = f"{self.username}@" if self.username else ""
        return f"SmtpRelay({scheme}://{user}{self.host}:{self.port})"

    async def deliver(self, sender: str, recipients: list[str], raw: bytes) -> None:
        if not recipients:
            raise DeliveryError(False, "no recipients")
        try:
            errors, _ = await aiosmtplib.send(
                raw,
                sender=sender,
                recipients=list(recipients),
                hostname=self.host,
                port=self.port,
                username=self.username,
                password=self.password,
                use_tls=self.use_tls,
                start_tls=self.starttls if not self.use_tls else False,
                timeout=self.timeout,
                tls_context=self.tls_context,
            )
        except aiosmtplib.SMTPRecipientsRefused as exc:
            codes = [r.code for r in exc.recipients]
            temporary = any(_is_temporary_code(c) for c in codes)
            detail = "; ".join(f"{r.recipient}: {r.code} {r.message}" for r in exc.recipients)
            raise DeliveryError(temporary, f"all recipients refused: {detail}") from exc
        except aiosmtplib.SMTPAuthenticationError as exc:
            # A configuration problem of ours, not of the mail: retry later.
            raise DeliveryError(True, f"relay refused our credentials: {exc.code} {exc.message}") from exc
        except (aiosmtplib.SMTPConnectResponseError, aiosmtplib.SMTPHeloError) as exc:
            # The relay refused the session itself: not this mail's fault.
            raise DeliveryError(True, f"relay refused the session: {exc.code} {exc.message}") from exc
        except aiosmtplib.SMTPResponseException as exc:
            raise DeliveryError(_is_temporary_code(exc.code), f"relay answered {exc.code} {exc.message}") from exc
        except (aiosmtplib.SMTPException, OSError, asyncio.TimeoutError) as exc:
            # Connection refused/reset, timeouts, TLS trouble, STARTTLS unsupported...
            raise DeliveryError(True, f"cannot reach relay {self.host}:{self.port}: {exc}") from exc
        if errors:
            codes = [resp.code for resp in errors.values()]
            detail = "; ".join(f"{rcpt}: {resp.code} {resp.message}" for rcpt, resp in errors.items())
            raise DeliveryError(
                any(_is_temporary_code(c) for c in codes),
                f"some recipients refused (the others got the message): {detail}",
            )


# --------------------------------------------------------------------------
# Maildir

_UNSAFE = re.compile(r"[^a-z0-9@._+=-]")


def _folder_name(recipient: str) -> str:
    name = _UNSAFE.sub("_", recipient.strip().strip("<>").lower())
    name = name.lstrip(".")
    if not name:
        raise DeliveryError(False, f"invalid recipient {recipient!r}")
    return name


def _letter_key(raw: bytes) -> str:
    """A file-name-safe key for the letter: a digest of its Message-ID (of the whole text if it has none)."""
    headers = BytesHeaderParser().parsebytes(raw)
    message_id = str(headers.get("Message-ID", "")).strip()
    return hashlib.sha256(message_id.encode() if message_id else raw).hexdigest()[:32]


def _holds(folder: Path, letter: str, name: str = "") -> bool:
    """Whether the letter is in the Maildir, read (cur/) or not (new/): a scan, for the rare cases only.

    With ``name`` (the file name its first attempt chose) only cur/ is looked at, for a file of that name with
    or without the flags a mail client adds when it moves a letter there (``<name>:2,S``)."""
    if name:
        return any(entry.name == name or entry.name.startswith(name + ":") for entry in os.scandir(folder / "cur"))
    mark = f".{letter}."
    return any(mark in entry.name for sub in ("new", "cur") for entry in os.scandir(folder / sub))


def _begun(records: Path, letter: str) -> str | None:
    """The name a letter was given when its delivery began ("" if not known); None if it never began."""
    try:
        return (records / letter).read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None


#: In each recipient's Maildir, beside tmp/, new/ and cur/: one small file per letter delivered, named after the
#: letter's key and holding the file name it was given in new/. (No dot in front: Maildir++ readers take a folder
#: whose name starts with one for a mail folder; they ignore any other.)
DELIVERED = "pbem-delivered"


class MaildirDelivery:
    """Store each message in `root/<recipient address>/` (a Maildir).

    The embedded default: no mail server is needed; any MUA or a
    `pbem` command can read the folders.

    Delivery is idempotent: a letter's file is named after its Message-ID
    (every letter of the outbox has its own), so a letter delivered again,
    because the sender died between writing it and marking it sent, is found
    already there and not written twice. It is written under `tmp/` with a
    name of its own, flushed to disk, then moved into `new/` (the Maildir
    way, so a reader never sees half a letter); a crash mid-write leaves that
    one file, which the next attempt overwrites rather than adding another. A
    write that fails (a full disk) removes its draft; the letter stays in the
    outbox and is delivered on a later attempt.

    Finding whether a letter is already there must not read the whole
    folder: a player who keeps his mail has thousands of letters, and every
    delivery listed them all. Before a letter is moved into `new/`, a record
    named after its key, holding the name it gets there, is made durable in
    the Maildir's `pbem-delivered/`: a first delivery finds no record (one
    failed open), a second finds the record, then the file by its name in
    `new/`. Only when that file has left `new/` (a mail client moved it to
    `cur/`, adding flags to its name) or never reached it (a crash between
    the record and the move) is `cur/` listed, and that happens only to a
    letter delivered again. A recipient's folder from before the records is
    listed once, for its first letter since.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"MaildirDelivery({str(self.root)!r})"

    def folder(self, recipient: str) -> Path:
        return self.root / _folder_name(recipient)

    def _store(self, recipients: list[str], raw: bytes) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        letter = _letter_key(raw)
        for recipient in recipients:
            folder = self.folder(recipient)
            for sub in ("tmp", "new", "cur"):
                (folder / sub).mkdir(parents=True, exist_ok=True)
            records = folder / DELIVERED
            begun = _begun(records, letter)
            if begun is None:
                if not records.is_dir() and _holds(folder, letter):  # a folder from before the records
                    continue
            elif begun and (folder / "new" / begun).exists() or _holds(folder, letter, begun):
                continue
            name = begun or f"{time.time_ns()}.{letter}.pbem"  # time first: names sort in the order letters came
            draft = folder / "tmp" / f"{letter}.pbem"
            try:
                with open(draft, "wb") as out:
                    out.write(raw)
                    out.flush()
                    os.fsync(out.fileno())
                if not begun:
                    # The record is on disk before the letter can be: a crash never leaves a letter in new/ that
                    # the next attempt would not find. (Its text need not be: an empty record means "look in full".)
                    records.mkdir(parents=True, exist_ok=True)
                    (records / letter).write_text(name, encoding="ascii")
                    sync_folder(records)
            except OSError:  # a full disk: take the half-written draft away, so it holds no space and no reader sees it
                draft.unlink(missing_ok=True)
                raise
            os.replace(draft, folder / "new" / name)
            sync_folder(folder / "new")

    async def deliver(self, sender: str, recipients: list[str], raw: bytes) -> None:
        if not recipients:
            raise DeliveryError(False, "no recipients")
        for recipient in recipients:
            _folder_name(recipient)  # validate all before writing any
        try:
            await asyncio.to_thread(self._store, list(recipients), raw)
        except OSError as exc:
            raise DeliveryError(True, f"cannot write to {self.root}: {exc}", local=True) from exc


# --------------------------------------------------------------------------
# in memory (for tests of the layers above)

@dataclass
class MemoryTransport:
    """Keeps delivered mail in `sent`; `fail_next` queues errors to raise."""

    sent: list[tuple[str, list[str], bytes]] = field(default_factory=list)
    fail_next: list[DeliveryError] = field(default_factory=list)

    async def deliver(self, sender: str, recipients: list[str], raw: bytes) -> None:
        if self.fail_next:
            raise self.fail_next.pop(0)
        self.sent.append((sender, list(recipients), bytes(raw)))


# --------------------------------------------------------------------------
# configuration

_DEFAULT_PORTS = {"smtp": 25, "smtp+starttls": 587, "smtps": 465}


def transport_from_config(relay_url: str | None, maildir: Path) -> Transport:
    """The transport named by `relay_url`, or Maildir delivery under `maildir`.

    relay_url forms:
      smtp://host[:port]                       plain SMTP (port 25)
      smtp+starttls://user:pass@host[:port]    STARTTLS required (port 587)
      smtps://user:pass@host[:port]            implicit TLS (port 465)
      maildir:///absolute/path                 Maildir delivery at that path
    None or "" means MaildirDelivery(maildir).  User and password are
    percent-decoded.  A `?timeout=N` query sets the SMTP timeout in seconds.
    """
    if not relay_url:
        return MaildirDelivery(Path(maildir))
    parts = urlsplit(relay_url.strip())
    scheme = parts.scheme.lower()
    if scheme == "maildir":
        path = unquote(parts.netloc + parts.path)
        if not path:
            raise ValueError(f"maildir URL needs a path: {relay_url!r}")
        return MaildirDelivery(Path(path))
    if scheme not in _DEFAULT_PORTS:
        raise ValueError(
            f"unsupported relay URL scheme {parts.scheme!r}; use smtp://, smtp+starttls://, smtps:// or maildir://"
        )
    if not parts.hostname:
        raise ValueError(f"relay URL has no host: {relay_url!r}")
    try:
        port = parts.port or _DEFAULT_PORTS[scheme]
    except ValueError as exc:
        raise ValueError(f"bad port in relay URL: {exc}") from None
    timeout = 30.0
    for item in filter(None, parts.query.split("&")):
        name, _, value = item.partition("=")
        if name == "timeout":
            timeout = float(value)
        else:
            raise ValueError(f"unknown relay URL parameter {name!r}")
    return SmtpRelay(
        parts.hostname,
        port,
        starttls=scheme == "smtp+starttls",
        use_tls=scheme == "smtps",
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password is not None else None,
        timeout=timeout,
    )
