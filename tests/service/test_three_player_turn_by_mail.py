"""Issue 29: one three-player turn played wholly by mail, from trade to the calamity that follows it.

Nothing here calls the service directly once the position is set: every
order and every word of press reaches the real SMTP listener on loopback as
a reply a mail client writes ("Re:" subject, In-Reply-To, the letter quoted
under ">" marks, sent to the letter's Reply-To), and everything asserted is
read back from the players' Maildirs and the game's log. That is the point:
the pieces (press replies, trade prompts, a hand too small to trade, a city
choice answered in one PICK) are each tested alone elsewhere, and this test
shows they still fit together when a turn runs through all of them in order.

The position is set by hand, as tests/service/test_calamity_choices_by_mail.py
sets its own, at the start of phase 7: Africa (Ann) and Italy (Ben) hold
hands that allow a deal; Crete (Cy) holds a Slave Revolt and one commodity,
too few cards to trade, so he is finished at once and never asked. Ann
proposes a deal to Ben by press, Ben answers by pressing Reply on the press
letter ("Deal if you add one more card"), Ann agrees the same way, the offer
and acceptance go as replies to the trade prompts, and Ann's FINISH ends the
phase (Ben is left with nobody to trade with, so he is not kept waiting).
Then the revolt strikes Crete: Cy is asked once to choose the cities it
reduces and answers both choices with one PICK naming four cities in order
of preference (Knossos, Africa's, is passed over; Cyrene is not needed). No
one is asked anything in phases 10-13 of this position, so the game runs on
by itself to the next turn's movement.

The hand-set snapshot is the one shortcut: phase 7's opening (Crete found
unable to trade) is folded into it, not logged, so the log read here holds
only what the mail caused.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from pbem.rules.engine import pending
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import RECENT, load_state
from pbem.service.server import PostOffice, utc_now
from pbem.store.unit_of_work import UnitOfWork

from .hand_set import set_position
from .mailclient import acks as mail_acks, topic
from .mailclient import holding, letters, send, text_of
from .test_press_replies import DEAL, client_reply

PEOPLE = [NewPlayer("Ann", "ann@example.org", "Africa"), NewPlayer("Ben", "ben@example.net", "Italy"),
          NewPlayer("Cy", "cy@example.com", "Crete")]
SEED = "three-player-turn"
TRADE = {
    "players": 3,
    "phase": "trade",
    "nations": {
        "Africa": {"hand": ["Salt", "Salt", "Ochre", "Hides"]},
        "Italy": {"hand": ["Grain", "Grain", "Iron", "Oil"]},
        "Crete": {"hand": ["Slave Revolt", "Wine"]},
    },
    # Crete's four cities are fed by 15 tokens; the revolt disables 15, so two cities must go (as in the
    # Slave Revolt test this borrows from); Knossos is Africa's, a city Cy may name but the revolt may not take
    "areas": {
        **{a: {"city": "Crete"} for a in ("Aleppo", "Athens", "Corinth", "Cyrene")},
        "Knossos": {"city": "Africa"},
        "Thebes": {"tokens": {"Crete": 3}}, "Memphis": {"tokens": {"Crete": 3}}, "Alexandria": {"tokens": {"Crete": 4}},
        "Babylon": {"tokens": {"Crete": 2}}, "Ur": {"tokens": {"Crete": 3}},
    },
}
PROPOSAL = "Salt 2 and Ochre for your Grain 2 and Iron?"
AGREED = "Agreed: I add Hides, so four of mine for your three."
OFFER = "OFFER Italy: Salt 2, Ochre + Hides FOR Grain 2 + 1 more"
ACCEPT = "ACCEPT 1 GIVING Grain 2, Iron"
PICK = "PICK Athens, Knossos, Corinth, Cyrene"


def _email(name: str) -> str:
    return next(p.email for p in PEOPLE if p.name == name)


def _set_trade_position(db, settings) -> int:
    """The hand-set phase 7 as the game's state (Crete is finished at once); the log's version before the mail."""
    since, at = set_position(db, settings, TRADE, SEED, utc_now())
    assert set(pending(at)) == {"africa", "italy"}
    return since


def _mine(settings, name: str, word: str) -> list:
    return [m for m in letters(settings.maildir, _email(name)) if word in topic(m)]


def _trade_prompts(settings, name: str) -> list:
    return _mine(settings, name, "7. Trade: your orders")


def _press(settings, name: str) -> list:
    return [m for m in letters(settings.maildir, _email(name)) if "ress" in topic(m).split("]", 1)[1][:16]]


def _reply(office, settings, name: str, letter, own: str) -> None:
    reply = client_reply(letter, _email(name), own, "gmail")
    send(office.port, reply, _email(name), [str(letter["Reply-To"])])


def test_a_turn_of_press_trade_and_a_slave_revolt_is_played_by_mail(world):
    db, settings = world
    began = time.monotonic()
    acks: list[tuple[str, str]] = []  # (player, the acknowledgement of each message he sent), in order

    async def scenario() -> int:
        office = PostOffice(db, settings, outbox_every=0.05)
        await office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PEOPLE, seed=SEED, now=utc_now())
            await office.idle()
            since = _set_trade_position(db, settings)
            await office.idle()

            async def step(name: str, letter, own: str) -> None:
                """One reply, and the one acknowledgement it earns."""
                before = mail_acks(settings.maildir, _email(name))
                _reply(office, settings, name, letter, own)
                await office.idle()
                after = mail_acks(settings.maildir, _email(name))
                assert len(after) == len(before) + 1, f"{name}'s reply {own!r} was not acknowledged once"
                acks.append((name, text_of(after[-1]).replace("\r\n", "\n")))  # the Maildir keeps CRLF

            await step("Ann", _trade_prompts(settings, "Ann")[-1], f"PRESS TO Italy\n{PROPOSAL}\nEND")
            await step("Ben", _press(settings, "Ben")[-1], DEAL)  # Reply on the press letter, no PRESS line
            await step("Ann", _press(settings, "Ann")[-1], AGREED)  # and Reply on the answer
            await step("Ann", _trade_prompts(settings, "Ann")[-1], OFFER)
            await step("Ben", _trade_prompts(settings, "Ben")[-1], ACCEPT)  # the prompt that shows offer 1
            # Ann is done; with Crete finished at once, Italy is left alone with nobody to trade with and the
            # phase ends (trade.py: fewer than two able players unfinished), so Ben is not asked to FINISH
            await step("Ann", _trade_prompts(settings, "Ann")[-1], "FINISH")
            (revolt,) = _mine(settings, "Cy", "9. Calamity resolution: your orders")
            await step("Cy", revolt, PICK)
            return since
        finally:
            await office.stop()

    since = asyncio.run(scenario())
    took = time.monotonic() - began
    with UnitOfWork(db) as uow:
        events = list(uow.events.read("g1", after=since))
        traded_at = next(e.version for e in events if e.type == "TradeExecuted")
        at_trade = load_state(uow, "g1", upto=traded_at)
        resolved_at = next(e.version for e in events if e.type == "CalamityResolved")
        at_resolved = load_state(uow, "g1", upto=resolved_at)
        now = load_state(uow, "g1")
    RECENT.forget()
    ids = {p.name: p.id for p in now.players}

    # -- what was applied: exactly what the mail asked for, in order, and nothing else
    until = next(i for i, e in enumerate(events) if e.type == "PhaseEnded" and e.payload["phase"] == "calamity-resolution")
    assert [e.type for e in events[: until + 1] if e.type != "DeadlineSet"] == [
        "PressSent", "PressSent", "PressSent", "OfferMade", "OfferAccepted", "TradeExecuted", "TradingFinished",
        "PhaseEnded", "PhaseBegan", "CalamitiesRevealed", "PhaseEnded", "PhaseBegan", "SlavesRevolted",
        "CalamityCitiesChosen", "CalamityCitiesPreferred", "CalamityPreferencesUnused", "CalamityResolved", "PhaseEnded"]
    proposal, answer, agreement = (e.payload for e in events if e.type == "PressSent")
    assert (proposal["player"], proposal["to"], proposal["text"]) == (ids["Ann"], ["Italy"], PROPOSAL)
    assert (answer["player"], answer["reader"], answer["text"]) == (ids["Ben"], ids["Ann"], DEAL)
    assert (agreement["player"], agreement["reader"], agreement["text"]) == (ids["Ann"], ids["Ben"], AGREED)
    (made,) = (e.payload for e in events if e.type == "OfferMade")
    assert (made["give_named"], made["give_hidden"], made["ask_named"], made["ask_count"]) == (
        ["Salt", "Salt", "Ochre"], ["Hides"], ["Grain", "Grain"], 3)
    (traded,) = (e.payload for e in events if e.type == "TradeExecuted")
    assert traded["offerer_gives"] == ["Salt", "Salt", "Ochre", "Hides"] and traded["acceptor_gives"] == ["Grain", "Grain", "Iron"]
    hands = {n: Counter(at_trade.nations[n].hand) for n in ("Africa", "Italy", "Crete")}
    assert hands == {"Africa": Counter(Grain=2, Iron=1), "Italy": Counter(Oil=1, Salt=2, Ochre=1, Hides=1),
                     "Crete": Counter({"Slave Revolt": 1, "Wine": 1})}
    assert [e.payload["nation"] for e in events if e.type == "TradingFinished"] == ["Africa"]  # Crete before, Italy never
    (chosen,) = (e.payload for e in events if e.type == "CalamityCitiesChosen")
    (preferred,) = (e.payload for e in events if e.type == "CalamityCitiesPreferred")
    assert chosen["named"] == ["Athens", "Knossos", "Corinth", "Cyrene"]
    assert [c["area"] for c in chosen["cities"] + preferred["cities"]] == ["Athens", "Corinth"]
    assert preferred["skipped"] == [["Knossos", "not a city this choice may take"]]
    assert [a for a in ("Aleppo", "Athens", "Corinth", "Cyrene") if at_resolved.area(a).city == "Crete"] == ["Aleppo", "Cyrene"]
    assert at_resolved.area("Knossos").city == "Africa"  # named in the PICK, never Crete's to lose
    assert (now.turn, now.phase) == (2, "movement")  # the game went on past the calamities by itself

    # -- the press: each letter reached its one reader, with the reply offered, and the quoting stripped
    to_ann, to_ben = [text_of(m) for m in _press(settings, "Ann")], [text_of(m) for m in _press(settings, "Ben")]
    assert len(to_ann) == 1 and len(to_ben) == 2 and _press(settings, "Cy") == []
    assert f"Press from Africa to Italy: {PROPOSAL}" in to_ben[0] and "Reply to this letter to answer Africa by press" in to_ben[0]
    assert f"Press from Italy in reply to your press: {DEAL}" in to_ann[0] and "Reply to this letter to answer Italy by press" in to_ann[0]
    assert f"Press from Africa in reply to your press: {AGREED}" in to_ben[1]
    assert not [t for t in to_ann + to_ben if "wrote:" in t or ">" in t.split("Reply to this letter")[0]]
    cy_mail = "\n".join(text_of(m) for m in letters(settings.maildir, _email("Cy")))
    assert PROPOSAL not in cy_mail and DEAL not in cy_mail and AGREED not in cy_mail
    assert "Africa and Italy traded." in cy_mail and "Hides" not in cy_mail  # hands stay hidden (D-8)

    # -- the trade prompts: Crete was never asked, and Ben saw only the named cards of the offer
    assert _trade_prompts(settings, "Cy") == []
    assert "Not yet finished: Africa, Italy." in text_of(_trade_prompts(settings, "Ann")[0])
    offered = [text_of(m) for m in _trade_prompts(settings, "Ben") if "Offer 1 to you" in text_of(m)]
    assert len(offered) == 1 and "Offer 1 to you from Africa: gives Salt 2, Ochre + 1 more (4 cards) FOR Grain 2 + 1 more" in offered[0]
    assert "Hides" not in offered[0].split("YOUR CHOICES")[0]

    # -- the revolt: Cy was asked once, told how many cities it takes, and one message answered both choices
    (revolt,) = [text_of(m) for m in _mine(settings, "Cy", "your orders") if "Calamity" in topic(m)]
    assert "2 of your cities must be reduced, one at a time" in revolt and "Choose up to 2, in order of preference" in revolt
    report = text_of(holding(settings.maildir, _email("Cy"), "what happened from turn 1, 9. Calamity resolution until ")[-1])
    assert "Crete's Athens reduced to 2 tokens (chosen by Crete). Kept for a further choice: Knossos, Corinth, Cyrene." in report
    assert "Crete's Corinth reduced to 2 tokens (chosen by Crete: the next of the cities it named in order of preference)" in report
    assert "Knossos is passed over (not a city this choice may take)" in report
    assert "further cities named in order of preference were not needed: Cyrene" in report

    # -- every acknowledgement says what it understood, and none refused a line
    said = [(name, text.split("ACCEPTED FROM THIS MESSAGE\n", 1)[1].split("\n\n", 1)[0].strip()) for name, text in acks]
    assert said == [
        ("Ann", "PRESS TO Italy (43 characters)"),
        ("Ben", f"PRESS in reply to Africa: relayed to Africa alone ({len(DEAL)} characters)"),
        ("Ann", f"PRESS in reply to Italy: relayed to Italy alone ({len(AGREED)} characters)"),
        ("Ann", OFFER),
        ("Ben", ACCEPT),
        ("Ann", "FINISH"),
        ("Cy", PICK),
    ]
    assert not [t for _, t in acks if "NOT ACCEPTED" in t or "No orders found" in t]
    assert took < 60, f"the turn took {took:.1f} s"
