"""The log's own events (`pbem.rules.ledger`) and a log with rollbacks (`pbem.rules.branches`), as pure functions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pbem.rules import engine as E
from pbem.rules import table
from pbem.rules.branches import fold_log, restored, roll_back, superseded, walk
from pbem.rules.core.commands import (
    Kick,
    QueueOrders,
    ReplacePlayer,
    RevealSeed,
    RollBack,
)
from pbem.rules.core.draws import Draws, commitment
from pbem.rules.core.events import Event
from pbem.rules.core.rejection import Rejection
from pbem.rules.ledger import revealed_seed
from pbem.rules.phases.setup import ChooseNation, PlaceStartToken

SEED = "branch-seed"
THREE = [(1, "Ann", None), (2, "Ben", None), (3, "Cy", None)]


class Log:
    """A game as its log: the events and the state they fold to, played through the engine."""

    def __init__(self) -> None:
        self.draws = Draws(SEED)
        self.events: list[Event] = list(E.create("g", THREE, {}, commitment(SEED), self.draws))

    @property
    def state(self):
        return fold_log("g", self.events)

    def order(self, command) -> None:
        self.events += E.decide(self.state, command, self.draws)

    def rollback(self, to: int, reason: str = "a mistake") -> None:
        self.events += roll_back(self.events, RollBack(to, reason))


def first_choice(log: Log) -> tuple[int, int]:
    """The first player chooses Crete and places in Knossos; returns (his id, the version before)."""
    (prompt,) = E.pending(log.state).values()
    before = len(log.events)
    log.order(ChooseNation(prompt.player_id, "Crete"))
    log.order(PlaceStartToken(prompt.player_id, "Knossos"))
    return prompt.player_id, before


def test_a_rollback_restores_the_board_and_hands_of_its_target_and_numbers_on_from_the_log():
    log = Log()
    who, before = first_choice(log)
    assert log.state.player(who).nation == "Crete"
    log.rollback(before)
    state = log.state
    assert state.version == len(log.events)
    assert state.player(who).nation is None and state.area("Knossos").tokens == {}
    assert superseded(log.events) == {v: len(log.events) for v in range(before + 1, len(log.events))}
    # the game goes on from there, and the same choice can be made again
    log.order(ChooseNation(who, "Thrace"))
    assert log.state.player(who).nation == "Thrace"


def test_a_rollback_is_refused_where_the_log_cannot_be_taken_back_to():
    log = Log()
    _, before = first_choice(log)
    head = len(log.events)
    with pytest.raises(Rejection, match="not before the head"):
        roll_back(log.events, RollBack(head, "x"))
    with pytest.raises(Rejection, match="falls inside the outcomes of one order"):
        roll_back(log.events, RollBack(1, "x"))
    with pytest.raises(Rejection, match="needs a reason"):
        roll_back(log.events, RollBack(before, "  "))
    log.rollback(before)
    with pytest.raises(Rejection, match=f"undone by the rollback at version {head + 1}"):
        roll_back(log.events, RollBack(before + 1, "x"))


def test_the_table_stays_as_it_is_now_but_orders_kept_for_a_turn_go_back_with_the_position():
    log = Log()
    who, before = first_choice(log)
    later = [p.id for p in log.state.players if p.id != who][-1]
    log.order(ReplacePlayer(later, "Dora", "Cy left"))
    log.order(Kick(later, "away for good"))
    log.order(QueueOrders(who, ("MOVE 1 Knossos Crete",)))
    log.rollback(before)
    state = log.state
    assert state.player(later).name == "Dora" and table.seat_generation(state, later) == 1
    assert table.kicked(state) == {later: "away for good"}
    assert table.queued_orders(state, who) == ()


def test_walk_gives_each_event_the_state_before_it_along_the_branch_that_counted_then():
    log = Log()
    _, before = first_choice(log)
    log.rollback(before)
    steps = list(walk("g", log.events))
    assert [v for v, *_ in steps] == list(range(1, len(log.events) + 1))
    assert steps[-1][3] == log.state
    rollback_step = steps[-1]
    assert rollback_step[2].type == "RolledBack" and rollback_step[1].player(1).nation in (None, "Crete")
    assert restored(fold_log("g", log.events[:before]), rollback_step[1], len(log.events)) == log.state


def test_folding_a_rollback_alone_is_refused_rather_than_done_wrong():
    log = Log()
    _, before = first_choice(log)
    log.rollback(before)
    with pytest.raises(ValueError, match="folded with the whole log"):
        E.fold(E.new_game("g"), log.events)


def test_the_seed_is_checked_against_the_commitment_and_public_only_once_the_game_has_ended():
    log = Log()
    with pytest.raises(Rejection, match="not the seed this game committed to"):
        E.decide(log.state, RevealSeed("guess", "moderator"), log.draws)
    with pytest.raises(Rejection, match="only when the game has ended"):
        E.decide(log.state, RevealSeed(SEED, "everyone"), log.draws)
    log.order(RevealSeed(SEED, "moderator"))
    (event,) = log.events[-1:]
    state = log.state
    assert revealed_seed(state, "moderator") == SEED and revealed_seed(state, "auditor") is None
    assert revealed_seed(state, "player:crete") is None
    assert SEED in E.describe_event(state, event, "moderator")
    for viewer in ("observer", "auditor", "player:crete"):
        told = E.describe_event(state, event, viewer)
        assert "asked for the game's secret seed" in told and SEED not in told
    finished = replace(log.state, finished=True)
    (public,) = E.decide(finished, RevealSeed(SEED, "everyone"), log.draws)
    assert SEED in E.describe_event(finished, public, "player:crete")
    assert revealed_seed(E.apply(finished, public), "observer") == SEED
    with pytest.raises(Rejection, match="the seed is public"):
        roll_back([*log.events, public], RollBack(len(log.events) - 1, "too late"))
