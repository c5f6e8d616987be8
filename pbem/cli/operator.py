"""Commands an operator runs: the server, mail in by pipe, the outbox, the clock, the queue, the settings."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

from .context import Context, fail, now, pass_ctx, transport
from .errors import explain
from .output import say, say_lines

#: sysexits.h: a temporary failure; an MTA's pipe transport (Postfix, Exim) defers the message and tries again.
EX_TEMPFAIL = 75


@click.command()
@click.option("--from", "mail_from", default=None, help="Envelope sender (as the MTA passes it; empty for the null return path of a bounce).")
@click.option("--to", "rcpt", multiple=True, help="Envelope recipient(s).")
@pass_ctx
def ingest(ctx: Context, mail_from: str, rcpt: tuple[str, ...]) -> None:
    """Take one RFC 5322 message on stdin (an MTA pipe transport) and handle it as the server would."""
    from pbem.service.inbound import ingest as ingest_mail

    raw = sys.stdin.buffer.read()
    envelope_from = "" if mail_from is None else (mail_from.strip() or "<>")
    try:
        outcome = ingest_mail(ctx.db, ctx.settings, raw, envelope_from, list(rcpt), now())
    except Exception as error:  # noqa: BLE001 - the MTA must keep the message and try again, never bounce it
        known = explain(error, ctx.settings.db_url)
        say(f"pbem: {known[0] if known else f'{type(error).__name__}: {error}'} (the MTA keeps it and retries)",
            err=True)
        sys.exit(EX_TEMPFAIL)
    say(f"{outcome.status}: {outcome.detail}")
    _take_in_the_spool(ctx)


def _take_in_the_spool(ctx: Context) -> None:
    """Messages a server that is gone left in the spool (pbem/spool.py): handled now, rather than waiting for it."""
    from pbem.service.spooled import handle_spooled
    from pbem.spool import spool_of

    spool = spool_of(ctx.settings.db_url)
    if spool is None or not spool.folder.is_dir() or spool.server_running():
        return
    try:
        outcomes = handle_spooled(ctx.db, ctx.settings, spool, now())
    except Exception as error:  # noqa: BLE001 - this message is handled; the spooled ones stay for the next time
        say(f"pbem: spooled messages left for later: {error}", err=True)
        return
    if outcomes:
        say(f"also handled {len(outcomes)} message(s) a stopped server left in {spool.folder}")


def _listen(text: str, flag: str = "--listen") -> tuple[str, int]:
    """HOST:PORT (or :PORT, or PORT) for `serve --listen` and `--http`, checked: a port is 0 to 65535."""
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        fail(f"{flag} takes HOST:PORT with a port from 0 to 65535, not {text!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


@click.command()
@click.option("--listen", default=None, help="HOST:PORT for inbound mail (default 127.0.0.1:8025).")
@click.option("--lmtp", is_flag=True, help="Speak LMTP instead of SMTP (behind Postfix).")
@click.option("--relay", default=None, help="smtp://host:port or smtp+starttls://user:pass@host:587 for outgoing mail.")
@click.option("--maildir", default=None, type=click.Path(path_type=Path), help="Deliver outgoing mail here when no relay is set.")
@click.option("--http", "http", default=None, help="HOST:PORT where the games' pages are served too (docs/web.md).")
@pass_ctx
def serve(ctx: Context, listen: str | None, lmtp: bool, relay: str | None, maildir: Path | None,
          http: str | None) -> None:
    """Run the inbound mail server, the outbox sender and the deadline clock (and the games' pages)."""
    from dataclasses import replace

    from pbem.service.server import serve_forever
    from pbem.service.settings import load_settings
    from pbem.service.telemetry import log_to_journal_or_stderr
    from pbem.web.app import pages_beside

    overrides: dict[str, object] = {"relay_url": relay, "maildir": maildir, "protocol": "lmtp" if lmtp else None}
    if listen:
        overrides["listen_host"], overrides["listen_port"] = _listen(listen)
    if http:
        host, port = _listen(http, "--http")
        overrides["http_listen"] = f"{host}:{port}"
    settings = replace(ctx.settings, **{k: v for k, v in overrides.items() if v is not None and k != "relay_url"})
    if relay is not None:
        settings = replace(settings, relay_url=load_settings(None, {}, {"relay_url": relay})[0].relay_url)
    transport(ctx)  # a relay URL it cannot use, or a Maildir it cannot make, fails now, before listening
    log_to_journal_or_stderr()
    try:
        asyncio.run(serve_forever(ctx.db, settings, pages_beside(settings) if settings.http_listen else None))
    except KeyboardInterrupt:
        pass


@click.command("flush")
@pass_ctx
def flush(ctx: Context) -> None:
    """Deliver every letter now due in the outbox (for cron set-ups without `serve`); a letter that fails waits."""
    from pbem.service.outbound import flush_all

    sent = asyncio.run(flush_all(ctx.db, transport(ctx), ctx.settings.sender, now, settings=ctx.settings))
    say(f"delivered {sent} letters")


@click.command()
@pass_ctx
def tick(ctx: Context) -> None:
    """Apply defaults where deadlines have passed, queue due reminders, then deliver the outbox (for cron)."""
    from pbem.service.deadlines import pass_deadlines
    from pbem.service.outbound import flush_all
    from pbem.service.reminders import send_reminders

    moved = pass_deadlines(ctx.db, ctx.settings, now=now())
    reminded = send_reminders(ctx.db, ctx.settings, now=now())
    sent = asyncio.run(flush_all(ctx.db, transport(ctx), ctx.settings.sender, now, settings=ctx.settings))
    say(f"deadlines passed in {len(moved)} games; {reminded} reminders; delivered {sent} letters")


@click.group(invoke_without_command=True)
@click.pass_context
def queue(click_ctx: click.Context) -> None:
    """Mail that waits: inbound messages that failed or wait, letters not yet delivered (retry or drop one)."""
    if click_ctx.invoked_subcommand is None:
        from pbem.service.queue import waiting

        rows = waiting(click_ctx.obj.db)
        for row in rows:
            say(row.line())
        say(f"{len(rows)} waiting" if rows else "nothing waits")
        if any(row.state == "failed" for row in rows):  # the one state pbem does not leave by itself
            say("a failed message waits for you: `pbem queue retry in:<id>` once its cause is fixed, "
                "or `pbem queue drop in:<id>`")


@queue.command("retry")
@click.argument("keys", nargs=-1, required=True)
@pass_ctx
def queue_retry(ctx: Context, keys: tuple[str, ...]) -> None:
    """Handle in:<id> again, or send out:<id> at the next flush."""
    from pbem.service.queue import retry

    for key in keys:
        say(retry(ctx.db, ctx.settings, key, now()))


@queue.command("drop")
@click.argument("keys", nargs=-1, required=True)
@pass_ctx
def queue_drop(ctx: Context, keys: tuple[str, ...]) -> None:
    """Never handle in:<id>, never send out:<id> (both stay on record)."""
    from pbem.service.queue import drop

    for key in keys:
        say(drop(ctx.db, key, now()))


@click.group()
def config() -> None:
    """The settings: what is in force, and a documented pbem.toml."""


@config.command("check")
@pass_ctx
def config_check(ctx: Context) -> None:
    """Print every setting in force, where it came from, passwords masked; open the database to prove it works."""
    from pbem.service.settings import describe

    for line in describe(ctx.settings, ctx.sources):
        say(line)
    ctx.db  # noqa: B018 - opening it (and upgrading the schema) is the check
    say("database: ok")


@config.command("example")
def config_example() -> None:
    """Print a pbem.toml with every setting, its default and what it means."""
    from pbem.service.settings import example

    say_lines(example().splitlines())
