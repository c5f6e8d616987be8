"""Phase 3 (ships and movement): the order language, refusals, prompts, defaults, narration."""

from __future__ import annotations

import pytest

from pbem.orders.language import VERBS, Actor, parse_orders
from pbem.orders.movement import VERBS as MOVEMENT_VERBS
from pbem.rules import engine as E
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.phase import phase_ended
from pbem.rules.core.rejection import Rejection
from pbem.rules.engine import describe_event
from pbem.rules.phases import movement as M
from pbem.rules.phases.movement.turns import (
    MAX_CHOICES,
    SHIPS,
    BuildShip,
    EndMoves,
    KeepShip,
    MoveTokens,
    SailShip,
    ScrapShip,
)

from .casefile import position

DRAWS = Draws("movement")


def game(step: str = "moves", **areas):
    """Egypt (player 1) and Crete (player 2) on the six-player board, at the start of 3a or 3b."""
    nations = areas.pop("nations", {"Egypt": {"treasury": 3}, "Crete": {}})
    case = {"players": 6, "phase": "movement", "step": step, "nations": nations, "areas": areas}
    state = position(case)
    return E.fold(state, E.resume(state, DRAWS))


def start(step: str = "moves", **areas):
    """Like `game`, but from the very beginning of the phase (3a), then on to ``step``."""
    state = game("", **areas)
    if step == "moves":
        while state.step == SHIPS:
            (prompt,) = E.pending(state).values()
            state = E.fold(state, E.decide(state, EndMoves(prompt.player_id), DRAWS))
    return state


def parse(text, state=None, player=1):
    state = state or game(Thebes={"tokens": {"Egypt": 4}})
    return parse_orders(text, state, Actor(player_id=player))


def order(state, text, player=1):
    """Decide every line of ``text`` for ``player``; return the new state and the events."""
    events = []
    for line in parse(text, state, player).lines:
        assert not line.error, line.error
        batch = E.decide(state, line.command, DRAWS)
        events += batch
        state = E.fold(state, batch)
    return state, events


def refused(state, text, player=1) -> str:
    (line,) = parse(text, state, player).lines
    if line.error:
        return line.error
    with pytest.raises(Rejection) as exc:
        E.decide(state, line.command, DRAWS)
    return str(exc.value)


# -- the order language ----------------------------------------------------------------


def test_verbs_read_counts_and_areas_and_write_them_back():
    lines = parse(
        "MOVE 3 Thebes Buhen\nmove all thebes buhen\nmov 2 Eastern Desert Sinai\nMOVE 2 eastern desert > sinai\n"
        "SAIL 4 Tanis Gaza\nsail tanis gaza\nSHIP Tanis\nship tanis levy\nSHIP Tanis LEVY 1\nKEEP Tanis\n"
        "keep tanis levy\nSCRAP Tanis\nhalt"
    ).lines
    assert [line.command for line in lines] == [
        MoveTokens(1, 3, "Thebes", "Buhen"),
        MoveTokens(1, None, "Thebes", "Buhen"),
        MoveTokens(1, 2, "Eastern Desert", "Sinai"),
        MoveTokens(1, 2, "Eastern Desert", "Sinai"),
        SailShip(1, 4, "Tanis", "Gaza"),
        SailShip(1, None, "Tanis", "Gaza"),
        BuildShip(1, "Tanis"),
        BuildShip(1, "Tanis", 2),
        BuildShip(1, "Tanis", 1),
        KeepShip(1, "Tanis"),
        KeepShip(1, "Tanis", True),
        ScrapShip(1, "Tanis"),
        EndMoves(1),
    ]
    assert [line.canonical for line in lines[:2]] == ["MOVE 3 Thebes > Buhen", "MOVE ALL Thebes > Buhen"]
    assert lines[8].canonical == "SHIP Tanis LEVY 1" and lines[10].canonical == "KEEP Tanis LEVY"


def test_bad_lines_say_what_is_wrong():
    errors = [line.error for line in parse("MOVE 3 Thebes\nMOVE 0 Thebes Buhen\nHALT now\nSHIP Tanis LEVY 3\nSAIL 2 Atlantis Gaza").lines]
    assert "two areas" in errors[0]
    assert "at least 1" in errors[1]
    assert "nothing more" in errors[2]
    assert "levy 0, 1 or 2" in errors[3]
    assert "Atlantis" in errors[4]


def test_movement_verbs_have_their_own_three_letter_prefixes():
    others = {v[:3] for v in VERBS if v not in MOVEMENT_VERBS}
    assert not {v[:3] for v in MOVEMENT_VERBS} & others
    assert len({v[:3] for v in MOVEMENT_VERBS}) == len(MOVEMENT_VERBS)


# -- refusals ------------------------------------------------------------------------------


def test_a_move_to_an_area_not_next_door_is_refused_with_the_neighbours():
    reason = refused(game(Thebes={"tokens": {"Egypt": 4}}), "MOVE 2 Thebes Tanis")
    assert "does not border Thebes" in reason and "Buhen, Nubia, Ptolemais" in reason and "§23" in reason


def test_too_many_tokens_is_refused():
    assert "only 4 tokens in Thebes" in refused(game(Thebes={"tokens": {"Egypt": 4}}), "MOVE 5 Thebes Buhen")
    assert "no tokens in Buhen" in refused(game(Thebes={"tokens": {"Egypt": 4}}), "MOVE 1 Buhen Thebes")
    state = game(Tanis={"tokens": {"Egypt": 8}, "ships": {"Egypt": 1}})
    assert "at most 5" in refused(state, "SAIL 6 Tanis Gaza")


def test_moving_twice_is_refused():
    state, _ = order(game(Thebes={"tokens": {"Egypt": 4}}), "MOVE 4 Thebes Buhen")
    reason = refused(state, "MOVE 1 Buhen Upper Egypt")
    assert "have not moved yet" in reason and "moves once" in reason


def test_open_sea_without_astronomy_is_refused_and_allowed_with_it():
    areas = {"Tanis": {"tokens": {"Egypt": 3}, "ships": {"Egypt": 1}}}
    assert "Astronomy" in refused(game(**areas), "SAIL 3 Tanis Knossos")
    nations = {"Egypt": {"civ_cards": ["Astronomy"]}, "Crete": {}}
    _, events = order(game(nations=nations, **areas), "SAIL 3 Tanis Knossos")
    assert events[0].data["route"] == ["Tanis", "Eastern Mediterranean", "Knossos"]
    assert "§23.54" in events[0].cites


def test_orders_out_of_turn_or_out_of_phase_are_refused():
    state = game(Thebes={"tokens": {"Egypt": 4}}, Knossos={"tokens": {"Crete": 2}})
    assert "Egypt's turn" in refused(state, "MOVE 1 Knossos Phaestos", player=2)
    assert "3a" in refused(state, "SHIP Tanis")
    assert "nothing is waiting" in refused(E.fold(state, [phase_ended("movement")]), "HALT")
    assert "only in phase 3" in refused(E.fold(state, [phase_ended("movement")]), "MOVE 1 Thebes Buhen")


def test_a_ship_that_sailed_cannot_sail_again():
    state, _ = order(game(Tanis={"tokens": {"Egypt": 2}, "ships": {"Egypt": 1}}), "SAIL 2 Tanis Gaza")
    assert "already sailed" in refused(state, "SAIL 0 Gaza Tanis")


# -- prompts, choices, defaults ---------------------------------------------------------------


def _all_choices_are_legal(state):
    prompts = E.pending(state)
    assert len(prompts) == 1
    (prompt,) = prompts.values()
    assert prompt.choices[0] == "HALT" and len(prompt.choices) <= MAX_CHOICES
    assert prompt.default
    for choice in prompt.choices:
        after, _ = order(state, choice, prompt.player_id)
        assert after.step != state.step or prompt.who not in E.pending(after), choice
    return prompt


def test_every_choice_is_a_complete_legal_answer():
    areas = {
        "Tanis": {"tokens": {"Egypt": 6}, "ships": {"Egypt": 1}},
        "Thebes": {"tokens": {"Egypt": 3}},
        "Gaza": {"city": "Crete", "ships": {"Egypt": 1}},
        "Knossos": {"tokens": {"Crete": 2}},
    }
    ships = _all_choices_are_legal(game("", **areas))
    assert ships.step == "ship-construction" and "SHIP Tanis\nHALT" in ships.choices and "SCRAP Gaza\nHALT" in ships.choices
    moves = _all_choices_are_legal(start("moves", **areas))
    assert moves.step == "movement" and "MOVE 3 Thebes Buhen\nHALT" in moves.choices
    assert any(c.startswith("SAIL 5 Tanis ") for c in moves.choices)


def test_ship_default_builds_nothing_and_pays_upkeep_as_stated():
    state = game("", Tanis={"tokens": {"Egypt": 1}, "ships": {"Egypt": 2}})
    (prompt,) = E.pending(state).values()
    assert "no ship is built" in prompt.default and "treasury" in prompt.default and "returns to stock" in prompt.default
    events = E.decide(state, PassDeadline(), DRAWS)
    assert [e.type for e in events][:3] == ["DeadlinePassed", "ShipOrdersDone", "UpkeepCollected"]
    assert events[1].data["by_default"] and not E.is_input(events[1])
    assert events[2].data["paid"] == [{"area": "Tanis", "treasury": 1, "levy": 0}] * 2


def test_movement_default_moves_nothing_more():
    state, _ = order(game(Thebes={"tokens": {"Egypt": 4}}, Knossos={"tokens": {"Crete": 2}}), "MOVE 1 Thebes Nubia")
    (prompt,) = E.pending(state).values()
    assert "moves already accepted stand" in prompt.default
    events = E.decide(state, PassDeadline(), DRAWS)
    assert [e.type for e in events] == ["DeadlinePassed", "MovesDone"]
    after = E.fold(state, events)
    assert list(E.pending(after)) == ["crete"] and after.area("Thebes").tokens["Egypt"] == 3


def test_orders_are_recorded_so_verify_can_decide_them_again():
    state = game("", Tanis={"tokens": {"Egypt": 6}, "ships": {"Egypt": 1}}, Thebes={"tokens": {"Egypt": 2}})
    state, events = order(state, "KEEP Tanis LEVY\nSHIP Tanis\nHALT")
    state2, more = order(state, "MOVE ALL Thebes Buhen\nSAIL Tanis Gaza\nHALT")
    replayed = game("", Tanis={"tokens": {"Egypt": 6}, "ships": {"Egypt": 1}}, Thebes={"tokens": {"Egypt": 2}})
    for event in events + more:
        if E.is_input(event):
            again = E.decide(replayed, E.command_for(replayed, event), DRAWS)
            assert again[0] == event
            replayed = E.fold(replayed, again)
        else:
            assert event in again
    assert replayed == state2
    sailed = next(e for e in more if e.type == "TokensSailed")
    assert sailed.data["count"] == 5  # SAIL without a number: as many as the ship holds


# -- narration -----------------------------------------------------------------------------


def test_every_event_is_told_in_one_sentence():
    state = game("", Tanis={"tokens": {"Egypt": 6}, "ships": {"Egypt": 2}}, Sinai={"tokens": {"Egypt": 1}},
                 Gaza={"city": "Crete"}, Knossos={"tokens": {"Crete": 1}})
    start_state = state
    state, events = order(state, "SCRAP Tanis\nSHIP Tanis LEVY 2\nHALT")
    more = []  # Crete can neither keep nor build a ship, so it is not asked in 3a
    state, moves = order(state, "MOVE 1 Sinai Gaza\nSAIL 3 Tanis Gaza\nHALT")
    told = {}
    s = start_state
    for event in events + more + moves:
        told[event.type] = describe_event(s, event)
        s = E.apply(s, event)
    assert told["ShipScrapped"] == "Egypt gave up its ship in Tanis; it returns to stock."
    assert told["ShipBuilt"] == "Egypt built a ship in Tanis (2 tokens levied there)."
    assert told["UpkeepCollected"] == "Egypt paid upkeep for ships in Tanis (1 from treasury)."
    assert told["TokensMoved"] == "Egypt moved 1 token from Sinai to Gaza."
    assert told["CityAttacked"] == "Egypt entered Gaza, attacking Crete's city; the attack is resolved in the conflict phase."
    assert told["TokensSailed"] == "Egypt sailed a ship with 3 tokens from Tanis to Gaza (Tanis > Gaza)."
    assert told["MovesDone"] == "Egypt finished moving."
    assert told["ShipConstructionEnded"] == "Ship construction is over; movement begins."
    for kind in M.RULES.narrate:
        if kind in told:
            assert told[kind].endswith(".") and told[kind].count(". ") == 0, told[kind]
