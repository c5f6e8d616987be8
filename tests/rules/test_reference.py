"""Tests of the plain-text reference pages and the forgiving name matcher."""

from __future__ import annotations

import pytest

from pbem.rules.ruleset.loader import load_ruleset
from pbem.rules.ruleset.model import Ruleset
from pbem.rules.ruleset.reference import describe, describe_effect, match_name

CARDS = ["Drama & Poetry", "Democracy", "Deism", "Astronomy", "Law", "Literacy"]


@pytest.fixture(scope="module")
def r() -> Ruleset:
    return load_ruleset()


@pytest.mark.parametrize("typed,meant", [
    ("astronomy", "Astronomy"), ("ASTRONOMY", "Astronomy"), ("  Astronomy ", "Astronomy"),
    ("drama&poetry", "Drama & Poetry"), ("Drama and Poetry", "Drama & Poetry"),
    ("drama", "Drama & Poetry"), ("ast", "Astronomy"), ("law", "Law"), ("lit", "Literacy"),
    ("Dei", "Deism"),
])
def test_match_name_forgiving(typed: str, meant: str) -> None:
    assert match_name(typed, CARDS) == meant


def test_exact_beats_prefix() -> None:
    assert match_name("law", ["Law", "Lawful"]) == "Law"


def test_ambiguous_prefix_lists_choices() -> None:
    with pytest.raises(LookupError) as err:
        match_name("De", CARDS, kind="card")
    assert "Democracy" in str(err.value) and "Deism" in str(err.value)
    assert "card" in str(err.value)


def test_typo_suggests_nearest(r: Ruleset) -> None:
    with pytest.raises(LookupError) as err:
        match_name("Astronmy", CARDS, kind="card")
    assert "did you mean" in str(err.value) and "Astronomy" in str(err.value)
    with pytest.raises(LookupError) as err:
        match_name("Sinaii", r.areas, kind="area")
    assert "Sinai" in str(err.value) and "unknown area" in str(err.value)


def test_no_match_at_all() -> None:
    with pytest.raises(LookupError, match="unknown card 'zzzz'"):
        match_name("zzzz", CARDS, kind="card")
    with pytest.raises(LookupError):
        match_name("", CARDS)


def test_aliases(r: Ruleset) -> None:
    assert match_name("Rome", r.areas, aliases=r.aliases) == "Roma"
    assert match_name("byzantium", r.areas, aliases=r.aliases) == "Bycantinum"
    with pytest.raises(LookupError):
        match_name("Rome", r.areas)


@pytest.mark.parametrize("topic", ["areas", "cards", "calamities", "stacks", "ast",
                                   "area", "card", "calamity", "stack", "AST"])
def test_tables_fit_a_phone(r: Ruleset, topic: str) -> None:
    text = describe(r, topic)
    assert text.strip()
    assert max(len(line) for line in text.splitlines()) <= 72


def test_tables_list_everything(r: Ruleset) -> None:
    areas = describe(r, "areas")
    assert all(name in areas for name in r.areas)
    cards = describe(r, "cards")
    assert all(name in cards for name in r.civ_cards) and "3190" in cards
    calamities = describe(r, "calamities")
    assert all(name in calamities for name in r.calamities)
    stacks = describe(r, "stacks")
    assert "Ochre x7" in stacks and "126 cards" in stacks and "18 treasury" in stacks
    ast = describe(r, "ast")
    assert all(name in ast for name in r.nations) and "15:1900" in ast


def test_every_item_detail_fits(r: Ruleset) -> None:
    for topic, names in (("area", list(r.areas) + list(r.waters)), ("card", r.civ_cards),
                         ("calamity", r.calamities), ("ast", r.nations),
                         ("stack", [str(s.number) for s in r.stacks])):
        for name in names:
            text = describe(r, topic, name)
            assert max(len(line) for line in text.splitlines()) <= 72, (topic, name)


def test_area_detail(r: Ruleset) -> None:
    text = describe(r, "area", "sinai")
    assert text.startswith("Sinai")
    assert "Population limit: 1" in text
    assert "City site: none" in text
    assert "Flood plain: no" in text
    assert "Coastal: yes" in text
    assert "Neighbours by land: Eastern Desert, Gaza, Jerusalem, Petra, Tanis" in text
    assert "Neighbours by water: Eastern Desert, Midian, Petra, Ptolemais" in text
    memphis = describe(r, "areas", "Memphis")
    assert "white" in memphis and "nile" in memphis
    siwa = describe(r, "area", "Siwa")
    assert "Start area of: Egypt" in siwa and "jc=2" in siwa


def test_water_detail(r: Ruleset) -> None:
    text = describe(r, "area", "aegean")
    assert "Aegean Sea" in text and "Open sea (Astronomy needed): no" in text
    assert "Knossos" in text


def test_card_detail(r: Ruleset) -> None:
    text = describe(r, "card", "Astronomy")
    assert "cost 80" in text and "Sciences" in text
    assert "open sea" in text
    assert "Engineering 20" in text          # credit received
    assert "Largest possible credit toward it: 80" in text
    assert "Prerequisite: Law" in describe(r, "card", "philosophy")


def test_calamity_detail(r: Ruleset) -> None:
    text = describe(r, "calamity", "epidemic")
    assert "stack 6" in text and "tradable" in text
    assert "Medicine" in text and "Roadbuilding" in text
    assert "unit points 16" in text
    assert "Crete" in describe(r, "calamity", "barbarian")


def test_stack_detail(r: Ruleset) -> None:
    text = describe(r, "stack", "3")
    assert "Salt" in text and "243" in text and "Famine" in text
    assert describe(r, "stack", "ivory").startswith("Stack 9")
    with pytest.raises(LookupError):
        describe(r, "stack", "10")


def test_ast_detail(r: Ruleset) -> None:
    text = describe(r, "ast", "egypt")
    assert "A.S.T. order 9" in text and "1900" in text and "Early Bronze Age" in text


def test_unknown_names_and_topics(r: Ruleset) -> None:
    with pytest.raises(LookupError, match="Astronomy"):
        describe(r, "card", "Astronmy")
    with pytest.raises(LookupError, match="topic"):
        describe(r, "weather")


def test_describe_effect_words(r: Ruleset) -> None:
    words = [describe_effect(e) for e in r.civ_cards["Coinage"].effects]
    assert words == ["tax rate may be 1/2/3 per city"]
    pottery = describe_effect(r.civ_cards["Pottery"].effects[0])
    assert "Famine" in pottery and "-4" in pottery and "Grain" in pottery
