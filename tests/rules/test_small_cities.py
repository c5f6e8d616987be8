"""Small Cities outside phase 5 (RULINGS.md §4.1): what counts cities only, prompts, towns in Barbarian fights."""

from __future__ import annotations

from pbem.rules import engine as E
from pbem.rules.core.draws import Draws
from pbem.rules.phases.ast import score
from pbem.rules.phases.calamities.barbarians import _apply_clash
from pbem.rules.phases.calamities.barbarians.clash import clash
from pbem.rules.phases.calamities.dice import exempt
from pbem.rules.view import view

from .casefile import position

SMALL = {"variant-small-cities": "on"}
BOTH = {"variant-small-cities": "on", "variant-no-trading": "on"}


def board(phase, areas, nations=None, options=SMALL, players=6):
    return position({"players": players, "phase": phase, "options": options,
                     "nations": nations or {"Egypt": {}, "Babylon": {}}, "areas": areas})


def test_sc18_towns_score_nothing_at_the_end():
    towns = {"Sinai": {"towns": {"Egypt": 5}}, "Gaza": {"towns": {"Egypt": 5}}}
    with_towns = board("ast-alteration", {"Thebes": {"city": "Egypt"}, **towns})
    without = board("ast-alteration", {"Thebes": {"city": "Egypt"}})
    assert score(with_towns, "Egypt")["cities"] == score(without, "Egypt")["cities"] == 50
    assert score(with_towns, "Egypt")["total"] == score(without, "Egypt")["total"]


def test_sc18_no_trading_exemption_counts_cities_only():
    """NT-8 with both variants: a player on the Stone Age's last space needs 2 cities; 12 towns do not help."""
    nations = {"Egypt": {"ast_position": 3}, "Babylon": {}}
    state = board("calamity-selection", {"Thebes": {"city": "Egypt"}, "Sinai": {"towns": {"Egypt": 5}},
                                         "Gaza": {"towns": {"Egypt": 5}}, "Eastern Desert": {"towns": {"Egypt": 2}}},
                  nations, options=BOTH)
    assert exempt(state, "Egypt")
    state = board("calamity-selection", {"Thebes": {"city": "Egypt"}, "Memphis": {"city": "Egypt"}}, nations, options=BOTH)
    assert not exempt(state, "Egypt")


def test_barbarians_take_tokens_before_towns_and_the_rest_stand():
    """SC-9: 3 Barbarians enter Sinai (limit 1) where Egypt has 2 tokens and 3 towns: B2/E4, B1/E3, B0: both tokens go."""
    state = board("calamity-resolution", {"Sinai": {"tokens": {"Egypt": 2}, "towns": {"Egypt": 3}}})
    fight = clash(state, "Sinai", 3, "Egypt")
    assert fight["before"] == {"Barbarians": 3, "Egypt": 5}
    assert fight["after"] == {"Egypt": 3}
    assert fight["towns_after"] == {"Egypt": 3}
    assert fight["damage"] == 2


def test_the_coinage_prompt_names_the_town_rate_of_each_city_rate():
    nations = {"Egypt": {"civ_cards": ["Coinage"], "stock": 30}, "Babylon": {}}
    state = board("tax-collection", {"Thebes": {"city": "Egypt"}, "Sinai": {"towns": {"Egypt": 5}},
                                     "Gaza": {"towns": {"Egypt": 2}}}, nations)
    state = E.fold(state, E.resume(state, Draws("tax")))
    prompt = E.pending(state)["egypt"]
    assert "TAX 1 is 1 a city and 1 for every 4 towns (3 in all)" in prompt.question
    assert "TAX 3 is 3 a city and 1 for every 2 towns (7 in all)" in prompt.question
    assert "SC-12" in prompt.cites


def test_the_view_shows_towns_to_everyone():
    state = board("city-construction", {"Sinai": {"towns": {"Egypt": 2}}})
    seen = view(state, "player:babylon")
    assert seen["areas"]["Sinai"]["towns"] == {"Egypt": 2}
    assert seen["nations"]["egypt"]["towns_on_board"] == 2


def test_the_towns_that_stand_after_barbarians_stay_on_the_board():
    state = board("calamity-resolution", {"Sinai": {"tokens": {"Egypt": 2}, "towns": {"Egypt": 3}}})
    after = _apply_clash(state, clash(state, "Sinai", 3, "Egypt"))
    assert after.area("Sinai").towns == {"Egypt": 3} and not after.area("Sinai").tokens
    assert after.nations["Egypt"].stock == state.nations["Egypt"].stock + 2


def test_the_movement_prompt_shows_the_towns_that_stay():
    state = position({"players": 6, "phase": "movement", "step": "moves", "options": SMALL, "nations": {"Egypt": {}},
                      "areas": {"Thebes": {"tokens": {"Egypt": 1}, "towns": {"Egypt": 3}}}})
    state = E.fold(state, E.resume(state, Draws("move")))
    assert "Your towns, which never move: Thebes 3." in E.pending(state)["egypt"].situation
