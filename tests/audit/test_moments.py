"""Moments named as a moderator names them ("turn 2 movement", "before 41") come to the right version of a log."""

from __future__ import annotations

import pytest

from pbem.orders.moments import Moment, phase_named, read_moment
from pbem.rules.branches import fold_log, resting, roll_back, rollback_target, walk
from pbem.rules.core.commands import RollBack
from pbem.rules.core.events import Event
from pbem.rules.core.rejection import Rejection
from pbem.rules.engine import is_input
from pbem.service.projector import load_state
from pbem.service.simulate import simulate
from pbem.store.database import make_engine
from pbem.store.unit_of_work import UnitOfWork

GAME = "sim-moments"


@pytest.fixture(scope="module")
def events(tmp_path_factory):
    """Two turns of three bots: the log every case below reads."""
    url = f"sqlite:///{tmp_path_factory.mktemp('moments') / 'game.sqlite'}"
    simulate(3, 2, "moments", db_url=url)
    db = make_engine(url)
    try:
        with UnitOfWork(db) as uow:
            return [Event.from_payload(r.type, r.payload) for r in uow.events.read(GAME)]
    finally:
        db.dispose()


@pytest.mark.parametrize("words, phase, used", [
    ("movement", "movement", 1), ("trade", "trade", 1), ("trade cards", "trade-card-acquisition", 2),
    ("calamity selection", "calamity-selection", 2), ("phase 3", "movement", 2), ("cities", "city-construction", 1),
    ("A.S.T. alteration", "ast-alteration", 2), ("tax", "tax-collection", 1), ("special abilities x", "special-abilities", 2),
])
def test_a_phase_is_named_by_its_title_words_or_number(words, phase, used):
    assert phase_named(words.split()) == (phase, used)


@pytest.mark.parametrize("words", ["calamity", "Egypt", "the", "phase 14", ""])
def test_words_that_fit_no_single_phase_name_none(words):
    assert phase_named(words.split()) is None


def test_a_moment_is_read_off_the_head_of_a_line_and_the_reason_left():
    assert read_moment("TO turn 3 movement Egypt slipped".split()) == (Moment(turn=3, phase="movement"), ["Egypt", "slipped"])
    assert read_moment("BEFORE 41 a slip".split()) == (Moment(version=41, before=True), ["a", "slip"])
    assert read_moment("41 a slip".split()) == (Moment(version=41), ["a", "slip"])
    assert read_moment("turn 2 the reason".split()) == (Moment(turn=2), ["the", "reason"])
    assert read_moment("BEFORE turn 2".split()) is None and read_moment("soon please".split()) is None


def test_turn_and_phase_come_to_the_first_version_the_game_waited_at_in_them(events):
    target = rollback_target(GAME, events, RollBack(0, "r", turn=2, phase="movement"))
    states = {version: after for version, _before, _event, after in walk(GAME, events)}
    assert (states[target].turn, states[target].phase) == (2, "movement") and resting(events, target)
    assert not any(resting(events, v) and (states[v].turn, states[v].phase) == (2, "movement") for v in range(1, target))
    whole = rollback_target(GAME, events, RollBack(0, "r", turn=2))
    assert whole <= target and states[whole].turn == 2 and resting(events, whole)
    assert not any(resting(events, v) and states[v].turn == 2 for v in range(1, whole))
    with pytest.raises(Rejection, match="never waited for an order in turn 9"):
        rollback_target(GAME, events, RollBack(0, "r", turn=9))


def test_before_a_version_is_where_the_game_waited_before_the_order_that_caused_it(events):
    inputs = [v for v in range(2, len(events)) if is_input(events[v - 1])]
    order = next(v for v in inputs[len(inputs) // 2:] if not is_input(events[v]))  # an order with an outcome after it
    assert rollback_target(GAME, events, RollBack(order, "r", before=True)) == order - 1
    assert rollback_target(GAME, events, RollBack(order + 1, "r", before=True)) == order - 1  # its outcome: the same
    (event,) = roll_back(events, RollBack(order, "a slip", before=True), GAME)
    assert event.data == {"to": order - 1, "reason": "a slip"}


def test_after_a_rollback_a_turn_names_the_branch_that_counts(events):
    first = rollback_target(GAME, events, RollBack(0, "r", turn=2, phase="movement"))
    log = [*events, *roll_back(events, RollBack(first, "again"), GAME)]
    # the game plays on from the target; the superseded stretch holds turn 2's movement too, and is skipped
    assert rollback_target(GAME, log, RollBack(0, "r", turn=2, phase="movement")) == first
    assert fold_log(GAME, log).version == len(log)
    with pytest.raises(Rejection, match="already undone"):
        rollback_target(GAME, log, RollBack(first + 1, "r", before=True))
