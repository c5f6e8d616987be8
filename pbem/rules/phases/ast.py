"""Phase 13: A.S.T. alteration, restacking and the end of the game (§33-§35; seed 003: 13).

13a. In A.S.T.-ranking order each marker moves (§33.1-33.4, fact sheet §2.14, §5):
     * a nation with no city on the board, whose marker is past the Stone Age,
       moves back one space (§33.4; never back into nothing: not from the start);
     * otherwise the marker advances one space if the nation meets the entry
       requirements of the epoch holding the next space of its own track:
       cities on the board, civilization cards, groups covered (a dual-group
       card counts both), and on a Late-Iron space the face value of its
       civilization cards at least the printed number (§33.2); if not, it is
       held where it is (frozen, §33.3). The finish square is a Late-Iron
       space with no printed number unless the data gives one.
13b. Returned cards go under their stacks (`board.stacks.restack`, D-22).
13c. If any marker stands on the finish square, the game ends with this turn
     (§34). Scores (§35, fact sheet §2.15): civilization cards' face value +
     commodity cards in hand (set values; Mining's bonus if not used to buy
     this turn) + treasury + points per A.S.T. space + points per city on the
     board. Ties: the furthest along the A.S.T. (fact sheet §8: S2), then
     A.S.T.-ranking (D-11). The game then stops: `finished`, nobody is asked.

     The game also ends after the turn named by the option ``last-turn``
     (§34: a time limit fixed before play, the current turn finished; by
     email a limit is naturally counted in turns), scored the same way.
"""

from __future__ import annotations

from typing import Any

from pbem.rules.board.commodities import (
    commodity_counts,
    mining_commodities,
    sets_value,
)
from pbem.rules.board.ranking import ast_rank, in_ast_order
from pbem.rules.board.stacks import (
    apply_reshuffled,
    apply_restacked,
    restack,
    tell_reshuffled,
    tell_restacked,
)
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import PhaseRules, phase_ended
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import ruleset_of

PHASE = "ast-alteration"
MOVE_CITES = ("seed 003: 13", "§33.1", "§33.2")
END_CITES = ("seed 003: 13", "§34", "§35")


def groups_covered(state: GameState, nation: str) -> int:
    cards = ruleset_of(state).civ_cards
    return len({g for c in state.nations[nation].civ_cards if c in cards for g in cards[c].groups})


def civ_card_points(state: GameState, nation: str) -> int:
    cards = ruleset_of(state).civ_cards
    return sum(cards[c].cost for c in state.nations[nation].civ_cards if c in cards)


def _shortfalls(state: GameState, nation: str, space: int) -> tuple[str, list[str]]:
    """(epoch of the space, what the nation lacks to enter it: empty when it may)."""
    rules = ruleset_of(state)
    track = rules.nations[nation].ast_track
    epoch_name = track.epoch_at(space)
    epoch = next(e for e in rules.epochs if e.name == epoch_name)
    missing = []
    cities = state.cities_on_board(nation)
    if cities < epoch.cities:
        missing.append(f"{epoch.cities} cities on the board (has {cities})")
    cards = len(state.nations[nation].civ_cards)
    if cards < epoch.civ_cards:
        missing.append(f"{epoch.civ_cards} civilization cards (has {cards})")
    groups = groups_covered(state, nation)
    if groups < epoch.groups:
        missing.append(f"cards of {epoch.groups} groups (has {groups})")
    points = track.late_iron_points.get(space)
    if points is not None and civ_card_points(state, nation) < points:
        missing.append(f"civilization cards worth {points} (has {civ_card_points(state, nation)})")
    return epoch_name, missing


def _requirement_text(state: GameState, nation: str, space: int) -> str:
    rules = ruleset_of(state)
    track = rules.nations[nation].ast_track
    epoch = next(e for e in rules.epochs if e.name == track.epoch_at(space))
    parts = []
    if epoch.cities:
        parts.append(f"{epoch.cities} cities")
    if epoch.civ_cards:
        parts.append(f"{epoch.civ_cards} civilization cards")
    if epoch.groups:
        parts.append(f"{epoch.groups} groups")
    if space in track.late_iron_points:
        parts.append(f"cards worth {track.late_iron_points[space]}")
    return ", ".join(parts) or "nothing"


def move(state: GameState, nation: str) -> Event:
    """The 13a event for one nation."""
    rules = ruleset_of(state)
    track = rules.nations[nation].ast_track
    at = state.nations[nation].ast_position
    stone = track.epoch_at(at) == rules.epochs[0].name
    if state.cities_on_board(nation) == 0 and at > 0 and not stone:
        data = {"nation": nation, "from": at, "to": at - 1, "epoch": track.epoch_at(at - 1),
                "requirement": "no city on the board"}
        return Event("AstMovedBack", data, ("seed 003: 13", "§33.4"))
    if at >= track.finish_space:
        return Event("AstHeld", {"nation": nation, "at": at, "epoch": track.epoch_at(at),
                                 "requirement": "already on the finish square"}, MOVE_CITES)
    epoch, missing = _shortfalls(state, nation, at + 1)
    if missing:
        data = {"nation": nation, "at": at, "epoch": epoch, "requirement": _requirement_text(state, nation, at + 1),
                "missing": missing}
        return Event("AstHeld", data, MOVE_CITES + ("§33.3",))
    data = {"nation": nation, "from": at, "to": at + 1, "epoch": epoch,
            "requirement": _requirement_text(state, nation, at + 1)}
    return Event("AstAdvanced", data, MOVE_CITES)


# -- the end of the game -------------------------------------------------------------------------


def score(state: GameState, nation: str) -> dict[str, int]:
    """One nation's victory points by part (§35)."""
    rules = ruleset_of(state)
    n = state.nations[nation]
    track = rules.nations[nation].ast_track
    trade, _ = sets_value(state, commodity_counts(state, nation), mining_commodities(state, nation))
    parts = {
        "civ_cards": civ_card_points(state, nation),
        "trade_cards": trade,
        "treasury": n.treasury,
        "ast": n.ast_position * track.points_per_space,
        "cities": state.cities_on_board(nation) * rules.numbers["points_per_city"],
    }
    parts["total"] = sum(parts.values())
    return parts


def final_standings(state: GameState) -> list[dict[str, Any]]:
    """Nations best first: score, then furthest on the A.S.T. (S2), then A.S.T.-ranking (D-11)."""
    rows = [{"nation": n, **score(state, n), "ast_position": state.nations[n].ast_position} for n in state.nations]
    rows.sort(key=lambda r: (-r["total"], -r["ast_position"], ast_rank(state, r["nation"])))
    for place, row in enumerate(rows, start=1):
        row["place"] = place
    return rows


def _game_end(state: GameState) -> list[Event]:
    rules = ruleset_of(state)
    finishers = [
        n for n in in_ast_order(state, state.nations)
        if state.nations[n].ast_position >= rules.nations[n].ast_track.finish_space
    ]
    last = options_of(state).last_turn
    time_up = last is not None and state.turn >= last
    if not finishers and not time_up:
        return []
    table = final_standings(state)
    tie = len(table) > 1 and table[0]["total"] == table[1]["total"]
    cites = END_CITES + (("fact sheet §8", "D-11") if tie else ()) + (("last-turn",) if time_up and not finishers else ())
    data = {"finishers": finishers, "scores": table, "winner": table[0]["nation"], "tie_broken": tie,
            "turn": state.turn} | ({"last_turn": last} if time_up else {})
    return [Event("GameEnded", data, cites)]


# -- the phase ---------------------------------------------------------------------------------------


def _moved(state: GameState) -> tuple[str, ...]:
    return tuple(state.filed.get("ast-moved", ()))


def settle(state: GameState, draws: Draws) -> list[Event]:
    if state.finished:
        return []
    if state.step == "":
        for nation in in_ast_order(state, state.nations):
            if nation not in _moved(state):
                return [move(state, nation)]
        return [Event("AstMarkersMoved", {}, ("seed 003: 13", "§33.1"))]
    if state.step == "moved":
        end = _game_end(state)  # restacking changes no score: the check may use the state before it
        return [*restack(state, draws), *(end or [phase_ended(PHASE, END_CITES[:2])])]
    return []


def _mark(state: GameState, nation: str) -> GameState:
    return replace(state, filed=state.filed.set("ast-moved", _moved(state) + (nation,)))


def apply_advanced(state: GameState, data: dict[str, Any]) -> GameState:
    state = state.with_nation(replace(state.nations[data["nation"]], ast_position=data["to"]))
    return _mark(state, data["nation"])


def apply_held(state: GameState, data: dict[str, Any]) -> GameState:
    return _mark(state, data["nation"])


def apply_markers_moved(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, step="moved", filed=state.filed.without("ast-moved"))


def apply_ended(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, finished=True, deadline=None)


def _tell_advanced(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    return f"{d['nation']}'s A.S.T. marker advanced from space {d['from']} to {d['to']} ({d['epoch']}; needs {d['requirement']})."


def _tell_held(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    if "missing" not in d:
        return f"{d['nation']}'s A.S.T. marker stays on space {d['at']}: {d['requirement']}."
    return (
        f"{d['nation']}'s A.S.T. marker is held on space {d['at']}: entering the {d['epoch']} needs "
        f"{d['requirement']}; it lacks {'; '.join(d['missing'])}."
    )


def _tell_back(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    return f"{d['nation']} has no city on the board: its A.S.T. marker moves back from space {d['from']} to {d['to']}."


def _tell_ended(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    rows = "; ".join(
        f"{r['place']}. {r['nation']} {r['total']} (cards {r['civ_cards']}, trade cards {r['trade_cards']}, "
        f"treasury {r['treasury']}, A.S.T. {r['ast']}, cities {r['cities']})"
        for r in d["scores"]
    )
    tie = " (tie broken by A.S.T. position, then A.S.T.-ranking)" if d.get("tie_broken") else ""
    if d["finishers"]:
        why = f"{', '.join(d['finishers'])} reached the finish of the A.S.T."
    else:
        why = f"turn {d['last_turn']} was the last turn agreed for this game (§34)."
    return f"The game ends: {why} Final scores: {rows}. {d['winner']} wins{tie}."


RULES = PhaseRules(
    name=PHASE,
    apply={
        "AstAdvanced": apply_advanced,
        "AstMovedBack": apply_advanced,
        "AstHeld": apply_held,
        "AstMarkersMoved": apply_markers_moved,
        "GameEnded": apply_ended,
        "CardsRestacked": apply_restacked,
        "PilesReshuffled": apply_reshuffled,
    },
    settle=settle,
    narrate={
        "AstAdvanced": _tell_advanced,
        "AstHeld": _tell_held,
        "AstMovedBack": _tell_back,
        "AstMarkersMoved": lambda s, e, v: None,
        "GameEnded": _tell_ended,
        "CardsRestacked": tell_restacked,
        "PilesReshuffled": tell_reshuffled,
    },
)
