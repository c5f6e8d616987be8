"""Phase 5a under Small Cities (seed 000: 1; SC-1 to SC-5): TOWN orders, the prompt, defaults, narration."""

from __future__ import annotations

import pytest

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.rejection import Rejection
from pbem.rules.engine import describe_event
from pbem.rules.phases.cities.towns import AS_MANY, BuildTowns

from .casefile import position, within_phase

DRAWS = Draws("towns")
SMALL = {"variant-small-cities": "on"}


def game(areas, nations=None, options=SMALL):
    case = {"players": 6, "phase": "city-construction", "options": options,
            "nations": nations or {"Egypt": {}, "Babylon": {}}, "areas": areas}
    state = position(case)
    return E.fold(state, here(E.resume(state, DRAWS)))


def here(events):
    return within_phase("city-construction", events)


def send(state, text, player_id=1):
    """Every line of ``text`` decided in turn, as the mail loop does with one reply."""
    events = []
    for line in parse_orders(text, state, Actor(player_id=player_id)).lines:
        assert line.command is not None, line.error
        step = here(E.decide(state, line.command, DRAWS))
        state = E.fold(state, step)
        events += step
    return state, events


def test_town_orders_are_read_forgivingly_and_written_back():
    state = game({"Memphis": {"tokens": {"Egypt": 3}}, "Sinai": {"tokens": {"Egypt": 4}}})
    (line,) = parse_orders("town memphis 2, sinai", state, Actor(player_id=1)).lines
    assert line.command == BuildTowns(1, (("Memphis", 2, 0), ("Sinai", AS_MANY, 0)))
    assert line.canonical == "TOWN Memphis 2, Sinai"
    (line,) = parse_orders("TOWN Memphis 3 treasury 2", state, Actor(player_id=1)).lines
    assert line.command == BuildTowns(1, (("Memphis", 3, 2),)) and line.canonical == "TOWN Memphis 3 TREASURY 2"
    (line,) = parse_orders("TOWN Memphis 3 TREASURY", state, Actor(player_id=1)).lines
    assert line.error and "how many towns come from treasury" in line.error
    (line,) = parse_orders("TOWN", state, Actor(player_id=1)).lines
    assert line.error


def test_lines_are_collected_until_done_and_the_prompt_shows_them():
    state = game({"Memphis": {"tokens": {"Egypt": 3}}, "Sinai": {"tokens": {"Egypt": 4}},
                  "Susa": {"tokens": {"Babylon": 6}}})
    prompt = E.pending(state)["egypt"]
    assert prompt.template == "TOWN Memphis, Sinai\nDONE"
    assert "then DONE" in prompt.question
    state, events = send(state, "TOWN Memphis 2")
    assert [e.type for e in events] == ["TownsOrdered"]
    prompt = E.pending(state)["egypt"]
    assert any("On file: TOWN Memphis 2" in line for line in prompt.situation)
    assert "TOWN Memphis 1\nDONE" in prompt.choices  # one token left there
    state, events = send(state, "TOWN Sinai 2\nDONE")
    assert set(E.pending(state)) == {"babylon"}
    state, events = send(state, "DONE", player_id=2)
    assert state.area("Memphis").towns == {"Egypt": 2} and state.area("Memphis").tokens == {"Egypt": 1}
    assert state.area("Sinai").towns == {"Egypt": 2} and not state.area("Sinai").tokens


def test_every_choice_offered_is_a_whole_answer_that_works():
    nations = {"Egypt": {"treasury": 6, "civ_cards": ["Architecture"]}, "Babylon": {}}
    areas = {"Memphis": {"tokens": {"Egypt": 3}}, "Thebes": {"tokens": {"Egypt": 6}}, "Sinai": {"tokens": {"Egypt": 4}}}
    state = game(areas, nations)
    prompt = E.pending(state)["egypt"]
    assert "BUILD Thebes\nDONE" in prompt.choices and "TOWN Memphis 3 TREASURY 3\nDONE" in prompt.choices
    for choice in prompt.choices:
        after, _ = send(state, choice)
        assert "egypt" not in E.pending(after) or after.step == "resolve", choice


def test_the_deadline_keeps_what_was_sent():
    state = game({"Memphis": {"tokens": {"Egypt": 3}}})
    state, _ = send(state, "TOWN Memphis 3")
    assert E.pending(state)["egypt"].default.startswith("what you have sent stands")
    state = E.fold(state, here(E.decide(state, PassDeadline(), DRAWS)))
    assert state.area("Memphis").towns == {"Egypt": 3}


def test_a_city_and_towns_never_share_an_area():
    state = game({"Memphis": {"tokens": {"Egypt": 6}}, "Thebes": {"tokens": {"Egypt": 6}}})
    after, _ = send(state, "TOWN Memphis 2")
    with pytest.raises(Rejection, match="you ordered towns there"):
        send(after, "BUILD Memphis")
    after, _ = send(state, "BUILD Thebes")
    with pytest.raises(Rejection, match="you ordered a city there"):
        send(after, "TOWN Thebes 2")


def test_towns_are_refused_without_the_variant():
    state = game({"Memphis": {"tokens": {"Egypt": 6}}}, options={})
    with pytest.raises(Rejection, match="only in the Small Cities variant"):
        send(state, "TOWN Memphis 2")


def test_orders_stay_secret_and_the_outcome_is_told():
    state = game({"Memphis": {"tokens": {"Egypt": 3}}, "Susa": {"tokens": {"Babylon": 6}}})
    state, events = send(state, "TOWN Memphis 3\nDONE")
    ordered = next(e for e in events if e.type == "TownsOrdered")
    assert describe_event(state, ordered, "player:babylon") == "Egypt has given its town orders."
    assert describe_event(state, ordered, "player:egypt") == "Egypt orders: TOWN Memphis 3."
    state, events = send(state, "DONE", player_id=2)
    built = next(e for e in events if e.type == "TownsBuilt")
    assert describe_event(state, built) == "Egypt made 3 towns in Memphis."
    assert "SC-1" in built.cites


def test_after_each_line_on_file_every_choice_offered_is_still_accepted():
    """The prompt after BUILD or TOWN lines on file offers only what the treasury, the Architecture caps and
    the areas still allow (a second line from the first prompt's choices could be refused before)."""
    nations = {"Egypt": {"treasury": 10, "civ_cards": ["Architecture"]}, "Babylon": {}}
    areas = {"Memphis": {"tokens": {"Egypt": 3}}, "Thebes": {"tokens": {"Egypt": 3}}, "Sinai": {"tokens": {"Egypt": 4}},
             "Susa": {"tokens": {"Babylon": 6}}}
    for first in ("BUILD Thebes TREASURY 3", "TOWN Memphis 2 TREASURY 2", "TOWN Memphis 3 TREASURY 3", "TOWN Sinai 1"):
        state, _ = send(game(areas, nations), first)
        prompt = E.pending(state)["egypt"]
        for choice in prompt.choices:
            send(state, choice)  # raises Rejection if the engine refuses an offered line
