"""The whole loop through a real SMTP server on loopback, with real MIME from real clients.

Covers the promises of DESIGN.md §5: store before 250, 451 on failure,
duplicate delivery, forged senders, garbled mail, and a crash between storing
and processing.
"""

from __future__ import annotations

import asyncio
import smtplib
from contextlib import asynccontextmanager
from email.message import EmailMessage
from email.utils import make_msgid

import pytest
from sqlalchemy import text

from pbem.mail.order_text import ORDERS_BEGIN
from pbem.service import inbound
from pbem.service.demo import reply_to_prompt, suggested_orders
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.server import PostOffice, utc_now
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import acks, holding, last_ack, latest, letters, send, subjects, text_of, topic

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]


def run(coro):
    return asyncio.run(coro)


async def started(db, settings) -> PostOffice:
    office = PostOffice(db, settings, outbox_every=0.05)
    await office.start()
    return office


@asynccontextmanager
async def game_running(db, settings):
    """A running server with game g1 created and its first letters delivered."""
    office = await started(db, settings)
    try:
        await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="s1", now=utc_now())
        await office.idle()
        yield office
    finally:
        await office.stop()


def state_of(db, game="g1"):
    with UnitOfWork(db) as uow:
        return load_state(uow, game)


def email_of(name: str) -> str:
    return next(p.email for p in PLAYERS if p.name == name)


def fresh_mail(settings, sender: str, subject: str, body: str) -> EmailMessage:
    """A new message (no reply token) to game g1's address, as a mail client writes it."""
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = f"pbem+g1@{settings.domain}"
    mail["Subject"] = subject
    mail["Message-ID"] = make_msgid()
    mail.set_content(body)
    return mail


def current(db) -> str:
    """The name of the player whose turn it is in setup."""
    state = state_of(db)
    (prompt,) = __import__("pbem.rules.engine", fromlist=["pending"]).pending(state).values()
    return state.player(prompt.player_id).name


def test_setup_is_played_entirely_by_mail(world):
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            for _ in range(3):
                name = current(db)
                prompt = latest(settings.maildir, email_of(name), "your orders")
                reply = reply_to_prompt(prompt, email_of(name), suggested_orders(text_of(prompt)))
                send(office.port, reply, email_of(name), [str(prompt["Reply-To"])])
                await office.idle()

    run(scenario())
    state = state_of(db)
    assert state.phase != "setup" and state.turn == 1
    assert all(p.nation for p in state.players)
    for p in PLAYERS:
        got = subjects(settings.maildir, p.email)
        assert got[0] == "[g1] A new game of Advanced Civilization"
        assert acks(settings.maildir, p.email)
        (report,) = [text_of(m) for m in holding(settings.maildir, p.email, "Nations and start areas until turn 1")]
        assert report.count("placed its first token") == 3  # the whole phase, not only the last batch
    # what one reply caused for one player travels as one letter: the last chooser's answer and report, the
    # first mover's report and prompt
    assert sum(len(letters(settings.maildir, p.email)) for p in PLAYERS) == 11


def test_duplicate_delivery_appends_nothing_and_is_answered_once(world):
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            name = current(db)
            prompt = latest(settings.maildir, email_of(name), "your orders")
            reply = reply_to_prompt(prompt, email_of(name), "NATION Crete")
            version = state_of(db).version
            for _ in range(2):  # the MTA delivers the same message twice
                send(office.port, reply, email_of(name), [str(prompt["Reply-To"])])
                await office.idle()
            return name, version

    name, version = run(scenario())
    with UnitOfWork(db) as uow:
        added = [e.type for e in uow.events.read("g1", after=version)]
        inbox = [r.status for r in uow.inbox.unprocessed()]
    assert added == ["NationChosen"]  # once, though delivered twice (same player asked: same deadline)
    assert inbox == []
    assert len(acks(settings.maildir, email_of(name))) == 1


def test_a_forged_sender_changes_nothing_and_only_the_player_hears_of_it(world):
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            name = current(db)
            prompt = latest(settings.maildir, email_of(name), "your orders")
            forged = reply_to_prompt(prompt, "mallory@evil.example", "NATION Crete")
            version = state_of(db).version
            send(office.port, forged, "mallory@evil.example", [str(prompt["Reply-To"])])
            # a made-up token for the same game and player
            local, domain = str(prompt["Reply-To"]).split("@")
            bad = local.rsplit(".", 1)[0] + ".0000000000000000@" + domain
            forged2 = reply_to_prompt(prompt, email_of(name), "NATION Crete")
            forged2.replace_header("To", bad)
            send(office.port, forged2, email_of(name), [bad])
            await office.idle()
            return name, version

    name, version = run(scenario())
    assert state_of(db).version == version
    assert letters(settings.maildir, "mallory@evil.example") == []
    notices = [s for s in subjects(settings.maildir, email_of(name)) if "ignored" in s]
    assert len(notices) == 2
    with UnitOfWork(db) as uow:
        statuses = sorted(r.status for r in uow.inbox.unprocessed(limit=100))
    assert statuses == []  # both were handled (as rejected), none left waiting


def test_a_fresh_mail_with_the_secret_line_is_accepted(world):
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            name = current(db)
            start = text_of(latest(settings.maildir, email_of(name), "new game"))
            secret = next(line.split()[1] for line in start.splitlines() if line.strip().startswith("SECRET"))
            mail = fresh_mail(settings, f"{name} <{email_of(name)}>", "my orders",
                              f"SECRET {secret}\nnation crete\nplace knossos\n\n-- \n{name}\n")
            send(office.port, mail, email_of(name), [f"pbem+g1@{settings.domain}"])
            # without the secret, from the right address: refused politely, nothing changes
            mail2 = fresh_mail(settings, email_of(name), "more", "place phaestos\n")
            send(office.port, mail2, email_of(name), [f"pbem+g1@{settings.domain}"])
            await office.idle()
            return name

    name = run(scenario())
    state = state_of(db)
    player = next(p for p in state.players if p.name == name)
    assert player.nation == "Crete" and state.area("Knossos").tokens == {"Crete": 1}
    ack = text_of(last_ack(settings.maildir, email_of(name)))
    assert "NATION Crete" in ack and "PLACE Knossos" in ack
    assert any("could not tell who sent them" in s for s in subjects(settings.maildir, email_of(name)))


def test_garbled_mail_is_kept_and_answered_only_to_an_address_of_record(world):
    db, settings = world
    garbage = b"\xff\xfe\x00not a message at all\r\n\r\n\x00\x01"

    async def scenario():
        async with game_running(db, settings) as office:
            version = state_of(db).version
            send(office.port, garbage, "ann@example.org", [f"pbem+g1@{settings.domain}"])
            send(office.port, garbage + b"x", "stranger@example.org", [f"pbem+g1@{settings.domain}"])
            await office.idle()
            return version

    version = run(scenario())
    assert state_of(db).version == version
    with UnitOfWork(db) as uow:
        rows = [uow.inbox.get(i) for i in range(1, 3)]
    assert all(r is not None and bytes(r.raw).startswith(b"\xff\xfe") for r in rows)  # kept as received
    assert all(r.status == "rejected" for r in rows)
    assert letters(settings.maildir, "stranger@example.org") == []


def test_451_when_storing_fails_and_the_retry_is_processed(world, monkeypatch):
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            name = current(db)
            prompt = latest(settings.maildir, email_of(name), "your orders")
            reply = reply_to_prompt(prompt, email_of(name), "NATION Crete")
            real_accept = inbound.accept

            def broken(*args, **kwargs):
                raise OSError("disk full")

            monkeypatch.setattr("pbem.service.server.accept", broken)
            with pytest.raises(smtplib.SMTPDataError) as refused:
                send(office.port, reply, email_of(name), [str(prompt["Reply-To"])])
            assert refused.value.smtp_code == 451
            monkeypatch.setattr("pbem.service.server.accept", real_accept)
            send(office.port, reply, email_of(name), [str(prompt["Reply-To"])])  # the MTA retries
            await office.idle()

    run(scenario())
    assert any(p.nation == "Crete" for p in state_of(db).players)


def test_a_crash_between_storing_and_processing_loses_nothing(world):
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            name = current(db)
            prompt = latest(settings.maildir, email_of(name), "your orders")
            office._spawn = lambda inbox_id: None  # the process dies right after answering 250
            reply = reply_to_prompt(prompt, email_of(name), "NATION Crete")
            send(office.port, reply, email_of(name), [str(prompt["Reply-To"])])
        assert all(p.nation != "Crete" for p in state_of(db).players)
        restarted = await started(db, settings)  # start-up handles the backlog
        try:
            await restarted.idle()
        finally:
            await restarted.stop()
        return name

    name = run(scenario())
    assert any(p.nation == "Crete" for p in state_of(db).players)
    assert len(acks(settings.maildir, email_of(name))) == 1


HOSTILE = {
    "utf8-from": "From: Ann Ünal <ann@example.org>\r\nTo: pbem+g1@{domain}\r\nSubject: Grüße\r\nMessage-ID: <ü1@example.org>\r\n\r\nHELP\r\n".encode(),
    "punycode": b"From: ann@example.org\r\nTo: pbem+g1@{domain}\r\nMessage-ID: <p1@example.org>\r\n"
                b"Content-Type: text/plain; charset=punycode\r\n\r\nHELP \xff\r\n",
    "deep": b"From: ann@example.org\r\nTo: pbem+g1@{domain}\r\nMessage-ID: <d1@example.org>\r\n" + b"".join(
        b"Content-Type: multipart/mixed; boundary=b%d\r\n\r\n--b%d\r\n" % (i, i) for i in range(1000)) + b"HELP\r\n",
}


def test_hostile_bytes_from_a_player_are_processed_and_answered(world):
    """Raw UTF-8 headers, a codec that is no charset, MIME 1,000 deep: each message is handled, none left failed."""
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            for raw in HOSTILE.values():
                send(office.port, raw.replace(b"{domain}", settings.domain.encode()), "ann@example.org",
                     [f"pbem+g1@{settings.domain}"])
            await office.idle()

    run(scenario())
    with UnitOfWork(db) as uow:
        rows = [uow.inbox.get(i) for i in range(1, len(HOSTILE) + 1)]
    assert all(r is not None and r.status != "failed" for r in rows), [r.status for r in rows if r]


def test_a_from_line_is_read_by_its_angle_address_and_two_senders_prove_nobody(world):
    """`bob@... <mallory@...>` is mallory's mail; `Ann <ann@...>, Mallory <mallory@...>` is two senders: with the
    player's own reply token, both are refused, change nothing, and only the player hears of it."""
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            name = current(db)
            prompt = latest(settings.maildir, email_of(name), "your orders")
            version = state_of(db).version
            for sender in (f"{email_of(name)} <mallory@evil.example>",
                           f"{name} <{email_of(name)}>, Mallory <mallory@evil.example>"):
                forged = reply_to_prompt(prompt, email_of(name), "NATION Crete")
                forged.replace_header("From", sender)
                send(office.port, forged, email_of(name), [str(prompt["Reply-To"])])
            await office.idle()
            return name, version

    name, version = run(scenario())
    assert state_of(db).version == version
    assert letters(settings.maildir, "mallory@evil.example") == []
    notices = [s for s in subjects(settings.maildir, email_of(name)) if "ignored" in s]
    assert len(notices) == 2 and any("more than one sender" in s for s in notices)


def test_secret_orders_from_another_address_are_played_and_the_acknowledgement_says_whence(world):
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            name = current(db)
            start = text_of(latest(settings.maildir, email_of(name), "new game"))
            secret = next(line.split()[1] for line in start.splitlines() if line.strip().startswith("SECRET"))
            mail = fresh_mail(settings, "Travelling <me@hotel.example>", "orders from the road",
                              f"SECRET {secret}\nNATION Crete\nPLACE Knossos\n")
            send(office.port, mail, "me@hotel.example", [f"pbem+g1@{settings.domain}"])
            await office.idle()
            return name

    name = run(scenario())
    assert next(p for p in state_of(db).players if p.name == name).nation == "Crete"
    assert letters(settings.maildir, "me@hotel.example") == []  # the answer goes to the address of record
    ack = text_of(last_ack(settings.maildir, email_of(name)))
    assert "These orders came from me@hotel.example, not from your address of record" in ack


def test_a_message_with_no_order_says_so_first_and_repeats_what_is_needed(world):
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            name = current(db)
            prompt = latest(settings.maildir, email_of(name), "your orders")
            reply = reply_to_prompt(prompt, email_of(name), "Thanks, will send orders tonight.\n\nCheers,\nAlex")
            send(office.port, reply, email_of(name), [str(prompt["Reply-To"])])
            await office.idle()
            return name

    name = run(scenario())
    ack = latest(settings.maildir, email_of(name), "No orders found")
    assert topic(ack) == "[g1] No orders found in your message"
    body = text_of(ack)
    assert body.startswith(f"No orders found in your message, {name}. Still needed from you: Choose your nation")
    assert "NOT ACCEPTED" not in body
    assert 'Not read as orders: "Thanks, will send orders toni…", "Cheers,", "Alex".' in body
    assert "===== ORDERS: edit below this line =====\nNATION Africa" in body.replace("\r\n", "\n")


def test_a_reused_message_id_with_new_content_is_handled_and_a_redelivery_is_not(world):
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            name = current(db)
            prompt = latest(settings.maildir, email_of(name), "your orders")
            first = reply_to_prompt(prompt, email_of(name), "NATION Crete")
            second = reply_to_prompt(prompt, email_of(name), "PLACE Knossos")
            second.replace_header("Message-ID", str(first["Message-ID"]))
            relayed = b"Received: from relay2.example.net by mx\r\n" + first.as_bytes()
            for message in (first, second, relayed):
                send(office.port, message, email_of(name), [str(prompt["Reply-To"])])
                await office.idle()
            return name

    name = run(scenario())
    state = state_of(db)
    assert next(p for p in state.players if p.name == name).nation == "Crete"
    assert state.area("Knossos").tokens == {"Crete": 1}  # the second message, same Message-ID, was played
    with UnitOfWork(db) as uow:
        rows = list(uow.conn.execute(text("SELECT message_id, status FROM inbox ORDER BY id")))
    assert len(rows) == 2 and all(status == "done" for _, status in rows)  # the relayed copy stored nothing
    assert rows[1][0].startswith(rows[0][0] + "#")
    assert len(acks(settings.maildir, email_of(name))) == 2


def test_a_flood_of_help_gets_a_short_answer(world):
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            name = current(db)
            prompt = latest(settings.maildir, email_of(name), "your orders")
            flood = "\n".join(["HELP", "HELP AREA Crete", "NATTOON Crete"] * 20_000)  # about 650 kB
            send(office.port, reply_to_prompt(prompt, email_of(name), flood), email_of(name), [str(prompt["Reply-To"])])
            await office.idle()
            return name

    name = run(scenario())
    ack = last_ack(settings.maildir, email_of(name))
    assert len(ack.as_bytes()) < 100_000
    body = text_of(ack)
    # The message is read up to its 30,000th line (pbem.mail.limits.MAX_LINES), its order lines up to the 300th.
    assert "only the first 30,000 were read" in " ".join(body.split())
    assert "Only the first 300 lines were read;" in body
    assert f"{name}: 200 lines were NOT accepted" in body
    assert "... and 180 more lines not accepted (not listed)." in body
    assert body.count("Orders: ") == 1  # the answer to HELP, given once


def test_every_letter_of_a_game_threads_to_the_start_letter_and_a_prompt_travels_with_its_report(world):
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            for _ in range(3):
                name = current(db)
                prompt = latest(settings.maildir, email_of(name), "your orders")
                reply = reply_to_prompt(prompt, email_of(name), suggested_orders(text_of(prompt)))
                send(office.port, reply, email_of(name), [str(prompt["Reply-To"])])
                await office.idle()

    run(scenario())
    answered = 0
    for p in PLAYERS:
        mail = letters(settings.maildir, p.email)
        start, later = mail[0], mail[1:]
        assert topic(start) == "[g1] A new game of Advanced Civilization" and str(start["Subject"]) == "[g1] Setup"
        root = str(start["Message-ID"])
        assert later and all(root in str(m["References"]).split() for m in later), [topic(m) for m in later]
        for letter in later:  # the report and the prompt it caused: one letter, what is asked said first
            text = text_of(letter)
            if "Nations and start areas until turn 1" in text and "your orders" in topic(letter):
                first = text.splitlines()[0]
                assert first.startswith("Movement, your turn: ") and " Due " in first, first
                assert text.index("placed its first token") < text.index(ORDERS_BEGIN)
                answered += 1
    assert answered == 1
    turn_prompt = latest(settings.maildir, email_of(current(db)), "your orders")
    assert topic(turn_prompt).startswith("[g1] T1 ") and ": your orders, due " in topic(turn_prompt)
    # the movement prompt says where each group may go in one line, not one line per destination
    choices = text_of(turn_prompt).replace("\r\n", "\n").split("YOUR CHOICES\n", 1)[1].split("\n\n", 1)[0]
    assert "  MOVE up to 2 from " in choices and " to: " in choices and " / HALT" not in choices
    assert choices.rstrip().endswith("HALT when your movement is done")


def test_status_orders_hand_board_and_history_are_answered_from_the_senders_view(world):
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            for _ in range(3):  # the whole setup, then turn 1 begins
                name = current(db)
                prompt = latest(settings.maildir, email_of(name), "your orders")
                reply = reply_to_prompt(prompt, email_of(name), suggested_orders(text_of(prompt)))
                send(office.port, reply, email_of(name), [str(prompt["Reply-To"])])
                await office.idle()
            asker = PLAYERS[0]
            start = latest(settings.maildir, asker.email, "new game")
            ask = reply_to_prompt(start, asker.email, "status\nORDERS\nHAND\nBOARD\nHISTORY 3\n\nThanks!")
            send(office.port, ask, asker.email, [str(start["Reply-To"])])
            await office.idle()
            return asker

    asker = run(scenario())
    state = state_of(db)
    me = next(p for p in state.players if p.name == asker.name)
    ack = last_ack(settings.maildir, asker.email)
    body = text_of(ack).replace("\r\n", "\n")
    assert "No orders found" not in topic(ack) and "NOT ACCEPTED" not in body
    assert body.startswith(f"{asker.name} ({me.nation}): the answers to your questions are below")
    assert f"STATUS: Turn {state.turn}, " in body and "Still asked: " in body
    assert "ORDERS on file for you:" in body and f"You play {me.nation}." in body
    assert f"HAND of {me.nation}: trade cards " in body and "Treasury " in body
    assert "BOARD:" in body and all(f"{p.nation} (" in body or p.nation.title() in body for p in state.players)
    assert "HISTORY, by version (the last 3 of " in body  # numbered: the version EXPLAIN and ROLLBACK take
    history_lines = body.split("HISTORY, by version")[1].splitlines()[1:4]
    assert all(line.strip().split(". ", 1)[0].isdigit() for line in history_lines), history_lines
    others = [p.nation for p in state.players if p.nation != me.nation]
    assert all(f"HAND of {n}" not in body for n in others)  # a player's own hand only


def _hostile_flood(domain: str) -> list[bytes]:
    """What once held the server for minutes: a 300 kB folded header, a 64 kB To, 650 kB of HELP, MIME 1,000 deep."""
    folded = b"X-Junk: " + b"\r\n ".join(b"x" * 70 for _ in range(4_300))
    wide_to = b"To: " + b", ".join(b"someone%d@example.com" % i for i in range(3_000))
    flood = b"\r\n".join([b"HELP", b"HELP AREA Crete", b"NATON Crete"] * 20_000)
    return [
        b"From: eve@example.com\r\n" + folded + b"\r\nTo: pbem+g1@" + domain + b"\r\nMessage-ID: <fold@x>\r\n\r\nHELP\r\n",
        b"From: eve@example.com\r\n" + wide_to + b"\r\nMessage-ID: <wide@x>\r\n\r\nHELP\r\n",
        b"From: cy@example.com\r\nTo: pbem+g1@" + domain + b"\r\nMessage-ID: <flood@x>\r\n\r\n" + flood + b"\r\n",
        HOSTILE["deep"].replace(b"{domain}", domain),
    ]


def test_hostile_mail_arriving_together_never_holds_up_a_players_reply(world):
    """Each hostile message is read before the game's write transaction opens, so a genuine reply sent
    while they are being handled is taken (250, never 451) and played, and nothing is left failed."""
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            name = current(db)
            prompt = latest(settings.maildir, email_of(name), "your orders")
            hostile = _hostile_flood(settings.domain.encode())
            genuine = reply_to_prompt(prompt, email_of(name), "NATION Crete\nPLACE Knossos")

            def send_all() -> list[str]:
                refused = []
                for raw in hostile[:2]:
                    send(office.port, raw, "eve@example.com", [f"pbem+g1@{settings.domain}"])
                for raw in hostile[2:]:
                    send(office.port, raw, "cy@example.com", [f"pbem+g1@{settings.domain}"])
                try:  # the hostile ones are being handled in the server's worker threads now
                    send(office.port, genuine, email_of(name), [str(prompt["Reply-To"])])
                except smtplib.SMTPException as exc:
                    refused.append(repr(exc))
                return refused

            refused = await asyncio.to_thread(send_all)
            await office.idle()
            return name, refused

    name, refused = run(scenario())
    assert refused == []
    assert state_of(db).area("Knossos").tokens == {"Crete": 1}
    with UnitOfWork(db) as uow:
        statuses = [uow.inbox.get(i).status for i in range(1, 6)]
    assert "failed" not in statuses and "received" not in statuses, statuses
    ack = last_ack(settings.maildir, email_of(name))
    assert "NATION Crete" in text_of(ack)


def test_a_secret_line_with_letters_outside_ascii_is_answered_not_crashed(world):
    """A phone's keyboard may turn a SECRET into accented letters; the check compares bytes, so the message is
    handled like any wrong secret (before, comparing such a string raised TypeError and the message failed)."""
    db, settings = world

    async def scenario():
        async with game_running(db, settings) as office:
            name = current(db)
            before = state_of(db).version
            mail = fresh_mail(settings, f"{name} <{email_of(name)}>", "my orders",
                              "SECRET géheimnis-ünd-mehr\nnation crete\nplace knossos\n")
            send(office.port, mail, email_of(name), [f"pbem+g1@{settings.domain}"])
            await office.idle()
            return name, before

    name, before = run(scenario())
    with UnitOfWork(db) as uow:
        statuses = [r[0] for r in uow.connection.execute(text("SELECT status FROM inbox"))]
    assert "failed" not in statuses and statuses, statuses
    assert state_of(db).version == before
    assert any("ignored" in s for s in subjects(settings.maildir, email_of(name)))
