"""Every message of the real-client corpus (tests/mail/corpus/) through the real SMTP server on loopback.

Replies carrying orders must have both orders take effect, wherever the
client put them, with no line called an error (sign-offs, signatures and
quotes included); auto-replies change nothing and get no answer; bounces are
filed under the player and get no answer; forged senders change nothing and
the address of record is told.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import email.utils
import json
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import text

from pbem.service.bounces import bounce_counts
from pbem.service.games import NewPlayer, create_game
from pbem.service.outbound import envelope_sender
from pbem.service.projector import load_state
from pbem.service.server import PostOffice, utc_now
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import letters, send, text_of, topic

CORPUS = Path(__file__).parent.parent / "mail" / "corpus"
CASES = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))
BEN = "ben@example.net"
PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", BEN), NewPlayer("Cy", "cy@example.com")]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One SQLite database for the module; each case plays its own game in it."""
    root = tmp_path_factory.mktemp("corpus")
    url = f"sqlite:///{root / 'pbem.sqlite'}"
    settings = replace(Settings(), gather_minutes=0, db_url=url, maildir=root / "mail", listen_port=0, bounce_limit=99)
    db = make_engine(url)
    ensure_schema(db)
    yield db, settings
    db.dispose()


def _fill(raw: bytes, values: dict[str, str]) -> bytes:
    for name, value in values.items():
        raw = raw.replace(b"{{" + name.encode() + b"}}", value.encode())
    assert b"{{" not in raw, "a placeholder was left unfilled"
    return raw


def _envelope_sender(case: dict, raw: bytes) -> str:
    if case["kind"] == "bounce":
        return ""  # MAIL FROM:<>, as every MTA sends a bounce
    message = email.message_from_bytes(raw, policy=email.policy.compat32)
    mailboxes = email.utils.getaddresses([str(message["From"])])
    return mailboxes[-1][1]


def _play(db, settings, game: str, case: dict):
    """Create the game, answer Ben's first prompt with the corpus message; return what Ben got before and after."""

    async def scenario():
        office = PostOffice(db, settings, outbox_every=0.05)
        await office.start()
        try:
            await asyncio.to_thread(
                create_game, db, settings, game, PLAYERS, seed="s1", moderator_email="mod@example.org", now=utc_now()
            )
            await office.idle()
            with UnitOfWork(db) as uow:
                prompt = next(r for r in uow.outbox.list(game) if r.recipient == BEN and r.kind == "prompt")
            sent = email.message_from_bytes(bytes(prompt.raw), policy=email.policy.default)
            before = len(_mine(settings, game))
            raw = _fill(
                (CORPUS / case["file"]).read_bytes(),
                {
                    "FROM": BEN,
                    "REPLY_TO": str(sent["Reply-To"]),
                    "PROMPT_ID": prompt.message_id,
                    "BOUNCE_TO": envelope_sender(settings.sender, prompt.id),
                    "ORIGINAL_ID": prompt.message_id,
                    "RECIPIENT": BEN,
                },
            )
            envelope_to = envelope_sender(settings.sender, prompt.id) if case["kind"] == "bounce" else str(sent["Reply-To"])
            send(office.port, raw, _envelope_sender(case, raw), [envelope_to])
            await office.idle()
            return before
        finally:
            await office.stop()

    return asyncio.run(scenario())


def _mine(settings, game: str):
    return [m for m in letters(settings.maildir, BEN) if f"[{game}]" in topic(m)]


def _inbox(db):
    with UnitOfWork(db) as uow:
        rows = list(uow.conn.execute(text("SELECT status, error, game_id FROM inbox ORDER BY id DESC LIMIT 1")))
    return rows[0]


@pytest.mark.parametrize("case", CASES, ids=[c["file"].removesuffix(".eml") for c in CASES])
def test_corpus_message(world, case):
    db, settings = world
    game = "c" + str(CASES.index(case))
    before = _play(db, settings, game, case)
    with UnitOfWork(db) as uow:
        state = load_state(uow, game)
    ben = next(p for p in state.players if p.name == "Ben")  # with seed s1 he is asked first
    after = _mine(settings, game)
    status, error, _ = _inbox(db)

    if case["kind"] == "orders":
        assert status == "done", error
        assert len(after) > before, f"no answer; the inbox says {status}: {error}"
        assert ben.nation == "Crete", f"orders lost; the server read: {text_of(after[before])}"
        assert state.areas["Phaestos"].tokens == {"Crete": 1}
        ack = after[before]
        assert topic(ack) == f"[{game}] Orders received", text_of(ack)
        body = text_of(ack)
        assert "NOT ACCEPTED" not in body and "No orders found" not in body
        lines = [line.strip() for line in body.splitlines()]
        start = lines.index("ACCEPTED FROM THIS MESSAGE") + 1
        assert lines[start : lines.index("", start)] == ["NATION Crete", "PLACE Phaestos"], body
    elif case["kind"] == "autoreply":
        assert ben.nation is None and len(after) == before  # not played, not answered
        assert status == "rejected" and error.startswith("auto-reply"), error
    elif case["kind"] == "bounce":
        assert ben.nation is None and len(after) == before
        assert status == "rejected" and f"bounce for player {ben.id} recorded" in error, error
        with UnitOfWork(db) as uow:
            assert len(bounce_counts(uow, game)[ben.id]) == 1
    else:  # forged
        assert ben.nation is None
        assert status == "rejected", error
        (notice,) = after[before:]
        assert topic(notice).startswith(f"[{game}] Orders ignored"), topic(notice)
