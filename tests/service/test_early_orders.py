"""Orders sent before one's turn in movement, through `pbem submit`'s use case: kept across steps 3a and 3b."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from pbem.rules import table
from pbem.rules.engine import pending
from pbem.rules.phases.movement.turns import census_turns
from pbem.service.games import NewPlayer, create_game, submit
from pbem.service.projector import load_state
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

PEOPLE = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
T0 = datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)
STARTS = {"Italy": ("Etruria", "Roma"), "Crete": ("Knossos", "Phaestos"), "Thrace": ("Scythia", "Dacia")}


def test_moves_sent_before_ones_turn_wait_through_ship_building_and_are_played_in_census_order(sqlite_url, tmp_path):
    settings = replace(Settings(), gather_minutes=0, db_url=sqlite_url, maildir=tmp_path / "mail")
    db = make_engine(sqlite_url)
    ensure_schema(db)
    create_game(db, settings, "g1", PEOPLE, seed="early", now=T0)

    def state():
        with UnitOfWork(db) as uow:
            return load_state(uow, "g1")

    def asked() -> str:
        s = state()
        (prompt,) = pending(s).values()
        return s.player(prompt.player_id).name

    for nation in STARTS:
        submit(db, settings, "g1", asked(), f"NATION {nation}\nPLACE {STARTS[nation][0]}", now=T0)
    s = state()
    assert s.phase == "movement" and s.step == "ships"
    order = census_turns(s)
    last = order[-1]
    who = s.player(s.nations[last].player_id).name
    home, away = STARTS[last]
    receipt = submit(db, settings, "g1", who, f"HALT\nMOVE 1 {home} {away}\nHALT", now=T0)
    assert receipt.errors == [] and all("kept" in a for a in receipt.accepted)
    assert table.queued_orders(state(), s.nations[last].player_id) == ("HALT", f"MOVE 1 {home} > {away}", "HALT")
    while state().step == "ships":  # the others end their ship building; his HALT is played when his turn comes
        submit(db, settings, "g1", asked(), "HALT", now=T0)
    assert table.queued_orders(state(), s.nations[last].player_id) == (f"MOVE 1 {home} > {away}", "HALT")
    for nation in order[:-1]:  # the others move (nothing); his move and HALT go when his turn comes
        assert state().step == "moves" and asked() == state().player(s.nations[nation].player_id).name
        submit(db, settings, "g1", asked(), "HALT", now=T0)
    after = state()
    assert (after.turn, after.phase) != (s.turn, s.phase), "his HALT, played from what he kept, ended the phase"
    with UnitOfWork(db) as uow:
        told = [(e.type, e.payload) for e in uow.events.read("g1") if e.type in ("QueuedOrdersTaken", "TokensMoved")]
    assert told[-2:] == [
        ("QueuedOrdersTaken", {"player": s.nations[last].player_id, "lines": [f"MOVE 1 {home} > {away}", "HALT"]}),
        ("TokensMoved", {"nation": last, "from": home, "to": away, "count": 1, "cites": ["Q-S1", "§23"]}),
    ]
    assert table.queued_orders(after, s.nations[last].player_id) == ()
