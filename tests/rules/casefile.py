"""Data-driven rules cases: one TOML file per rule clause or printed example.

A case is a position, the orders given, and the expected outcome, with the
rule reference it checks. Files live in ``tests/rules/cases/<phase>/``; a
rules expert can read and write them without reading Python. The format:

    title = "..."                 # what the case shows
    cites = ["seed 003: 1A"]      # the statements or clauses it checks
    players = 3                   # table size: board, nations allowed, tokens each
    phase = "tax-collection"      # the phase that begins at this position
    turn = 1                      # optional
    revision = 0                  # optional: the rules revision (default: the current one, core.state.RULES_REVISION)
    options = { }                 # optional game options
    seed = "case"                 # optional secret seed for draws
    built_this_turn = ["Thebes"]  # optional: areas where a city was built this turn
    gained_this_turn = ["Buhen"]   # optional: areas whose city changed owner this turn otherwise (D-6)
    calamity_givers = [["Egypt", "Epidemic", "Crete"]]  # optional: (receiver, calamity, giver) from phase 7
    calamities = [["Famine", "Egypt", ""]]  # optional: calamities to resolve (calamity, victim, giver or "")
    slave_revolts = [["Egypt", 15, 0]]  # optional: Slave Revolts in force (victim, disabled, tokens placed since)
    calamity_pile = ["Famine"]    # optional, No-Trading: the calamity pile, top first
    calamities_face_up = [["Flood", 1]]  # optional, No-Trading: (calamity, turn drawn) still face up
    calamity_draws_left = 2       # optional, No-Trading: calamities phase 9 still draws this turn

    [nations.Egypt]               # every nation in play; omitted fields take defaults
    stock = 20                    # default: the full allotment minus what the areas hold
    treasury = 0
    civ_cards = ["Coinage"]
    hand = []
    volunteers = false            # No-Trading: the VOLUNTEER standing order
    set_aside = []                # No-Trading: Water cards set aside against a Famine this turn

    [areas.Thebes]                # only areas that hold something
    tokens = { Egypt = 3 }
    city = "Egypt"
    ships = { Egypt = 1 }
    towns = { Egypt = 2 }         # Small Cities: towns (tokens face down)

    [stacks]                      # optional: trade-card stacks by number, top card first
    "1" = ["Ochre", "Hides"]
    [returned]                    # optional: cards waiting to go under their stacks at 13b
    "2" = ["Iron"]

    [[orders]]                    # optional, in sequence
    nation = "Egypt"              # or moderator = true
    text = "TAX 3"
    rejected = "rate"             # optional: the order must be refused, with this in the reason

    [[orders]]
    deadline = true               # the deadline passes: defaults for everyone still asked

    [expect]
    phase = "population-expansion"    # optional
    events = ["TaxCollected"]         # optional: these types appear, in this order, among the events
    cites = ["D-2"]                   # optional: cited by some event
    pending = ["egypt"]               # optional: exactly who is asked now
    finished = false                  # optional: whether the game is over
    winner = "Egypt"                  # optional: the winner named by GameEnded
    calamity_givers = [["Egypt", "Epidemic", "Crete"]]  # optional: (receiver, calamity, giver) recorded so far
    calamities = [["Famine", "Egypt", ""]]  # optional: the calamities left to resolve, in order
    calamity_pile = [...]             # optional: likewise the No-Trading calamity pile, face_up and draws left
    stack_sizes = { "1" = 25 }        # optional: how many cards each stack (pile) holds
    [[expect.data]]                   # optional: some event of this type carries these data fields
    type = "CalamityDrawn"
    low = "Egypt"
    [expect.stacks]                   # optional: "1" = [...] the whole stack, top first
    [expect.set_up."2"]               # optional: a stack as StacksSetUp (No-Trading: MoneyPilesSetUp) laid it out
    cards = { Iron = 8, Treachery = 1 }   #   every card in it, counted
    top = ["Papyrus"]                 #   its top cards, in order
    safe_top = 3                      #   so many cards on top are all commodities (no calamity)
    bottom = "Volcanic Eruption / Earthquake"  # its very bottom card
    [expect.returned]                 # optional: likewise for returned cards
    [expect.views.observer.Egypt]     # optional: what a viewer's view shows (pbem.rules.view), e.g.
    hand_count = 3                    #   hand_count under D-8; "hidden" = null or not shown
    [expect.nations.Egypt]            # only the fields given are checked
    stock = 10
    [expect.areas.Thebes]             # tokens/city/ships as given (city = "": none); [expect.areas.X] with tokens = {} means empty
    city = "Egypt"

Only the events up to the end of the case's phase are applied, so a case is
about its phase alone, whatever the engine would resolve after it.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import FrozenMap
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import RULES_REVISION, AreaState, GameState, NationState, Player
from pbem.rules.ruleset.rulebook import ruleset_of

CASES = Path(__file__).parent / "cases"


@dataclass
class Outcome:
    state: GameState
    events: list[Event] = field(default_factory=list)
    rejections: list[str] = field(default_factory=list)


def case_files() -> list[Path]:
    return sorted(CASES.rglob("*.toml"))


def load(path: Path) -> dict[str, Any]:
    with path.open("rb") as fh:
        return tomllib.load(fh)


def position(case: dict[str, Any]) -> GameState:
    """The GameState a case describes."""
    players = int(case.get("players", len(case["nations"])))
    names = list(case["nations"])
    player_list = [Player(i + 1, f"player{i + 1}", names[i] if i < len(names) else None) for i in range(players)]
    state = GameState(
        game_id="case",
        version=1,
        options=FrozenMap({k: str(v) for k, v in case.get("options", {}).items()}),
        players=tuple(player_list),
        place_order=tuple(p.id for p in player_list),
        turn=int(case.get("turn", 1)),
        phase=case["phase"],
        step=case.get("step", ""),
        revision=int(case.get("revision", RULES_REVISION)),
    )
    board = ruleset_of(state).areas
    unknown = sorted(set(case.get("areas", {})) - set(board))
    if unknown:
        raise ValueError(f"not areas of the board: {', '.join(unknown)}")
    for area_name, spec in case.get("areas", {}).items():
        state = state.with_area(
            area_name,
            AreaState(
                tokens=FrozenMap({k: int(v) for k, v in spec.get("tokens", {}).items()}),
                city=spec.get("city"),
                ships=FrozenMap({k: int(v) for k, v in spec.get("ships", {}).items()}),
                towns=FrozenMap({k: int(v) for k, v in spec.get("towns", {}).items()}),
            ),
        )
    allotment = ruleset_of(state).setup_for(players).tokens_per_player
    for i, (nation, spec) in enumerate(case["nations"].items()):
        on_board = state.tokens_on_board(nation) + state.towns_on_board(nation)
        treasury = int(spec.get("treasury", 0))
        state = state.with_nation(
            NationState(
                name=nation,
                player_id=i + 1,
                stock=int(spec.get("stock", allotment - on_board - treasury)),
                treasury=treasury,
                civ_cards=tuple(spec.get("civ_cards", ())),
                hand=tuple(spec.get("hand", ())),
                ast_position=int(spec.get("ast_position", 0)),
                census=spec.get("census"),
                volunteers=bool(spec.get("volunteers", False)),
                set_aside=tuple(spec.get("set_aside", ())),
            )
        )
    return replace(
        state,
        stacks=_stacks(case.get("stacks", {})),
        returned=_stacks(case.get("returned", {})),
        built_this_turn=tuple(case.get("built_this_turn", ())),
        gained_this_turn=tuple(case.get("gained_this_turn", ())),
        calamity_givers=tuple(tuple(g) for g in case.get("calamity_givers", ())),
        calamities=tuple((c[0], c[1], c[2] if len(c) > 2 and c[2] else None) for c in case.get("calamities", ())),
        slave_revolts=tuple((r[0], int(r[1]), int(r[2])) for r in case.get("slave_revolts", ())),
        calamity_pile=tuple(case.get("calamity_pile", ())),
        calamities_face_up=tuple((c, int(t)) for c, t in case.get("calamities_face_up", ())),
        calamity_draws_left=int(case.get("calamity_draws_left", 0)),
    )


def _stacks(spec: dict[str, list[str]]) -> FrozenMap[int, tuple[str, ...]]:
    return FrozenMap({int(k): tuple(v) for k, v in spec.items()})


def within_phase(phase: str, events: list[Event]) -> list[Event]:
    for i, event in enumerate(events):
        if event.type == "PhaseEnded" and event.data.get("phase") == phase:
            return events[: i + 1]
    return events


def play(case: dict[str, Any]) -> Outcome:
    """Set up the position, let the phase run, give the orders; stop at the end of the phase."""
    phase = case["phase"]
    draws = Draws(case.get("seed", "case"))
    state = position(case)
    out = Outcome(state)

    def take(events: list[Event]) -> None:
        events = within_phase(phase, events)
        out.events.extend(events)
        out.state = E.fold(out.state, events)

    take(E.resume(state, draws))
    for order in case.get("orders", []):
        if out.state.phase != phase or out.state.step == "ended":
            raise AssertionError(f"order {order} given after the phase ended")
        if order.get("deadline"):
            take(E.decide(out.state, PassDeadline(), draws))
            continue
        if order.get("moderator"):
            actor = Actor(moderator=True)
        else:
            actor = Actor(player_id=out.state.nations[order["nation"]].player_id)
        parsed = parse_orders(order["text"], out.state, actor)
        for line in parsed.lines:
            if line.error:
                out.rejections.append(line.error)
                continue
            try:
                take(E.decide(out.state, line.command, draws))
            except Rejection as exc:
                out.rejections.append(str(exc))
    return out


def check(case: dict[str, Any], outcome: Outcome) -> list[str]:
    """Every way the outcome differs from the case's expectations (empty: the case holds)."""
    problems: list[str] = []
    expect = case.get("expect", {})
    state = outcome.state
    wanted_rejections = [o["rejected"] for o in case.get("orders", []) if "rejected" in o]
    for wanted in wanted_rejections:
        if not any(wanted.lower() in r.lower() for r in outcome.rejections):
            problems.append(f"expected a rejection mentioning {wanted!r}; got {outcome.rejections}")
    if not wanted_rejections and outcome.rejections:
        problems.append(f"unexpected rejections: {outcome.rejections}")
    if "phase" in expect and state.phase != expect["phase"]:
        problems.append(f"phase: expected {expect['phase']}, got {state.phase}")
    if "events" in expect:
        types = iter(e.type for e in outcome.events)
        if not all(any(t == wanted for t in types) for wanted in expect["events"]):
            problems.append(f"events: expected {expect['events']} in order, got {[e.type for e in outcome.events]}")
    cited = {c for e in outcome.events for c in e.cites}
    for cite in expect.get("cites", []):
        if cite not in cited:
            problems.append(f"no event cites {cite!r}; cited: {sorted(cited)}")
    if "pending" in expect:
        who = sorted(E.pending(state)) if state.step != "ended" else []
        if who != sorted(expect["pending"]):
            problems.append(f"pending: expected {sorted(expect['pending'])}, got {who}")
    for nation, fields in expect.get("nations", {}).items():
        n = state.nations[nation]
        actual = {
            "stock": n.stock,
            "treasury": n.treasury,
            "civ_cards": list(n.civ_cards),
            "hand": list(n.hand),
            "hand_count": len(n.hand),
            "cities_on_board": state.cities_on_board(nation),
            "tokens_on_board": state.tokens_on_board(nation),
            "towns_on_board": state.towns_on_board(nation),
            "ships": state.ships_on_board(nation),
            "census": n.census,
            "ast_position": n.ast_position,
            "kept_hand_count": n.kept_hand_count,
            "volunteers": n.volunteers,
            "set_aside": list(n.set_aside),
        }
        for key, value in fields.items():
            if actual[key] != value:
                problems.append(f"{nation}.{key}: expected {value!r}, got {actual[key]!r}")
    for number, cards in expect.get("stacks", {}).items():
        actual_cards = list(state.stacks.get(int(number), ()))
        if actual_cards != cards:
            problems.append(f"stack {number}: expected {cards}, got {actual_cards}")
    problems += _set_up_problems(expect.get("set_up", {}), outcome)
    for number, cards in expect.get("returned", {}).items():
        actual_cards = list(state.returned.get(int(number), ()))
        if actual_cards != cards:
            problems.append(f"returned to stack {number}: expected {cards}, got {actual_cards}")
    if "winner" in expect:
        ended = [e for e in outcome.events if e.type == "GameEnded"]
        winner = ended[-1].data["winner"] if ended else None
        if winner != expect["winner"]:
            problems.append(f"winner: expected {expect['winner']!r}, got {winner!r}")
    for viewer, seen in expect.get("views", {}).items():  # [expect.views.observer.Africa] hand_count = 2
        from pbem.rules.view import view

        shown = view(state, viewer)["nations"]
        for nation, fields in seen.items():
            for key, value in fields.items():
                got = shown[nation.lower()].get(key)
                if got != (None if value == "hidden" else value):
                    problems.append(f"{viewer} sees {nation}.{key} = {got!r}, expected {value!r}")
    for number, size in expect.get("stack_sizes", {}).items():
        if len(state.stacks.get(int(number), ())) != size:
            problems.append(f"stack {number} holds {len(state.stacks.get(int(number), ()))} cards, expected {size}")
    for key, actual in (
        ("calamities", [[c, v, g or ""] for c, v, g in state.calamities]),
        ("calamity_pile", list(state.calamity_pile)),
        ("calamities_face_up", [[c, t] for c, t in state.calamities_face_up]),
        ("calamity_draws_left", state.calamity_draws_left),
    ):
        if key in expect and actual != expect[key]:
            problems.append(f"{key}: expected {expect[key]!r}, got {actual!r}")
    for wanted in expect.get("data", []):
        fields = {k: v for k, v in wanted.items() if k != "type"}
        found = [e.data for e in outcome.events if e.type == wanted["type"]]
        if not any(all(d.get(k) == v for k, v in fields.items()) for d in found):
            problems.append(f"no {wanted['type']} event with {fields}; got {found}")
    if "finished" in expect and state.finished != expect["finished"]:
        problems.append(f"finished: expected {expect['finished']}, got {state.finished}")
    if "calamity_givers" in expect and [list(g) for g in state.calamity_givers] != expect["calamity_givers"]:
        problems.append(f"calamity_givers: expected {expect['calamity_givers']}, got {[list(g) for g in state.calamity_givers]}")
    for name, fields in expect.get("areas", {}).items():
        a = state.area(name)
        actual = {"tokens": dict(a.tokens), "city": a.city, "ships": dict(a.ships), "towns": dict(a.towns)}
        for key, value in fields.items():
            if actual[key] != (None if key == "city" and value == "" else value):  # city = "": no city
                problems.append(f"{name}.{key}: expected {value!r}, got {actual[key]!r}")
    return problems


def _set_up_problems(expected: dict[str, dict[str, Any]], outcome: Outcome) -> list[str]:
    """How the stacks as set up (the StacksSetUp or MoneyPilesSetUp event) differ from ``[expect.set_up]``."""
    if not expected:
        return []
    set_up = next((e.data["stacks"] for e in outcome.events if e.type in ("StacksSetUp", "MoneyPilesSetUp")), None)
    if set_up is None:
        return ["the stacks were not set up (no StacksSetUp or MoneyPilesSetUp event)"]
    calamities = set(ruleset_of(outcome.state).calamities)
    problems = []
    for number, layout in expected.items():
        cards = list(set_up.get(str(number), ()))
        if "cards" in layout and dict(Counter(cards)) != layout["cards"]:
            problems.append(f"stack {number} set up with {dict(Counter(cards))}, expected {layout['cards']}")
        if "top" in layout and cards[: len(layout["top"])] != layout["top"]:
            problems.append(f"stack {number} set up with {cards[: len(layout['top'])]} on top, expected {layout['top']}")
        safe = layout.get("safe_top", 0)
        if len(cards) < safe or any(c in calamities for c in cards[:safe]):
            problems.append(f"stack {number}: the top {safe} cards set up are not all commodities: {cards[:safe]}")
        if "bottom" in layout and cards[-1:] != [layout["bottom"]]:
            problems.append(f"stack {number} set up with {cards[-1:]} at the bottom, expected {layout['bottom']!r}")
    return problems


def invariants(case: dict[str, Any], outcome: Outcome) -> list[str]:
    """DESIGN.md §7: tokens conserved per nation, at most 9 cities and 4 ships each."""
    problems = []
    before, after = position(case), outcome.state
    rules = ruleset_of(after)
    for nation in after.nations:
        total = lambda s: (s.nations[nation].stock + s.tokens_on_board(nation) + s.towns_on_board(nation)  # noqa: E731
                           + s.nations[nation].treasury)
        if total(before) != total(after):
            problems.append(f"{nation}: tokens not conserved ({total(before)} before, {total(after)} after)")
        if after.cities_on_board(nation) > rules.cities_per_nation:
            problems.append(f"{nation}: more than {rules.cities_per_nation} cities")
        if after.ships_on_board(nation) > rules.ships_per_nation:
            problems.append(f"{nation}: more than {rules.ships_per_nation} ships")
    return problems
