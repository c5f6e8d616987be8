"""What a prompt's first lines and a report's position say (pbem.service.asks, pbem.service.positions)."""

from __future__ import annotations

from audit.recorded_games import HERE, read
from pbem.rules import engine
from pbem.rules.core.events import Event
from pbem.rules.core.prompt import Prompt
from pbem.rules.ruleset.rulebook import ruleset_of
from pbem.service.asks import headline, named_areas, order_lines
from pbem.service.positions import calamity_names, hand_text, mark_hand_line, others_positions, own_position, report_span

CALAMITIES = frozenset({"Slave Revolt", "Treachery"})


def _prompt(step: str, question: str) -> Prompt:
    return Prompt(who="egypt", player_id=1, step=step, question=question, choices=("HALT",), template="HALT",
                  default="nothing")


def _recorded_states():
    """The recorded planner game's states, in order."""
    recorded = read(HERE / "planner-3p-to-the-end.jsonl.gz")
    state = engine.new_game(recorded.game["game_id"])
    for record in recorded.events:
        state = engine.apply(state, Event.from_payload(record["type"], record["payload"]))
        yield state


def test_choices_are_complete_orders_one_a_line_each_once_the_closing_order_last():
    assert order_lines(["HALT", "SHIP Susa\nHALT", "KEEP Susa LEVY\nHALT", "SCRAP Susa\nHALT"]) == [
        "SHIP Susa", "KEEP Susa LEVY", "SCRAP Susa", "HALT"]
    assert order_lines(["BUY 0", "BUY 1"]) == ["BUY 0", "BUY 1"]


def test_the_first_line_says_what_is_asked_and_the_rules_come_below():
    asked, rules = headline(_prompt("movement", "Step 3b, movement: each token moves once. Orders: MOVE."), "3. Movement")
    assert asked == "Movement, your turn: move your tokens, then HALT"
    assert rules.startswith("Step 3b, movement: each token")
    # a step outside the table is told by its question's first sentence; the rest is the rule text
    asked, rules = headline(_prompt("calamity-primary", "Earthquake: one of your cities is destroyed. Choose which."),
                            "9. Calamity resolution")
    assert asked == "Calamity resolution, your turn: Earthquake: one of your cities is destroyed"
    assert rules == "Choose which."
    # 'e.g. ' ends no sentence
    asked, _ = headline(_prompt("x", "Name them, e.g. REDUCE Gaza 2. More."), "9. Calamity resolution")
    assert asked.endswith("Name them, e.g. REDUCE Gaza 2")


def test_calamities_are_marked_wherever_a_hand_is_listed():
    assert hand_text(["Salt", "Salt", "Slave Revolt", "Treachery", "Treachery"], CALAMITIES) == (
        "Salt 2, Slave Revolt (calamity), Treachery 2 (calamities)")
    assert mark_hand_line("Your hand: Salt 2, Slave Revolt.", CALAMITIES) == "Your hand: Salt 2, Slave Revolt (calamity)."
    assert mark_hand_line("Your stock: 12.", CALAMITIES) == "Your stock: 12."
    assert hand_text([], CALAMITIES) == "no cards"


def test_a_report_tells_its_reader_his_own_position_and_the_others_cities():
    states = list(_recorded_states())
    after = next(s for s in states if s.turn == 5)
    assert "Slave Revolt" in calamity_names(after)
    mine = own_position(after, "Italy")
    assert [line.split(" ", 1)[0] for line in mine] == ["Cities", "Tokens", "Stock", "Hand", "Civilization", "A.S.T."]
    others = others_positions(after, "player:italy", "Italy")
    assert [line.split(" ", 1)[0] for line in others] == ["Illyria", "Thrace"]
    assert all("cities " in line and "cards in hand" in line for line in others)
    # another nation's hand is a count, never its cards
    assert not any(card in " ".join(others) for card in after.nations["Illyria"].hand)


def test_a_reports_heading_says_what_it_covers_and_what_comes_next():
    states = list(_recorded_states())
    since = next(s for s in states if s.turn == 1)
    after = next(s for s in states if s.turn == 2)
    told = report_span(since, after, "", asked=True)
    assert told["covers"].startswith("what happened from turn 1, ") and told["covers"].endswith(" began")
    assert told["next"].startswith("Next: Turn 2, ") and "a prompt follows" in told["next"]
    assert "when it is your turn" in report_span(since, after, "", asked=False)["next"]
    assert report_span(since, after, "Italy wins", asked=False)["next"] == "The game is over: Italy wins."


def test_a_prompt_names_the_areas_its_orders_name_and_no_nation_as_a_place():
    state = next(s for s in _recorded_states() if s.turn == 2)
    board = list(ruleset_of(state).areas)
    assert named_areas(state, ["MOVE 2 Etruria Roma\nHALT", "SAIL 1 Etruria, Cisalpina"]) == sorted(
        ["Etruria", "Roma", "Cisalpina"], key=board.index)
    assert named_areas(state, ["NATION Thrace", "NATION Crete"]) == []
    # a trade prompt's offers name nations (Crete, Babylon are areas too): no picture comes with it
    assert named_areas(state, ["FINISH\nACCEPT 3 GIVING Salt 2, Ochre\nOFFER Crete, Babylon: Salt 2 + Ochre FOR Grain, Iron + 1 more",
                               "WITHDRAW 2"]) == []
