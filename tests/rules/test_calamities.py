"""Phases 8, 9 and 11 (R-3.3, D-14, §29, §30, D-9): selection, resolution, PICK, defaults, verify, narration."""

from __future__ import annotations

import re

import pytest

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.board.losses import LoseUnits
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.rejection import Rejection
from pbem.rules.engine import describe_event
from pbem.rules.phases.calamities.choosing import (
    GiveLosses,
    PickCities,
    quantity,
)

from .botplay import random_board, resolve_by_bots
from .casefile import position

DRAWS = Draws("calamities")
THREE = {"Egypt": {}, "Crete": {}, "Babylon": {}}


def game(phase, nations=None, areas=None, **extra):
    case = {"players": 3, "phase": phase, "nations": nations or THREE, "areas": areas or {}}
    case.update(extra)
    state = position(case)
    events = E.resume(state, DRAWS)
    return E.fold(state, events), events


def parse(text, state, player_id=1):
    (line,) = parse_orders(text, state, Actor(player_id=player_id)).lines
    return line


def decide(state, text, player_id=1):
    events = E.decide(state, parse(text, state, player_id).command, DRAWS)
    return E.fold(state, events), events


def until(events, phase):
    for i, e in enumerate(events):
        if e.type == "PhaseEnded" and e.data["phase"] == phase:
            return events[: i + 1]
    return events


# -- phase 8 -------------------------------------------------------------------------------------


def test_r33_three_calamities_two_kept_one_returned():
    case = {"players": 3, "phase": "calamity-selection", "nations": {"Egypt": {"hand": ["Famine", "Epidemic", "Piracy"]}, "Crete": {}, "Babylon": {}}}
    state = position(case)
    events = until(E.resume(state, DRAWS), "calamity-selection")
    state = E.fold(state, events)
    kept = [c for c, victim, _ in state.calamities if victim == "Egypt"]
    returned = [card for cards in state.returned.values() for card in cards]
    assert len(kept) == 2 and len(returned) == 1
    assert sorted(kept + returned) == ["Epidemic", "Famine", "Piracy"]
    limited = next(e for e in events if e.type == "CalamitiesLimited")
    assert limited.data["returned"] == returned
    # the draw is recorded: replaying the events needs no seed
    assert E.fold(position(case), events) == state


def test_selection_orders_by_stack_and_names_the_giver():
    nations = {"Egypt": {"hand": ["Epidemic", "Superstition"]}, "Crete": {"hand": ["Treachery"]}, "Babylon": {"hand": ["Famine"]}}
    state, events = game("calamity-selection", nations, calamity_givers=[["Egypt", "Epidemic", "Crete"], ["Egypt", "Superstition", "Babylon"], ["Crete", "Superstition", "Egypt"]])
    revealed = next(e for e in events if e.type == "CalamitiesRevealed")
    got = [(c["calamity"], c["victim"], c["giver"]) for c in revealed.data["calamities"]]
    # Superstition went Egypt -> Crete -> ... -> Egypt: the last trade to Egypt counts
    assert got == [("Treachery", "Crete", None), ("Famine", "Babylon", None), ("Superstition", "Egypt", "Babylon"), ("Epidemic", "Egypt", "Crete")]
    # who traded a card is between the two players (§28.3): the others read only the victim
    assert "Epidemic strikes Egypt." in describe_event(state, revealed, "observer")
    assert "traded" not in describe_event(state, revealed, "player:crete").split("Superstition strikes Egypt")[1].split(";")[0]
    for party in ("player:egypt", "player:crete", "moderator", "auditor"):
        assert "Epidemic strikes Egypt (traded by Crete)" in describe_event(state, revealed, party)


def test_non_tradable_calamity_never_has_a_giver():
    nations = {"Egypt": {"hand": ["Famine"]}, "Crete": {}, "Babylon": {}}
    _, events = game("calamity-selection", nations, calamity_givers=[["Egypt", "Famine", "Crete"]])
    revealed = next(e for e in events if e.type == "CalamitiesRevealed")
    assert revealed.data["calamities"][0]["giver"] is None


# -- numbers -------------------------------------------------------------------------------------


def test_quantities_follow_the_cards():
    def q(cards, calamity, role, name, base, hand=()):
        state = position({"players": 3, "phase": "calamity-resolution", "nations": {"Egypt": {"civ_cards": cards, "hand": list(hand)}, "Crete": {}, "Babylon": {}}})
        return quantity(state, "Egypt", calamity, role, name, base)

    assert q(["Medicine", "Roadbuilding"], "Epidemic", "primary", "unit_points", 16) == 13
    assert q(["Medicine", "Roadbuilding"], "Epidemic", "secondary", "assigned_unit_points", 10) == 10
    assert q(["Mining", "Enlightenment"], "Slave Revolt", "primary", "tokens_disabled", 15) == 15
    assert q(["Theology", "Roadbuilding"], "Iconoclasm & Heresy", "primary", "cities_reduced", 4) == 2
    assert q(["Mysticism", "Deism"], "Superstition", "primary", "cities_reduced", 3) == 1
    assert q(["Pottery"], "Famine", "primary", "unit_points", 10, ["Grain", "Grain"]) == 2
    assert q(["Engineering"], "Flood", "primary", "unit_points", 17) == 7
    assert q(["Music", "Drama & Poetry", "Democracy"], "Civil War", "primary", "victim_unit_points", 15) == 35


# -- phase 9 -------------------------------------------------------------------------------------


CITIES = {"Thebes": {"city": "Egypt"}, "Memphis": {"city": "Egypt"}, "Aleppo": {"city": "Egypt"}, "Athens": {"city": "Egypt"}}


def test_pick_prompt_choices_all_work_and_default_is_stated():
    state, _ = game("calamity-resolution", areas=CITIES, calamities=[["Superstition", "Egypt", ""]])
    (prompt,) = E.pending(state).values()
    assert prompt.who == "egypt" and prompt.step == "calamity-primary"
    assert len(prompt.choices) == 4  # 4 choose 3
    assert "Aleppo, Athens, Memphis" in prompt.default
    for choice in prompt.choices:
        after, events = decide(state, choice)
        assert events[0].type == "CalamityCitiesChosen"
        assert sum(1 for a in after.areas.values() if a.city == "Egypt") == 1


def test_pick_refusals():
    state, _ = game("calamity-resolution", areas={**CITIES, "Knossos": {"city": "Crete"}}, calamities=[["Superstition", "Egypt", ""]])
    for text, pid, words in (
        ("PICK Thebes, Memphis, Knossos", 1, "not a city you may choose"),
        ("PICK Thebes", 1, "exactly 3"),
        ("PICK Thebes, Memphis, Aleppo", 2, "no calamity asks you"),
    ):
        with pytest.raises(Rejection, match=re.escape(words)):
            decide(state, text, pid)
    assert parse("PICK", state).error


def test_pick_is_read_forgivingly_and_written_back():
    state, _ = game("calamity-resolution", areas=CITIES, calamities=[["Superstition", "Egypt", ""]])
    line = parse("pick thebes, memphis aleppo", state)
    assert line.command == PickCities(1, ("Thebes", "Memphis", "Aleppo")) or line.error
    line = parse("PIC thebes, memphis, aleppo", state)
    assert line.command == PickCities(1, ("Thebes", "Memphis", "Aleppo"))


def test_deadline_default_and_verify_re_decides():
    state, _ = game("calamity-resolution", areas=CITIES, calamities=[["Civil Disorder", "Egypt", ""], ["Treachery", "Egypt", "Crete"]])
    events = E.decide(state, PassDeadline(), DRAWS)
    chosen = next(e for e in events if e.type == "CalamityCitiesChosen")
    assert chosen.data["by_default"] and chosen.data["cities"][0]["area"] == "Aleppo"
    assert not E.is_input(chosen)
    state = E.fold(state, events)
    assert E.pending(state).keys() == {"crete"}  # Treachery: the trader chooses
    before = state
    state, events = decide(state, "PICK Memphis", 2)
    assert E.is_input(events[0])
    assert E.decide(before, E.command_for(before, events[0]), DRAWS) == events
    state = E.fold(before, until(events, "calamity-resolution"))
    assert state.area("Memphis").city == "Crete" and "Memphis" in state.gained_this_turn


def test_treachery_with_no_city_in_stock_eliminates():
    areas = {**CITIES, **{a: {"city": "Crete"} for a in ("Knossos", "Cyrene", "Corinth", "Sparta", "Susa", "Ur", "Babylon", "Alexandria", "Sidon")}}
    state, _ = game("calamity-resolution", areas=areas, calamities=[["Treachery", "Egypt", "Crete"]])
    state, events = decide(state, "PICK Thebes", 2)
    assert events[0].data["cities"][0]["effect"] == "eliminate"
    assert state.area("Thebes").city is None


def test_narration():
    state, _ = game("calamity-resolution", areas=CITIES, calamities=[["Treachery", "Egypt", "Crete"]])
    _, events = decide(state, "PICK Thebes", 2)
    assert describe_event(state, events[0], "observer") == "Treachery (Egypt): Egypt's Thebes becomes a city of Crete (chosen by Crete)."


# Every calamity of the packaged ruleset has a resolver; a house ruleset (option ruleset-data) may name one the
# engine does not know. These tests take a resolver away to stand for such a calamity.


def test_every_calamity_of_the_ruleset_has_a_resolver():
    from pbem.rules.phases.calamities.resolution import RESOLVERS
    from pbem.rules.ruleset.rulebook import ruleset_for_options

    assert set(ruleset_for_options({}).calamities) == set(RESOLVERS)


def test_a_calamity_without_resolver_waits_without_a_prompt(monkeypatch):
    from pbem.rules.phases.calamities import resolution as C

    monkeypatch.delitem(C.RESOLVERS, "Piracy")
    state, events = game("calamity-resolution", areas=CITIES, calamities=[["Piracy", "Egypt", None]])
    assert events == [] and E.pending(state) == {}
    assert state.calamities == (("Piracy", "Egypt", None),)


def test_a_calamity_without_resolver_is_returned_with_unplayable_phases_skip(monkeypatch):
    from pbem.rules.phases.calamities import resolution as C

    monkeypatch.delitem(C.RESOLVERS, "Piracy")
    case = {"players": 3, "phase": "calamity-resolution", "nations": {"Egypt": {"civ_cards": ["Enlightenment"]}, "Crete": {}, "Babylon": {}},
            "areas": CITIES, "calamities": [["Superstition", "Egypt", ""], ["Piracy", "Egypt", ""]],
            "options": {"unplayable-phases": "skip"}}
    before = position(case)
    events = until(E.resume(before, DRAWS), "calamity-resolution")
    assert [e.type for e in events] == ["CalamityStruck", "CalamityResolved", "CalamityNotPlayable", "PhaseEnded"]
    state = E.fold(before, events)
    assert state.returned.get(3) == ("Superstition",) and state.returned.get(9) == ("Piracy",)
    assert "cannot be resolved" in describe_event(before, events[2], "observer")


# -- phase 11 ------------------------------------------------------------------------------------


def test_phase_11_reduce_prompt_verify_and_refusal():
    areas = {"Thebes": {"city": "Egypt"}, "Memphis": {"city": "Egypt"}, "Cyrene": {"tokens": {"Egypt": 2}}}
    state, _ = game("surplus-removal", areas=areas)
    (prompt,) = E.pending(state).values()
    assert prompt.choices == ("REDUCE Memphis", "REDUCE Thebes")
    with pytest.raises(Rejection, match=re.escape("no city of yours")):
        decide(state, "REDUCE Thebes", 2)
    before = state
    state, events = decide(state, "REDUCE Thebes")
    assert events[0].type == "CitySupportReductionChosen"
    assert E.decide(before, E.command_for(before, events[0]), DRAWS) == events
    assert events[0].data["tokens"] == 3 and events[0].data["area"] == "Thebes"


# -- unit points: LOSE and GIVE ------------------------------------------------------------------


FAMINE_BOARD = {
    "Aleppo": {"city": "Egypt"}, "Thebes": {"city": "Egypt"}, "Cyrene": {"tokens": {"Egypt": 3}},
    "Memphis": {"tokens": {"Egypt": 3}}, "Babylon": {"tokens": {"Egypt": 2}},
}


def test_lose_is_read_and_written_back():
    from pbem.orders.language import CANONICAL

    state, _ = game("calamity-resolution", areas=FAMINE_BOARD, calamities=[["Famine", "Egypt", ""]])
    line = parse("lose aleppo red, cyrene 3, memphis 3; babylon 1", state)
    assert line.command == LoseUnits(1, (("Aleppo", "reduce", 1), ("Cyrene", "tokens", 3), ("Memphis", "tokens", 3), ("Babylon", "tokens", 1)))
    assert CANONICAL[LoseUnits](line.command) == "LOSE Aleppo REDUCE, Cyrene 3, Memphis 3, Babylon 1"
    assert parse("LOSE Cyrene lots", state).error
    give = parse("GIVE crete 8, babylon 8", state)
    assert give.command == GiveLosses(1, (("Crete", 8), ("Babylon", 8)))


def test_loss_prompt_choices_all_work_and_verify_re_decides():
    state, _ = game("calamity-resolution", areas=FAMINE_BOARD, calamities=[["Famine", "Egypt", ""]])
    (prompt,) = E.pending(state).values()
    assert prompt.step == "calamity-loss-primary" and 1 < len(prompt.choices) <= 60
    for choice in prompt.choices:
        before = state
        _, events = decide(state, choice)
        assert events[0].type == "CalamityLossChosen"
        assert sum(c["points"] for c in events[0].data["losses"]) == 10
        assert E.decide(before, E.command_for(before, events[0]), DRAWS) == events


def test_give_prompt_default_and_refusals():
    nations = {"Egypt": {}, "Crete": {}, "Babylon": {}, "Thrace": {}}
    case = {"players": 4, "phase": "calamity-resolution", "nations": nations, "areas": {"Cyrene": {"tokens": {"Egypt": 12}}},
            "calamities": [["Famine", "Egypt", ""]]}
    state = position(case)
    state = E.fold(state, E.resume(state, DRAWS))
    (prompt,) = E.pending(state).values()
    assert prompt.step == "calamity-assign"
    assert prompt.choices[0] == "GIVE Thrace 8, Crete 8, Babylon 4"  # A.S.T. order
    for text, words in (("GIVE Crete 9, Babylon 8, Thrace 3", "at most 8"), ("GIVE Crete 8, Babylon 8", "exactly 20"), ("GIVE Egypt 8, Crete 8, Babylon 4", "cannot be given")):
        with pytest.raises(Rejection, match=re.escape(words)):
            decide(state, text)
    events = E.decide(state, PassDeadline(), DRAWS)
    given = next(e for e in events if e.type == "CalamityLossesGiven")
    assert given.data["by_default"] and given.data["shares"] == [["Thrace", 8], ["Crete", 8], ["Babylon", 4]]
    text = describe_event(state, given, "observer")
    assert text == "Famine: Egypt gives unit points to lose (by default): Thrace 8, Crete 8, Babylon 4."


# -- phase 10: Monotheism, and D-9 across phases 10 and 11 ----------------------------------------


def _d9(value):
    nations = {"Assyria": {"civ_cards": ["Monotheism"]}, "Babylon": {"civ_cards": ["Agriculture"]}, "Egypt": {}, "Crete": {}, "Thrace": {}}
    case = {"players": 5, "phase": "special-abilities", "nations": nations, "options": {"post-calamity-surplus": value},
            "areas": {"Babylon": {"tokens": {"Babylon": 3}}, "Mesopotamia": {"tokens": {"Assyria": 1}}}}
    state = position(case)
    return E.fold(state, E.resume(state, DRAWS))


def test_d9_seed_surplus_after_conversion_goes_in_11a():
    state = _d9("seed")
    assert "Babylon" in " ".join(E.pending(state)["assyria"].choices)
    events = E.decide(state, parse("CONVERT Babylon", state, 1).command, DRAWS)
    types = [e.type for e in events]
    assert types[:4] == ["AreaConverted", "PhaseEnded", "PhaseBegan", "SurplusRemoved"]
    surplus = events[3]
    assert surplus.data == {"nation": "Assyria", "removed": {"Babylon": 1}}


def test_d9_1991_surplus_stays_until_5b():
    state = _d9("1991")
    events = until(E.decide(state, parse("CONVERT Babylon", state, 1).command, DRAWS), "surplus-removal")
    assert "SurplusRemoved" not in [e.type for e in events]
    assert E.fold(state, events).area("Babylon").tokens == {"Assyria": 3}


def test_convert_parse_verify_and_narrate():
    from pbem.rules.phases.monotheism import Convert

    state = _d9("seed")
    assert parse("convert none", state).command == Convert(1, None)
    assert parse("CON babylon", state).command == Convert(1, "Babylon")
    with pytest.raises(Rejection, match=re.escape("no conversion is yours")):
        decide(state, "CONVERT Babylon", 2)
    events = E.decide(state, parse("CONVERT Babylon", state).command, DRAWS)
    assert E.decide(state, E.command_for(state, events[0]), DRAWS) == events
    assert describe_event(state, events[0], "observer") == "Assyria converts Babylon with Monotheism: 3 tokens of Babylon become Assyria's."
    (prompt,) = E.pending(state).values()
    assert prompt.choices[-1] == "CONVERT NONE" and prompt.default == "no conversion"


# -- any position: bots answer with the offered choices; phase 9 always ends ----------------------


def test_bots_always_finish_the_implemented_calamities():
    import random

    from pbem.rules.phases.calamities.resolution import RESOLVERS
    from pbem.rules.ruleset.rulebook import ruleset_of

    lands = ["Thebes", "Memphis", "Alexandria", "Aleppo", "Athens", "Corinth", "Cyrene", "Knossos", "Sparta",
             "Babylon", "Susa", "Ur", "Babylonia", "Charax", "Media", "Parthia"]
    nations = ["Egypt", "Crete", "Babylon", "Thrace"]
    cards = ["Medicine", "Roadbuilding", "Theology", "Philosophy", "Mysticism", "Law", "Mining", "Enlightenment", "Pottery"]
    for seed in range(60):
        rng = random.Random(seed)
        areas = random_board(rng, lands, nations, 5)
        spec = {n: {"civ_cards": rng.sample(cards, 2), "hand": ["Grain"] * rng.randint(0, 2)} for n in nations}
        names = sorted(RESOLVERS)
        chosen = rng.sample(names, 3)
        order = [c for c in ruleset_of(position({"players": 4, "phase": "calamity-resolution", "nations": spec})).calamity_order() if c in chosen]
        calamities = [[c, rng.choice(nations), rng.choice(["", "Crete"])] for c in order]
        for c in calamities:
            if c[1] == "Crete" or c[0] in ("Famine",):
                c[2] = ""
        case = {"players": 4, "phase": "calamity-resolution", "nations": spec, "areas": areas, "calamities": calamities}
        state = position(case)
        state = E.fold(state, until(E.resume(state, DRAWS), "calamity-resolution"))
        state = resolve_by_bots(state, rng, DRAWS, f"seed {seed}", steps=60)


def test_the_view_shows_calamities_to_resolve_but_not_who_traded_them():
    from pbem.rules.view import view

    state = position({"players": 3, "phase": "calamity-resolution", "nations": {"Egypt": {}, "Crete": {}, "Babylon": {}},
                      "calamities": [["Superstition", "Egypt", "Crete"], ["Piracy", "Babylon", ""]]})
    seen = view(state, "player:babylon")
    assert seen["calamities"] == [{"calamity": "Superstition", "victim": "Egypt"}, {"calamity": "Piracy", "victim": "Babylon"}]
    assert "Crete" not in str(seen["calamities"]) and seen["finished"] is False and seen["scores"] is None
