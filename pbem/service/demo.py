"""`pbem demo`: a whole setup played by mail, through real SMTP on loopback.

The demo starts the same PostOffice `pbem serve` runs (inbound SMTP on an
ephemeral loopback port, outbox delivered into a local Maildir per player),
creates a game, and then acts as each player's mail client: it reads the
newest prompt in the player's Maildir and replies to it the way a person
would, writing orders above the quoted prompt, sent with smtplib to the
server: the prompt's suggested orders unchanged, or (``bots``) the orders a
bot of `bots.py` chooses for the prompt the player was sent. It stops after
setup, after ``turns`` turns, or when the game ends (for instance at the
turn limit of the option ``last-turn``, §34).
"""

from __future__ import annotations

import asyncio
import email
import mailbox
import random
import shutil
import smtplib
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from email.message import EmailMessage
from email.policy import default as default_policy
from email.utils import formatdate, make_msgid
from pathlib import Path

from pbem.mail.order_text import ORDERS_BEGIN, ORDERS_END
from pbem.mail.outbound import MaildirDelivery
from pbem.rules import engine as rules
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from .bots import WAIT, bot_orders
from .deadlines import pass_deadlines
from .games import NewPlayer, create_game
from .projector import load_state
from .server import PostOffice, utc_now
from .settings import Settings

MOST_TURNS = 100  # to the end: a game still going after this many turns is reported, not played on
LISTED = 12  # subjects listed per player at the end (the latest)
NAMES = ("Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana")


def _text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    return part.get_content() if part is not None else ""


def suggested_orders(prompt_text: str) -> str:
    """The ready-to-edit block at the end of a prompt, as a player would send it unchanged."""
    lines = prompt_text.splitlines()
    begin = next(i for i, line in enumerate(lines) if line.strip() == ORDERS_BEGIN)
    end = next(i for i, line in enumerate(lines) if line.strip() == ORDERS_END and i > begin)
    return "\n".join(lines[begin + 1 : end]).strip()


def reply_to_prompt(prompt: EmailMessage, sender: str, orders: str) -> EmailMessage:
    """A reply as a mail client writes it: orders on top, the prompt quoted below."""
    reply = EmailMessage(policy=default_policy)
    reply["From"] = sender
    reply["To"] = prompt["Reply-To"] or prompt["From"]
    reply["Subject"] = "Re: " + str(prompt["Subject"])
    reply["In-Reply-To"] = prompt["Message-ID"]
    reply["References"] = prompt["Message-ID"]
    reply["Message-ID"] = make_msgid(domain=sender.split("@", 1)[1])
    reply["Date"] = formatdate(localtime=False)
    quoted = "\n".join("> " + line for line in _text_of(prompt).splitlines())
    reply.set_content(f"{orders}\n\nOn {prompt['Date']}, {prompt['From']} wrote:\n{quoted}\n")
    return reply


def _inbox(maildir: Path, address: str) -> mailbox.Maildir:
    return mailbox.Maildir(MaildirDelivery(maildir).folder(address), factory=None, create=True)


class _Reader:
    """Each player's prompts, read from his Maildir once each (a long game leaves hundreds per player).

    Reading a whole Maildir every round made a game to the end quadratic in
    its length; a message's key never changes, so each is parsed once."""

    def __init__(self, maildir: Path) -> None:
        self.maildir = maildir
        self.prompts: dict[str, list[EmailMessage]] = {}
        self.read: set[tuple[str, str]] = set()

    def unanswered(self, address: str, answered: set[str]) -> list[EmailMessage]:
        box = _inbox(self.maildir, address)
        found = self.prompts.setdefault(address, [])
        for key in sorted(k for k in box.keys() if (address, k) not in self.read):
            self.read.add((address, key))
            parsed = email.message_from_bytes(box.get_bytes(key), policy=default_policy)
            if ORDERS_BEGIN in _text_of(parsed):  # a letter that asks for orders holds the block to edit
                found.append(parsed)
        found[:] = [m for m in found if m["Message-ID"] not in answered]
        return list(found)


def _send(office: PostOffice, settings: Settings, reply: EmailMessage) -> None:
    with smtplib.SMTP(settings.listen_host, office.port) as smtp:
        smtp.send_message(reply)


async def _reply_to_new_prompts(office: PostOffice, settings: Settings, people: list[NewPlayer],
                                 answered: set[str], echo: Callable[[str], None], reader: _Reader) -> int:
    """Each player answers every prompt not yet answered with its ready-to-edit orders, unchanged."""
    replies = 0
    for person in people:
        for prompt in reader.unanswered(person.email, answered):
            answered.add(prompt["Message-ID"])
            orders = suggested_orders(_text_of(prompt))
            await asyncio.to_thread(_send, office, settings, reply_to_prompt(prompt, person.email, orders))
            echo(f"  {person.name} replied: {orders.replace(chr(10), ' / ')}")
            replies += 1
    return replies


async def _bots_reply(office: PostOffice, settings: Settings, people: list[NewPlayer], answered: set[str],
                      echo: Callable[[str], None], db, game_id: str, strategy: str, rng: random.Random,
                      reader: _Reader) -> int:
    """Each player with a new prompt answers the newest one with a bot's orders for what he is asked now.

    A bot waiting for an answer to its trade offer leaves the prompt unanswered for now.
    """
    replies = 0
    for person in people:
        fresh = reader.unanswered(person.email, answered)
        if not fresh:
            continue
        with UnitOfWork(db) as uow:
            state = load_state(uow, game_id)
        player = next(p for p in state.players if p.name == person.name)
        asked = next((pr for pr in rules.pending(state).values() if pr.player_id == player.id), None)
        if asked is None:
            answered.update(m["Message-ID"] for m in fresh)  # stale: he is no longer asked anything
            continue
        orders = bot_orders(asked, rng, state, strategy)
        if orders == WAIT:
            continue
        answered.update(m["Message-ID"] for m in fresh)
        await asyncio.to_thread(_send, office, settings, reply_to_prompt(fresh[-1], person.email, orders))
        echo(f"  {person.name} replied: {orders.replace(chr(10), ' / ')}")
        replies += 1
        await office.idle()  # the next player sees the game as this reply left it
    return replies


async def _choose_mail(office: PostOffice, settings: Settings, people: list[NewPlayer], words: str,
                       echo: Callable[[str], None]) -> None:
    """Each player replies to his start letter (his first letter of the game) with ``MAIL <words>``."""
    for person in people:
        box = _inbox(settings.maildir, person.email)
        first = min(box.keys(), key=lambda k: (int(k.split(".", 1)[0]), k))
        start = email.message_from_bytes(box.get_bytes(first), policy=default_policy)
        await asyncio.to_thread(_send, office, settings, reply_to_prompt(start, person.email, f"MAIL {words}"))
        echo(f"  {person.name} replied: MAIL {words}")
    await office.idle()


async def run_demo(out: Path, players: int = 3, turns: int = 0, echo: Callable[[str], None] = print,
                   bots: str = "suggested", options: dict[str, str] | None = None, seed: str = "demo-seed",
                   progress: Callable[[int, int, str], None] | None = None, to_the_end: bool = False,
                   mail: str | None = None) -> int:
    """Play setup (and ``turns`` turns) by mail; 0 when the game got that far or ended.

    With ``to_the_end`` there is no turn limit: the bots play on until a
    nation finishes the A.S.T. and the game ends by itself (§34), and the
    demo succeeds only then (``MOST_TURNS`` guards against a game that
    never ends).

    ``progress(steps done, turns + 1, phase)`` is told after each round of replies: setup is the first step,
    each turn one more. ``mail``: the words every player first sends as ``MAIL <words>``, in a reply to his
    start letter, as a player who wants a digest would (issue 31).
    """
    if to_the_end:
        turns = MOST_TURNS
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    settings = replace(
        Settings.from_env(),
        db_url=f"sqlite:///{out / 'pbem.sqlite'}",
        maildir=out / "mail",
        listen_port=0,
        relay_url=None,
        flood_limit=0,  # the bots answer at machine speed: more than any person, and meant to be read
    )
    db = make_engine(settings.db_url)
    ensure_schema(db)
    # The demo's own clock: when nobody replies it moves on past the deadline, and the post office
    # (receiving, deadlines, the outbox's send times) keeps the same time, so no mail waits for the real one.
    now = [utc_now()]
    office = PostOffice(db, settings, outbox_every=0.2, clock=lambda: now[0])
    await office.start()
    echo(f"pbem demo: SMTP server listening on {settings.listen_host}:{office.port}")
    people = [NewPlayer(name, f"{name.lower()}@players.example") for name in NAMES[:players]]
    options = dict(options or {})
    rng = random.Random(f"demo bots:{seed}")
    try:
        state = await asyncio.to_thread(
            create_game, db, settings, "demo", people, options=options, seed=seed, now=now[0]
        )
        echo(f"created game demo for {', '.join(p.name for p in people)}; place cards: "
             + ", ".join(state.player(pid).name for pid in state.place_order))
        await office.idle()
        if mail:
            await _choose_mail(office, settings, people, mail, echo)
        answered: set[str] = set()
        reader = _Reader(settings.maildir)
        for _round in range(200 * max(1, turns)):
            if bots == "suggested":
                replies = await _reply_to_new_prompts(office, settings, people, answered, echo, reader)
            else:
                replies = await _bots_reply(office, settings, people, answered, echo, db, "demo", bots, rng, reader)
            await office.idle()
            with UnitOfWork(db) as uow:
                state = load_state(uow, "demo")
            if progress is not None:
                progress(0 if state.phase == "setup" else min(state.turn, turns + 1), turns + 1, state.phase)
            if state.finished or (state.phase != "setup" and state.turn > turns):
                break
            if not replies:
                with UnitOfWork(db) as uow:  # letters that wait a while (a trade prompt gathering offers) go first
                    due = uow.outbox.next_due(now[0], timedelta(days=1))
                if due is not None:
                    now[0] = due
                    await office.idle()
                    continue
                if not rules.pending(state):
                    break  # the game waits where this engine cannot play on
                echo(f"  (the deadline passes for {', '.join(rules.pending(state))}: defaults apply)")
                now[0] += timedelta(days=3)
                await asyncio.to_thread(pass_deadlines, db, settings, now=now[0], force_game="demo")
                await office.idle()
        echo(f"game demo is at version {state.version}, turn {state.turn}, phase {state.phase}")
        for player in state.players:
            where = [f"{a} ({area.tokens[player.nation]})" for a, area in state.areas.items() if player.nation in area.tokens]
            cities = [a for a, area in state.areas.items() if area.city == player.nation]
            echo(f"  {player.name} plays {player.nation}: tokens in {', '.join(where) or 'none'}"
                 + (f"; cities in {', '.join(cities)}" if cities else ""))
        echo("Each player's mail (Maildir folders; open with mutt -f or any Maildir reader):")
        for person in people:
            box = _inbox(settings.maildir, person.email)
            echo(f"  {MaildirDelivery(settings.maildir).folder(person.email)}  ({len(box)} messages)")
            keys = sorted(box.keys())
            if len(keys) > LISTED:
                echo(f"      ... {len(keys) - LISTED} earlier messages, then:")
            for key in keys[-LISTED:]:
                parsed = email.message_from_bytes(box.get_bytes(key), policy=default_policy)
                topic = parsed["X-Pbem-Topic"]  # a letter of a turn bears the turn's subject; its topic says what it is
                echo(f"      {parsed['Subject']}" + (f"  ({topic.removeprefix('[demo] ')})" if topic else ""))
        if state.finished:
            with UnitOfWork(db) as uow:
                ended = [e for e in uow.events.read("demo") if e.type == "GameEnded"]
            echo(f"the game has ended: {ended[-1].payload['winner']} wins" if ended else "the game has ended")
        if to_the_end and not state.finished:
            echo(f"the game did not end by itself within {MOST_TURNS} turns")
            return 1
        reached = state.finished or (state.phase != "setup" and (state.turn > turns or not turns))
        return 0 if reached else 1
    finally:
        await office.stop()
