"""Phase 12: civilization advances acquisition (§31; seed 003: 12; RULINGS §2 rows 12a, 12b).

12a. Every player who could buy at least one civilization card files one
     ADVANCE order (the cards, and what he pays with); a player who can
     afford nothing is not asked. Orders stay secret until everyone asked has
     filed or the deadline passes (default: buy nothing), then they are
     carried out in A.S.T.-ranking order.

     A purchase is paid with (§31, fact sheet §2.13):
     * commodity sets: n identical cards are worth n² × face value (§28.51);
       with Mining, once per turn one Iron/Bronze/Silver/Gems/Gold set counts
       one card larger, up to the printed maximum (§28.53, §32.261);
     * treasury tokens (back to stock), but never more than the cards and
       credits leave to pay (§31: treasury may not be deliberately overpaid);
     * credits of the civilization cards owned before this turn, each applying
       once to every card bought; credits always apply (§31.54, §31.55).
     No change is given: cards paying more than the price lose the excess
     (§31.58). Prerequisites must be owned before this turn (§31, fact sheet §2.13:
     "owned in a previous turn"; so Law and Democracy cannot be bought together). A player
     owns one copy of a card at most; at most `civ_card_copies` nations own a
     card (§3.1C, §31.61; a card sold out by an earlier buyer in A.S.T. order voids the
     later order, nothing being spent).

12b. Every player keeps at most `hand_limit` commodity cards (§31.71): one
     over it names his discards (DISCARD; default: the lowest face values).
     Spent and discarded cards go to `state.returned` for 13b (D-22). The
     number kept is public (D-8 either way).

Under No-Trading the money cards take the commodities' place: they pay their
face values and the hand limit is the money one (NT-13; `ruleset.parts` deck).
"""

from __future__ import annotations

from pbem.rules.board.ranking import in_ast_order
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.phase import PhaseRules, acting_nation, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.state import GameState
from pbem.rules.phases.advances.hand_limit import (
    LIMIT_CITES,
    DiscardCards,
    apply_discarded,
    apply_limited,
    decide_discard,
    default_discards,
    discard_prompts,
    tell_discarded,
    tell_limited,
)
from pbem.rules.phases.advances.payment import PHASE
from pbem.rules.phases.advances.purchase import (
    BuyAdvances,
    advance_prompt,
    apply_bought,
    apply_ordered,
    apply_purchases_done,
    apply_revealed,
    asked_to_buy,
    command_of_order,
    decide_buy,
    order_on_file,
    purchase_event,
    tell_bought,
    tell_ordered,
    tell_revealed,
)

# -- who is asked ----------------------------------------------------------------------------


def pending(state: GameState) -> dict[str, Prompt]:
    if state.step == "":
        return {n.lower(): advance_prompt(state, n) for n in asked_to_buy(state) if order_on_file(state, n) is None}
    if state.step == "hand-limit":
        return discard_prompts(state)
    return {}


# -- deciding ------------------------------------------------------------------------------------


def defaults(state: GameState, prompt: Prompt) -> list[Event]:
    nation = acting_nation(state, prompt.player_id)
    if prompt.step == "buy-advances":
        return [Event("AdvancesOrdered", {"nation": nation, "cards": [], "pay": {}, "treasury": 0, "by_default": True})]
    cards = tuple(default_discards(state, nation).items())
    return decide_discard(state, DiscardCards(prompt.player_id, cards), True)


# -- resolving -----------------------------------------------------------------------------------------


def settle(state: GameState, draws: Draws) -> list[Event]:
    if state.step == "":
        asked = asked_to_buy(state)
        if any(order_on_file(state, n) is None for n in asked):
            return []
        orders = {n: order_on_file(state, n)["cards"] for n in in_ast_order(state, state.nations) if order_on_file(state, n)}  # type: ignore[index]
        return [Event("AdvanceOrdersRevealed", {"orders": orders, "asked": asked}, ("seed 003: 12", "§31"))]
    if state.step == "buy":
        for nation in in_ast_order(state, state.nations):
            if order_on_file(state, nation) is not None:
                return [purchase_event(state, nation)]
        return [Event("AdvancePurchasesDone", {}, ("seed 003: 12",))]
    if state.step == "hand-limit":
        if pending(state):
            return []
        kept = {n: len(state.nations[n].hand) for n in in_ast_order(state, state.nations)}
        return [Event("HandsLimited", {"kept": kept}, LIMIT_CITES), phase_ended(PHASE, ("seed 003: 12",))]
    return []


RULES = PhaseRules(
    name=PHASE,
    apply={
        "AdvancesOrdered": apply_ordered,
        "AdvanceOrdersRevealed": apply_revealed,
        "AdvancesBought": apply_bought,
        "AdvancePurchasesDone": apply_purchases_done,
        "CardsDiscarded": apply_discarded,
        "HandsLimited": apply_limited,
    },
    decide={BuyAdvances: decide_buy, DiscardCards: decide_discard},
    pending=pending,
    defaults=defaults,
    settle=settle,
    inputs={
        "AdvancesOrdered": command_of_order,
        "CardsDiscarded": lambda s, d: DiscardCards(s.nations[d["nation"]].player_id, tuple(d["cards"].items())),
    },
    narrate={
        "AdvancesOrdered": tell_ordered,
        "AdvanceOrdersRevealed": tell_revealed,
        "AdvancesBought": tell_bought,
        "AdvancePurchasesDone": lambda s, e, v: None,
        "CardsDiscarded": tell_discarded,
        "HandsLimited": tell_limited,
    },
)
