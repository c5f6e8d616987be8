"""No-Trading: calamities by dice instead of trade (seed 004: 5; RULINGS.md NT-7 to NT-11, NT-14, Q-NT5, Q-NT6).

Phase 8 rolls how many calamities strike this turn, by the most advanced
epoch any A.S.T. marker occupies (NT-7). Phase 9 then, for each of them in
turn: every player who is not exempt rolls 2d6 (an exempt one only when his
standing order says he volunteers, NT-8); ties for lowest and for highest
are rolled again among the tied, each end settled on its own (NT-9); the top
card of the calamity pile is drawn (NT-10); Low is its primary victim and
High takes the part of the player who traded it to him. The card is resolved
completely before the next calamity's rolls, and stays face up until phase 9
of the next turn has ended (NT-14).

Every die comes from the game's committed seed, labelled by the game version
and the roll, and is recorded in the event (NT-16): `verify` re-derives it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.board.ranking import in_ast_order
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import acting_nation
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

DRAW_CITES = ("seed 004: 5", "NT-8", "NT-9", "NT-10")


@dataclass(frozen=True)
class Volunteer:
    """VOLUNTEER [ON|OFF]: the standing order to roll for calamities even when exempt (NT-8)."""

    player_id: int
    on: bool


# -- NT-7: how many calamities --------------------------------------------------------------------


def most_advanced_epoch(state: GameState) -> str:
    """The latest epoch any nation's marker occupies, each on its own track (NT-7, fact sheet §5)."""
    rules = ruleset_of(state)
    order = [e.name for e in rules.epochs]
    reached = [rules.nations[n].ast_track.epoch_at(state.nations[n].ast_position) for n in state.nations]
    return max(reached, key=order.index, default=order[0])


def count_roll(state: GameState, draws: Draws) -> Event:
    """Phase 8 under No-Trading: one die for the number of calamities this turn; below zero counts as zero."""
    epoch = most_advanced_epoch(state)
    sides, add = parts_of(state).calamities.count_dice(ruleset_of(state), epoch)
    die = draws.below(sides, f"{state.version}:calamity-count") + 1 if sides else None
    count = max(0, die + add) if die is not None else 0
    data = {"epoch": epoch, "sides": sides, "add": add, "die": die, "count": count}
    return Event("CalamityCountRolled", data, ("seed 004: 5a", "NT-7"))


def apply_count(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, calamity_draws_left=data["count"])


def tell_count(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    if d["die"] is None:
        return f"No calamities this turn: every A.S.T. marker is in the {d['epoch']} (NT-7)."
    sign = f"{d['add']:+d}" if d["add"] else ""
    return (
        f"Calamities this turn: {d['count']} (the most advanced marker is in the {d['epoch']}: "
        f"d{d['sides']}{sign}, rolled {d['die']})."
    )


# -- NT-8, NT-9: who rolls, Low and High ------------------------------------------------------------


def exempt(state: GameState, nation: str) -> bool:
    """Fewer cities than the epoch of his next A.S.T. space asks for: he need not roll (NT-8, SC-18)."""
    rules = ruleset_of(state)
    track = rules.nations[nation].ast_track
    needed = {e.name: e.cities for e in rules.epochs}[track.epoch_at(state.nations[nation].ast_position + 1)]
    return state.cities_on_board(nation) < needed


def rollers(state: GameState) -> list[str]:
    """Who rolls for the next calamity: everyone not exempt, and the exempt who volunteer, in A.S.T. order."""
    return [n for n in in_ast_order(state, state.nations) if not exempt(state, n) or state.nations[n].volunteers]


def _two_dice(draws: Draws, label: str) -> int:
    return draws.below(6, label + "/a") + draws.below(6, label + "/b") + 2


def roll_off(draws: Draws, rolling: list[str], label: str) -> tuple[dict[str, list[int]], str | None, str | None]:
    """Every roller's 2d6 totals, in the order rolled, and who is Low and High (NT-9, Q-NT6).

    While every roller in play ties, all of them roll again, which settles
    both ends at once (two rollers tying, or everyone tying). Then only those
    tied for lowest roll again until one is lowest, and likewise for highest:
    a reroll for one end never decides the other.
    """
    rolls: dict[str, list[int]] = {n: [] for n in rolling}
    if not rolling:
        return rolls, None, None

    def roll(nations: list[str], tag: str) -> dict[str, int]:
        now = {n: _two_dice(draws, f"{label}:{tag}:{n}") for n in nations}
        for n, total in now.items():
            rolls[n].append(total)
        return now

    current = roll(rolling, "0")
    rounds = 0
    while len(current) > 1 and len(set(current.values())) == 1:
        rounds += 1
        current = roll(list(current), f"all{rounds}")
    if len(current) == 1:
        return rolls, next(iter(current)), None

    def settle(end: str, pick: Any) -> str:
        best = pick(current.values())
        tied = [n for n, t in current.items() if t == best]
        tries = 0
        while len(tied) > 1:
            tries += 1
            again = roll(tied, f"{end}{tries}")
            best = pick(again.values())
            tied = [n for n, t in again.items() if t == best]
        return tied[0]

    return rolls, settle("low", min), settle("high", max)


def draw_next(state: GameState, draws: Draws) -> Event:
    """The next calamity of the turn: the rolls, then the top card of the pile (NT-8 to NT-10, Q-NT5, Q-NT6)."""
    number = int(state.filed.get("drawn", (0,))[0]) + 1
    if not state.calamity_pile:
        data = {"number": number, "left": state.calamity_draws_left}
        return Event("CalamityPileEmpty", data, ("NT-10", "Q-NT5"))
    excused = [n for n in in_ast_order(state, state.nations) if exempt(state, n)]
    rolling = rollers(state)
    rolls, low, high = roll_off(draws, rolling, f"{state.version}:calamity-roll:{number}")
    data: dict[str, Any] = {
        "number": number, "exempt": excused, "volunteers": [n for n in excused if n in rolling],
        "rolls": rolls, "low": low, "high": high,
        "calamity": state.calamity_pile[0] if low else None,
    }
    return Event("CalamityDrawn", data, DRAW_CITES + (("Q-NT6",) if len(rolling) < 2 else ()))


def apply_drawn(state: GameState, data: dict[str, Any]) -> GameState:
    left = replace(state, calamity_draws_left=state.calamity_draws_left - 1, filed=state.filed.set("drawn", (data["number"],)))
    card = data["calamity"]
    if card is None:  # nobody rolled: the calamity is void, but it counts (Q-NT6)
        return left
    return replace(
        left,
        calamity_pile=state.calamity_pile[1:],
        calamities=((card, data["low"], data["high"]),),
        calamities_face_up=state.calamities_face_up + ((card, state.turn),),
    )


def apply_pile_empty(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, calamity_draws_left=0)


def tell_drawn(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    rolled = "; ".join(f"{n} {'/'.join(str(t) for t in totals)}" for n, totals in d["rolls"].items()) or "nobody rolls"
    excused = [n for n in d["exempt"] if n not in d["volunteers"]]
    notes = (f"; exempt: {', '.join(excused)}" if excused else "") + (
        f"; volunteering: {', '.join(d['volunteers'])}" if d["volunteers"] else "")
    head = f"Calamity {d['number']} of the turn: rolls {rolled}{notes}"
    if d["calamity"] is None:
        return f"{head}. Nobody rolled, so the calamity is void (Q-NT6)."
    high = f", High {d['high']} plays the trader's part" if d["high"] else ", no High (one roller)"
    return f"{head}. Low {d['low']}{high}; {d['calamity']} is drawn and strikes {d['low']}."


# -- NT-14: face up until the next turn's phase 9 has ended ---------------------------------------


def back_in_pile(state: GameState) -> Event | None:
    """At the end of phase 9, the calamities drawn in an earlier turn go back into the pile (NT-14)."""
    cards = [card for card, turn in state.calamities_face_up if turn < state.turn]
    return Event("CalamitiesBackInPile", {"calamities": cards}, ("NT-14", "NT-15")) if cards else None


def apply_back_in_pile(state: GameState, data: dict[str, Any]) -> GameState:
    back = list(data["calamities"])
    face_up = tuple((c, t) for c, t in state.calamities_face_up if not (t < state.turn and c in back))
    returned = state.returned.set(0, tuple(state.returned.get(0, ())) + tuple(back))
    return replace(state, calamities_face_up=face_up, returned=returned)


# -- NT-8: the standing order -----------------------------------------------------------------------


def decide_volunteer(state: GameState, command: Volunteer) -> list[Event]:
    if not parts_of(state).calamities.volunteers:
        raise Rejection("VOLUNTEER is an order of the No-Trading variant, which this game does not play", "NT-8")
    nation = acting_nation(state, command.player_id)
    return [Event("VolunteeringSet", {"nation": nation, "volunteers": command.on}, ("NT-8",))]


def apply_volunteering(state: GameState, data: dict[str, Any]) -> GameState:
    return state.with_nation(replace(state.nations[data["nation"]], volunteers=data["volunteers"]))


def tell_volunteering(state: GameState, event: Event, viewer: str) -> str | None:
    d = event.data
    if viewer not in ("moderator", "auditor") and viewer != f"player:{d['nation'].lower()}":
        return None  # a standing order is the player's own until he rolls
    if d["volunteers"]:
        return f"{d['nation']} will roll for calamities even when exempt (VOLUNTEER, NT-8)."
    return f"{d['nation']} will not roll for calamities when exempt (VOLUNTEER OFF, NT-8)."
