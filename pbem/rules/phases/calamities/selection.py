"""Phase 8: calamity selection (seed 003: 8; R-3.3, D-14, §29.2-29.5).

Every calamity card held is revealed and leaves its holder's hand. The holder
is the primary victim; a tradable calamity that changed hands in phase 7
names its giver (Treachery's trader; never a secondary victim), told only to
the giver, the victim and the overseers (`knows_trader`). A player who
is primary victim of more than `primary-calamity-limit` calamities keeps that
many, drawn at random; the others go to the returned cards with no effect.

Under the No-Trading variant nobody holds a calamity: one die, by the most
advanced epoch on the A.S.T., says how many strike this turn (NT-7, `dice`),
and phase 9 draws them from the calamity pile one at a time.
"""

from __future__ import annotations

from typing import Any

from pbem.rules.board.ranking import in_ast_order
from pbem.rules.board.stacks import return_cards
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import PhaseRules, phase_ended
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.dice import apply_count, count_roll, tell_count
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

SELECTION = "calamity-selection"


def _giver(state: GameState, holder: str, calamity: str) -> str | None:
    """Who last traded this calamity to its holder this turn (None: never traded to him)."""
    giver = None
    for receiver, card, given_by in state.calamity_givers:
        if receiver == holder and card == calamity:
            giver = given_by
    return giver


def _revealed(state: GameState) -> list[dict[str, Any]]:
    rules = ruleset_of(state)
    order = rules.calamity_order()
    out = []
    for name in order:
        for nation in in_ast_order(state, state.nations):
            if name in state.nations[nation].hand:
                cal = rules.calamities[name]
                giver = _giver(state, nation, name) if cal.tradable else None
                out.append({"calamity": name, "victim": nation, "giver": giver, "stack": cal.stack})
    return out


def _limit(state: GameState) -> int | None:
    return options_of(state).primary_calamity_limit


def _over_limit(state: GameState) -> str | None:
    limit = _limit(state)
    if limit is None:
        return None
    for nation in in_ast_order(state, state.nations):
        if sum(1 for _, victim, _ in state.calamities if victim == nation) > limit:
            return nation
    return None


def apply_revealed(state: GameState, data: dict[str, Any]) -> GameState:
    for c in data["calamities"]:
        n = state.nations[c["victim"]]
        hand = list(n.hand)
        hand.remove(c["calamity"])
        state = state.with_nation(replace(n, hand=tuple(hand)))
    held = tuple((c["calamity"], c["victim"], c["giver"]) for c in data["calamities"])
    return replace(state, calamities=held, step="revealed")


def apply_limited(state: GameState, data: dict[str, Any]) -> GameState:
    gone = set(data["returned"])
    left = tuple(c for c in state.calamities if not (c[1] == data["victim"] and c[0] in gone))
    return return_cards(replace(state, calamities=left), data["returned"])


def settle_selection(state: GameState, draws: Draws) -> list[Event]:
    if parts_of(state).calamities.by_dice:  # NT-7
        if state.step == "":
            return [count_roll(state, draws), phase_ended(SELECTION, ("NT-7",))]
        return []
    if state.step == "":
        revealed = _revealed(state)
        if not revealed:
            return [phase_ended(SELECTION, ("R-3.3", "§29.2", "R-2.5"))]
        return [Event("CalamitiesRevealed", {"calamities": revealed}, ("seed 003: 8", "R-3.3", "D-14", "§29.2", "§29.3"))]
    if state.step == "revealed":
        victim = _over_limit(state)
        if victim is None:
            return [phase_ended(SELECTION, ("seed 003: 8", "D-14"))]
        limit = _limit(state)
        assert limit is not None
        mine = [c[0] for c in state.calamities if c[1] == victim]
        drawn = draws.shuffle(mine, f"{state.version}:calamity-limit:{victim}")
        kept = [c for c in mine if c in drawn[:limit]]
        returned = [c for c in mine if c not in kept]
        data = {"victim": victim, "limit": limit, "kept": kept, "returned": returned}
        return [Event("CalamitiesLimited", data, ("R-3.3", "D-14", "§29.5"))]
    return []


def knows_trader(viewer: str, victim: str, giver: str | None) -> bool:
    """Whether ``viewer`` may read who traded a calamity to its victim.

    Who traded a card is a detail of a deal between two players (§28.3: deal
    details are not revealed; docs/state.md): the giver, the victim and the
    overseers know it. Where a calamity's own rule gives the trader a public
    part (Treachery's beneficiary, Piracy's chooser, Barbarian route ties) he
    is named when he acts, in the resolution's own sentences, not here.
    """
    if giver is None:
        return False
    return viewer in ("moderator", "auditor") or viewer in (f"player:{victim.lower()}", f"player:{giver.lower()}")


def _tell_revealed(state: GameState, event: Event, viewer: str) -> str:
    parts = []
    for c in event.data["calamities"]:
        how = f" (traded by {c['giver']})" if knows_trader(viewer, c["victim"], c["giver"]) else ""
        parts.append(f"{c['calamity']} strikes {c['victim']}{how}")
    return "Calamities revealed: " + "; ".join(parts) + "."


def _tell_limited(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    return (
        f"{d['victim']} is primary victim of more than {d['limit']} calamities: kept at random "
        f"{', '.join(d['kept'])}; returned without effect: {', '.join(d['returned'])}."
    )


RULES = PhaseRules(
    name=SELECTION,
    apply={"CalamitiesRevealed": apply_revealed, "CalamitiesLimited": apply_limited, "CalamityCountRolled": apply_count},
    settle=settle_selection,
    narrate={"CalamitiesRevealed": _tell_revealed, "CalamitiesLimited": _tell_limited, "CalamityCountRolled": tell_count},
)
