"""Cities named in order of preference (issue 29): the prompt says how many, the log re-derives, the report tells."""

from __future__ import annotations

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.draws import Draws
from pbem.rules.core.rejection import Rejection

from .casefile import position

DRAWS = Draws("preferences")
#: 4 Egyptian cities, all 15 tokens kept from supporting them by the revolt: 8 short, each reduction covers 4.
REVOLT = {
    "players": 3,
    "phase": "calamity-resolution",
    "calamities": [["Slave Revolt", "Egypt", ""]],
    "nations": {"Egypt": {}, "Crete": {}, "Babylon": {}},
    "areas": {
        **{a: {"city": "Egypt"} for a in ("Aleppo", "Athens", "Corinth", "Cyrene")},
        "Thebes": {"tokens": {"Egypt": 3}}, "Memphis": {"tokens": {"Egypt": 3}}, "Alexandria": {"tokens": {"Egypt": 4}},
        "Babylon": {"tokens": {"Egypt": 2}}, "Ur": {"tokens": {"Egypt": 3}},
    },
}


def _asked():
    state = position(REVOLT)
    state = E.fold(state, E.resume(state, DRAWS))
    (prompt,) = E.pending(state).values()
    return state, prompt


def _play(state, text):
    events = []
    for line in parse_orders(text, state, Actor(player_id=state.nations["Egypt"].player_id)).lines:
        assert line.command is not None, line.error
        batch = E.decide(state, line.command, DRAWS)
        events += batch
        state = E.fold(state, batch)
    return state, events


def test_the_prompt_says_how_many_cities_it_will_ask_for_and_offers_them_in_one_pick():
    _, prompt = _asked()
    assert "2 of your cities must be reduced, one at a time" in prompt.question
    assert "Choose up to 2, in order of preference" in prompt.question
    assert prompt.template == "PICK Aleppo, Athens"


def test_one_pick_answers_every_ask_and_the_report_says_which_were_used():
    state, _ = _asked()
    after, events = _play(state, "PICK Cyrene, Aleppo, Athens")
    assert after.phase != "calamity-resolution" or after.step == "ended"
    told = [E.describe_event(state, e, "player:egypt") for e in events]
    assert "Egypt's Cyrene reduced to 3 tokens (chosen by Egypt). Kept for a further choice: Aleppo, Athens." in told[0]
    assert "Egypt's Aleppo reduced" in told[1] and "the next of the cities it named in order of preference" in told[1]
    assert "were not needed: Athens" in told[2]


def test_several_pick_lines_are_taken_in_turn_and_one_too_many_is_refused_as_not_needed():
    state, _ = _asked()
    parsed = parse_orders("PICK Cyrene\nPICK Aleppo\nPICK Athens", state, Actor(player_id=1)).lines
    after = state
    refused = []
    for line in parsed:
        try:
            after = E.fold(after, E.decide(after, line.command, DRAWS))
        except Rejection as exc:
            refused.append(str(exc))
    assert refused == ["no calamity asks you to choose cities now, so this pick is not needed (§29.6)"]
    assert after.area("Athens").city == "Egypt" and after.area("Cyrene").city is None


def test_the_log_re_derives_a_pick_of_preferences_from_its_first_event():
    state, _ = _asked()
    _, events = _play(state, "PICK Cyrene, Knossos, Aleppo")
    first = events[0]
    assert E.is_input(first) and not any(E.is_input(e) for e in events[1:])
    again = E.decide(state, E.command_for(state, first), DRAWS)
    assert [(e.type, e.payload()) for e in again] == [(e.type, e.payload()) for e in events]
