"""Phase 13 (§33-§35, seed 003: 13): A.S.T. movement, restacking, the end of the game and the scores."""

from __future__ import annotations

import pytest

from pbem.rules import engine as E
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.rejection import Rejection
from pbem.rules.engine import describe_event
from pbem.rules.phases.ast import final_standings, groups_covered

from .casefile import position

DRAWS = Draws("ast")
FIVE = {a: {"city": "Egypt"} for a in ("Thebes", "Memphis", "Alexandria", "Sinai", "Gaza")}


def start(nations, areas=None, **extra):
    case = {"players": 3, "phase": "ast-alteration", "nations": nations, "areas": areas or {}}
    case.update(extra)
    state = position(case)
    events = E.resume(state, DRAWS)
    return state, events


def test_dual_group_cards_count_both_groups():
    state, _ = start({"Egypt": {"civ_cards": ["Engineering", "Mysticism"]}, "Babylon": {}, "Crete": {}})
    assert groups_covered(state, "Egypt") == 4


def test_held_event_names_what_is_missing():
    state, events = start({"Egypt": {"ast_position": 3}, "Babylon": {}, "Crete": {}}, {"Thebes": {"city": "Egypt"}})
    held = next(e for e in events if e.type == "AstHeld")
    assert held.data["missing"] == ["2 cities on the board (has 1)"]
    text = describe_event(state, held, "observer")
    assert text == ("Egypt's A.S.T. marker is held on space 3: entering the Early Bronze Age needs 2 cities; "
                    "it lacks 2 cities on the board (has 1).")


def test_game_end_scores_and_stops():
    state, events = start(
        {"Egypt": {"ast_position": 15, "treasury": 4, "civ_cards": ["Pottery"], "hand": ["Salt", "Salt", "Famine"]},
         "Babylon": {"ast_position": 2}, "Crete": {}},
        FIVE,
    )
    types = [e.type for e in events]
    assert "GameEnded" in types and "PhaseEnded" not in types[types.index("GameEnded"):]
    state = E.fold(state, events)
    assert state.finished and E.pending(state) == {}
    ended = events[types.index("GameEnded")]
    egypt = ended.data["scores"][0]
    assert egypt == {"nation": "Egypt", "civ_cards": 45, "trade_cards": 12, "treasury": 4, "ast": 1600,
                     "cities": 250, "total": 1911, "ast_position": 16, "place": 1}
    assert ended.data["winner"] == "Egypt" and ended.data["finishers"] == ["Egypt"]
    text = describe_event(state, ended, "observer")
    assert text.startswith("The game ends: Egypt reached the finish of the A.S.T. Final scores: 1. Egypt 1911")
    assert text.endswith("Egypt wins.")
    with pytest.raises(Rejection, match="over"):
        E.decide(state, PassDeadline(), DRAWS)
    assert E.resume(state, DRAWS) == []


def test_ties_go_to_the_furthest_on_the_ast_then_ranking():
    state, _ = start({"Egypt": {"ast_position": 3}, "Babylon": {"ast_position": 3}, "Crete": {"ast_position": 2, "treasury": 100}})
    table = final_standings(state)
    assert [r["nation"] for r in table] == ["Babylon", "Egypt", "Crete"]  # Babylon ranks before Egypt (A.S.T. order 8, 9)


def test_time_limit_ends_the_game_after_the_agreed_turn():
    """§34: a time limit fixed before play; the option counts it in turns and the turn is finished first."""
    from pbem.rules.ruleset.options import OptionError, validate_options

    state, events = start({"Egypt": {"ast_position": 2}, "Babylon": {}, "Crete": {}}, FIVE,
                          turn=4, options={"last-turn": "4"})
    ended = next(e for e in events if e.type == "GameEnded")
    assert ended.data["finishers"] == [] and ended.data["last_turn"] == 4 and "last-turn" in ended.cites
    assert describe_event(state, ended, "observer").startswith(
        "The game ends: turn 4 was the last turn agreed for this game (§34). Final scores: 1. Egypt")
    _, events = start({"Egypt": {"ast_position": 2}, "Babylon": {}, "Crete": {}}, FIVE, turn=3, options={"last-turn": "4"})
    assert "GameEnded" not in [e.type for e in events]
    assert validate_options({"last-turn": "12"}) == {"last-turn": "12"}
    for bad in ("0", "soon", "-3"):
        with pytest.raises(OptionError, match="last-turn"):
            validate_options({"last-turn": bad})
