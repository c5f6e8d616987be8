"""EXPLAIN <version> by mail: a player and the moderator ask why something happened, each answered from his own view.

Real MIME through the running server: the setup is played by mail, then a
player asks about another's choice of nation, about a version only the
moderator may read, about a version past the log, and without a version;
the moderator asks about the version the player could not read.
"""

from __future__ import annotations

import asyncio

from pbem.audit.explain import explain
from pbem.rules.engine import pending
from pbem.service.demo import reply_to_prompt, suggested_orders
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.server import PostOffice, utc_now
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import last_ack, latest, send, text_of

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
MODERATOR = "mod@example.org"


def _log(db):
    with UnitOfWork(db) as uow:
        return load_state(uow, "g1"), uow.events.read("g1")


def _body(settings, address: str) -> str:
    return text_of(last_ack(settings.maildir, address)).replace("\r\n", "\n")


def test_explain_by_mail_answers_from_the_senders_view(world):
    db, settings = world

    async def ask(office, address: str, letter: str, text: str) -> None:
        prompt = latest(settings.maildir, address, letter)
        send(office.port, reply_to_prompt(prompt, address, text), address, [str(prompt["Reply-To"])])
        await office.idle()

    async def scenario():
        office = PostOffice(db, settings, outbox_every=0.05)
        await office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="s1", moderator_email=MODERATOR,
                                    now=utc_now())
            await office.idle()
            for _ in range(3):  # the setup by mail: each player chooses a nation and places his token
                state, _ = _log(db)
                (prompt,) = pending(state).values()
                email = next(p.email for p in PLAYERS if p.name == state.player(prompt.player_id).name)
                letter = latest(settings.maildir, email, "your orders")
                await ask(office, email, "your orders", suggested_orders(text_of(letter)))
            state, recorded = _log(db)
            ann = next(p for p in state.players if p.name == "Ann")
            chosen = next(r.version for r in recorded if r.type == "NationChosen" and r.payload["player"] != ann.id)
            hidden = next(r.version for r in recorded if r.type == "DeadlineSet")
            await ask(office, "ann@example.org", "new game",
                      f"EXPLAIN {chosen}\nEXPLAIN {hidden}\nEXPLAIN 99999\nEXPLAIN")
            await ask(office, MODERATOR, "You moderate", f"EXPLAIN {hidden}")
            return ann, chosen, hidden, recorded
        finally:
            await office.stop()

    ann, chosen, hidden, recorded = asyncio.run(scenario())
    viewer = f"player:{ann.nation.lower()}"
    body = _body(settings, "ann@example.org")
    assert "the answers to your questions are below" in body and "NOT ACCEPTED" not in body
    told = explain("g1", recorded, chosen, viewer)
    chooser = next(p.name for p in PLAYERS if p.name != "Ann" and recorded[chosen - 1].payload["player"] in
                   {q["id"] for q in recorded[0].payload["players"] if q["name"] == p.name})
    assert told.lines[0] == f"EXPLAIN version {chosen} of g1 (setup, Nations and start areas), as {viewer}."
    assert told.lines[1] == f"Outcome: {chooser} chose {recorded[chosen - 1].payload['nation']}."
    for line in told.lines:  # the whole explanation, as the server tells it to Ann's nation
        assert f"\n  {line}\n" in body
    assert f"EXPLAIN: version {hidden} is not yours to see." in body
    assert "EXPLAIN: version 99999 is outside the log of g1: versions 1 to " in body
    assert "EXPLAIN <version> explains one event. The latest you may read:" in body

    moderator = _body(settings, MODERATOR)
    assert f"EXPLAIN version {hidden} of g1 (" in moderator and ", as moderator." in moderator
    assert "Outcome: " in moderator and "Rules applied: " in moderator
    assert "not yours to see" not in moderator
