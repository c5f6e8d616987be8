"""Phase 2 (§20, §21, R-2.1): the GROW order, the short-stock prompt and default, narration, verify."""

from __future__ import annotations

import pytest

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.rejection import Rejection
from pbem.rules.engine import describe_event
from pbem.rules.phases.expansion import DistributeGrowth, default_distribution

from .casefile import position

DRAWS = Draws("expansion")


def short_egypt(stock: int = 3) -> object:
    """Egypt is due 5 growth (Thebes +1, Upper Egypt +2, Memphis +2) with ``stock`` in stock."""
    return position(
            {
                "players": 6,
                "phase": "population-expansion",
                "nations": {"Babylon": {}, "Egypt": {"stock": stock}},
                "areas": {
                    "Thebes": {"tokens": {"Egypt": 1}},
                    "Upper Egypt": {"tokens": {"Egypt": 2}},
                    "Memphis": {"tokens": {"Egypt": 4}},
                    "Susa": {"tokens": {"Babylon": 1}},
                },
            }
        )


def started(state):
    """Let the phase run until it waits."""
    events = E.resume(state, DRAWS)
    return E.fold(state, events), events


def parse(text, state, player_id=2):
    (line,) = parse_orders(text, state, Actor(player_id=player_id)).lines
    return line


def test_grow_reads_names_and_numbers_and_suggests_names():
    state = short_egypt()
    line = parse("GROW Thebes 2, Sinai 1", state)
    assert line.command == DistributeGrowth(2, (("Thebes", 2), ("Sinai", 1)))
    assert line.canonical == "GROW Thebes 2, Sinai 1"
    assert parse("gro upper egypt 2 memphis", state).command == DistributeGrowth(2, (("Upper Egypt", 2), ("Memphis", 1)))
    assert "did you mean: Thebes" in parse("GROW Thebse 1", state).error
    assert "before the number" in parse("GROW 2 Thebes", state).error
    assert parse("GROW", state).error


def test_only_the_short_player_is_asked_with_complete_choices():
    state, events = started(short_egypt())
    assert [e.type for e in events] == ["PopulationExpanded"]  # Babylon (A.S.T. 8) grows before Egypt (9) decides
    assert events[0].data["growth"] == {"Babylon": {"Susa": 1}}
    prompt = E.pending(state)["egypt"]
    assert prompt.step == "grow" and "stock holds only 3" in prompt.question
    assert prompt.template == "GROW Memphis 1, Thebes 1, Upper Egypt 1"
    assert "area-name order" in prompt.default
    assert 1 < len(prompt.choices) <= 60
    for choice in prompt.choices:  # every choice is a legal, complete answer
        after = E.fold(state, E.decide(state, parse(choice, state).command, DRAWS))
        assert after.nations["Egypt"].stock == 0 and after.phase == "movement"


def test_the_default_spreads_one_token_each_first():
    assert default_distribution({"B": 2, "A": 2, "C": 1}, 4) == {"A": 2, "B": 1, "C": 1}
    assert default_distribution({"B": 2, "A": 2, "C": 1}, 2) == {"A": 1, "B": 1}
    state, _ = started(short_egypt(stock=4))
    events = E.decide(state, PassDeadline(), DRAWS)
    chosen = next(e for e in events if e.type == "GrowthDistributed")
    assert chosen.data["by_default"] is True
    assert chosen.data["placements"] == {"Memphis": 2, "Thebes": 1, "Upper Egypt": 1}


@pytest.mark.parametrize(
    "text, reason",
    [
        ("GROW Thebes 2, Memphis 1", "at most 1"),
        ("GROW Memphis 2", "whole stock, 3"),
        ("GROW Susa 3", "do not grow"),
    ],
)
def test_wrong_distributions_are_refused_with_reasons(text, reason):
    state, _ = started(short_egypt())
    with pytest.raises(Rejection) as err:
        E.decide(state, parse(text, state).command, DRAWS)
    assert reason in str(err.value)


def test_a_player_who_is_not_short_cannot_grow():
    state, _ = started(short_egypt())
    with pytest.raises(Rejection) as err:
        E.decide(state, DistributeGrowth(1, (("Susa", 1),)), DRAWS)
    assert "no growth is yours" in str(err.value) and err.value.cite == "§20"


def test_verify_re_decides_the_grow_order():
    state, _ = started(short_egypt())
    events = E.decide(state, parse("GROW Upper Egypt 2, Memphis 1", state).command, DRAWS)
    order = events[0]
    assert E.is_input(order) and order.type == "GrowthDistributed"
    assert E.decide(state, E.command_for(state, order), DRAWS) == events


def test_narration():
    state, events = started(short_egypt())
    assert describe_event(state, events[0]) == "Population expansion: Babylon +1 in 1 area."
    grown = E.decide(state, parse("GROW Upper Egypt 2, Memphis 1", state).command, DRAWS)
    text = [describe_event(E.fold(state, grown[:i]), e) for i, e in enumerate(grown)]
    assert text[0] == "Egypt was short of stock and placed its 3 tokens: Memphis 1, Upper Egypt 2 (growth due 5)."
    census = next(t for e, t in zip(grown, text) if e.type == "CensusTaken")
    assert census == "Census: 1. Egypt 10, 2. Babylon 2."
    empty = Event("PopulationExpanded", {"growth": {"Egypt": {}}, "short": ["Egypt"]})
    assert describe_event(state, empty) == "Population expansion: Egypt no growth (stock empty)."
    assert describe_event(state, Event("PopulationExpanded", {"growth": {"Egypt": {}}, "short": []})) == (
        "Population expansion: nobody grows."
    )
