"""The moderator's ROLLBACK and SEED by mail through the running server: what the players are told, what the log keeps."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone

from pbem.audit.history import history
from pbem.rules.engine import pending
from pbem.rules.view import view
from pbem.service.demo import reply_to_prompt
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.server import PostOffice
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import last_ack, latest, letters, send, text_of, topic

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
MODERATOR = "mod@example.org"
T0 = datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)
START_AREAS = {"Crete": "Knossos", "Thrace": "Bycantinum", "Illyria": "Dalmatia"}


def state_of(db, upto: int | None = None):
    with UnitOfWork(db) as uow:
        return load_state(uow, "g1", upto=upto)


def test_rollback_by_mail_undoes_a_setup_choice_tells_each_player_and_keeps_both_branches(world):
    db, settings = world

    async def scenario():
        office = PostOffice(db, settings, clock=lambda: T0, outbox_every=0.05, deadlines_every=3600)
        await office.start()

        async def as_moderator(text: str) -> None:
            welcome = latest(settings.maildir, MODERATOR, "You moderate")
            send(office.port, reply_to_prompt(welcome, MODERATOR, text), MODERATOR, [str(welcome["Reply-To"])])
            await office.idle()

        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="s1", moderator_email=MODERATOR, now=T0)
            await office.idle()
            # the first player to choose picks a nation and a start area
            (prompt,) = pending(state_of(db)).values()
            chooser = state_of(db).player(prompt.player_id)
            address = next(p.email for p in PLAYERS if p.name == chooser.name)
            resting = state_of(db).version  # the game waits for this player here
            start = latest(settings.maildir, address, "new game")
            send(office.port, reply_to_prompt(start, address, "NATION Crete\nPLACE Knossos"), address, [str(start["Reply-To"])])
            await office.idle()
            assert state_of(db).player(chooser.id).nation == "Crete"
            await as_moderator("ROLLBACK 1 nothing")  # inside the outcomes of one order (the game's creation): refused
            await as_moderator(f"ROLLBACK {resting} {chooser.name} meant Thrace, not Crete")
            assert state_of(db).player(chooser.id).nation == "Crete"  # previewed only: nothing applied yet
            await as_moderator("CONFIRM")
            await as_moderator("HISTORY 5")
            await as_moderator("SEED")
            return chooser, resting
        finally:
            await office.stop()

    chooser, resting = asyncio.run(scenario())
    now = state_of(db)
    assert now.player(chooser.id).nation is None  # the choice is undone: asked again
    assert view(now, "observer")["areas"] == view(state_of(db, resting), "observer")["areas"]
    told = [text_of(m) for m in letters(settings.maildir, MODERATOR) if "HISTORY, by version" in text_of(m)]
    assert told and f"rolled the game back to version {resting}" in told[-1]  # HISTORY reads the log (the moderator's has both branches)
    welcome = text_of(latest(settings.maildir, MODERATOR, "You moderate"))
    assert "ROLLBACK" in welcome and "SEED" in welcome
    previews = [text_of(m) for m in letters(settings.maildir, MODERATOR) if "ROLLBACK previewed" in text_of(m)]
    assert len(previews) == 1 and f"back to version {resting} (setup" in previews[0]
    assert "Knossos: Crete tokens 1 to 0 (-1)" in previews[0]  # what would change, before anything did
    assert f"ROLLBACK {resting} CONFIRM {chooser.name} meant Thrace, not Crete" in previews[0]
    ack = text_of(last_ack(settings.maildir, MODERATOR))
    assert "SEED" in ack and "every player is told that you asked for the seed" in ack
    refused = [text_of(m) for m in letters(settings.maildir, MODERATOR) if "falls inside the outcomes of one order" in text_of(m)]
    assert refused, "the refused rollback is answered with its reason"
    for p in PLAYERS:
        rolled = [text_of(m) for m in letters(settings.maildir, p.email) if "The game was rolled back" in topic(m)]
        assert len(rolled) == 1, p
        assert f"rolled the game back to version {resting}: {chooser.name} meant Thrace, not Crete" in rolled[0]
        assert "Knossos: Crete tokens 1 to 0 (-1)" in rolled[0]
        # the letter names the deadline in force (HISTORY and SEED after it move nothing)
        assert f"The deadline now: {now.deadline}; whoever is asked gets his prompt again with it." in rolled[0]
    # the chooser is asked again, with a fresh prompt due at that deadline
    chooser_mail = next(p.email for p in PLAYERS if p.name == chooser.name)
    again = latest(settings.maildir, chooser_mail, "your orders")
    due = datetime.strptime(now.deadline, "%Y-%m-%d %H:%M UTC").strftime("%a %d %b %H:%M UTC")
    assert topic(again).endswith(f"your orders, due {due}") and now.deadline in text_of(again)
    with UnitOfWork(db) as uow:
        recorded = uow.events.read("g1")
    marked = [r.version for r in recorded if r.superseded_by]
    assert marked and min(marked) == resting + 1
    moderator_log = history("g1", recorded, "moderator")
    observer_log = history("g1", recorded, "observer")
    assert any(e.get("superseded_by") for e in moderator_log)
    assert not any(e.get("superseded_by") for e in observer_log)
    assert any("chose Crete" in e["text"] for e in moderator_log)
    assert not any("chose Crete" in e["text"] for e in observer_log)
    # SEED: the moderator reads the seed; everyone else reads only that he asked
    assert any("was told it: s1" in e["text"] for e in moderator_log)
    seen = [e["text"] for e in observer_log if e["type"] == "SeedRevealed"]
    assert seen and all("s1" not in t.split("seed")[-1] for t in seen)
    assert not any(": s1" in e["text"] for e in history("g1", recorded, "auditor"))
