"""Issue 29: a Slave Revolt's city choices answered in one message, through `submit` (the use case of every mail).

A game is created through the service, then its position is set by hand, as
the rules cases set theirs (tests/rules/casefile.py), with what the engine
resolves by itself from it (the revolt strikes), and stored as the game's
latest snapshot, so that the service plays on from it: Crete's Slave
Revolt leaves its cities short of 8 tokens, and two of its four cities must
be reduced, one at a time. One PICK naming three cities answers every ask:
the acknowledgement accepts it, and the report Crete receives says which
cities were reduced, which one was passed over and why, and which was not
needed.
"""

from __future__ import annotations

import email
from dataclasses import replace
from datetime import datetime, timezone
from email.policy import default as default_policy

from rules.casefile import position

from pbem.rules.core.codec import state_to_json
from pbem.rules.core.draws import Draws
from pbem.rules.engine import ENGINE_VERSION, fold, pending, resume
from pbem.service.games import NewPlayer, create_game, submit
from pbem.service.projector import RECENT, load_state
from pbem.store.unit_of_work import UnitOfWork

T0 = datetime(2026, 11, 28, 8, 0, tzinfo=timezone.utc)
PEOPLE = [NewPlayer("Ann", "ann@example.org", "Crete"), NewPlayer("Ben", "ben@example.net", "Africa"),
          NewPlayer("Cy", "cy@example.com", "Italy")]
REVOLT = {
    "players": 3,
    "phase": "calamity-resolution",
    "calamities": [["Slave Revolt", "Crete", ""]],
    "nations": {"Crete": {}, "Africa": {}, "Italy": {}},
    "areas": {
        **{a: {"city": "Crete"} for a in ("Aleppo", "Athens", "Corinth", "Cyrene")},
        "Knossos": {"city": "Africa"},
        "Thebes": {"tokens": {"Crete": 3}}, "Memphis": {"tokens": {"Crete": 3}}, "Alexandria": {"tokens": {"Crete": 4}},
        "Babylon": {"tokens": {"Crete": 2}}, "Ur": {"tokens": {"Crete": 3}},
    },
}


def _texts(db, address: str) -> list[str]:
    """The plain text of every letter queued for ``address`` (the outbox holds each one fully rendered)."""
    with UnitOfWork(db) as uow:
        rows = [r for r in uow.outbox.list("g1") if r.recipient == address]
    letters = [email.message_from_bytes(bytes(r.raw), policy=default_policy) for r in rows]
    return [m.get_body(preferencelist=("plain",)).get_content() for m in letters]


def test_one_pick_answers_every_city_a_slave_revolt_asks_for(world):
    db, settings = world
    create_game(db, settings, "g1", PEOPLE, seed="revolt", now=T0)
    with UnitOfWork(db) as uow:
        state = load_state(uow, "g1")
        hand_set = position(REVOLT)
        players = tuple(replace(p, nation=p.nation) for p in state.players)
        nations = type(hand_set.nations)(
            (name, replace(n, player_id=next(p.id for p in players if p.nation == name)))
            for name, n in hand_set.nations.items())
        at = replace(hand_set, game_id=state.game_id, version=state.version, players=players, nations=nations,
                     options=state.options, seed_commitment=state.seed_commitment, revision=state.revision,
                     turn=state.turn)
        at = replace(fold(at, resume(at, Draws("revolt"))), version=state.version)  # the revolt strikes: Crete is asked
        # the phase begins with the first event after the snapshot, so its report replays from the hand-set position
        at = replace(at, phase_began=state.version + 1)
        uow.snapshots.save("g1", state.version, state_to_json(at), ENGINE_VERSION, T0)
    RECENT.forget()
    (prompt,) = pending(at).values()
    assert prompt.who == "crete" and "Choose up to 2, in order of preference" in prompt.question

    receipt = submit(db, settings, "g1", "Ann", "PICK Athens, Knossos, Corinth, Cyrene", now=T0)
    assert receipt.errors == [] and receipt.accepted == ["PICK Athens, Knossos, Corinth, Cyrene"]
    # the acknowledgement says which of the cities were used, which passed over and which not needed
    assert receipt.notes == [
        "Slave Revolt (Crete): Crete's Athens reduced to 2 tokens (chosen by Crete). Kept for a further choice: "
        "Knossos, Corinth, Cyrene.",
        "Slave Revolt (Crete): Crete's Corinth reduced to 2 tokens (chosen by Crete: the next of the cities it named "
        "in order of preference). Knossos is passed over (not a city this choice may take); kept for a further "
        "choice: Cyrene.",
        "Slave Revolt: Crete's further cities named in order of preference were not needed: Cyrene.",
    ]
    with UnitOfWork(db) as uow:
        after = load_state(uow, "g1")
        kinds = [e.type for e in uow.events.read("g1", after=state.version)]
    assert kinds[:4] == ["CalamityCitiesChosen", "CalamityCitiesPreferred", "CalamityPreferencesUnused", "CalamityResolved"]
    assert after.area("Athens").city is None and after.area("Corinth").city is None
    assert after.area("Cyrene").city == "Crete" and after.area("Aleppo").city == "Crete"
    report = "\n".join(t for t in _texts(db, "ann@example.org") if "Slave Revolt (Crete)" in t)
    assert "Crete's Athens reduced to 2 tokens (chosen by Crete). Kept for a further choice: Knossos, Corinth, Cyrene." in report
    assert "Knossos is passed over (not a city this choice may take)" in report
    assert "further cities named in order of preference were not needed: Cyrene" in report
    RECENT.forget()
