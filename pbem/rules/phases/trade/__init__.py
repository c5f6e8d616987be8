"""Phase 7: trade (seed 003: 7; §28.1-28.53; fact sheet §2.10; NT-6).

Trading is simultaneous and by email. A player makes an OFFER to one or more
other players: the cards he gives (at least ``trade_min_cards``), of which at
least ``trade_named_cards`` are NAMED (shown to the other party) and the rest
hidden until the trade executes; and what he wants: at least two named cards
plus a count. The first addressee who ACCEPTs, committing to his exact cards
(the named ones plus any others up to the count), trades at once, provided
both sides still hold every card of their side. Only commodity cards and
tradable calamities change hands (§28.2): never non-tradable calamities,
treasury or civilization cards. Each tradable calamity that changes hands is
recorded in ``state.calamity_givers`` for phases 8-9.

Offers are private to their parties; nobody sees another's hidden cards until
they arrive in his own hand. A counter-offer is a new offer (optionally
``REPLACES <n>``, which withdraws one's own offer n or declines offer n made to
one). Every player holding cards is asked until he sends FINISH; the phase
ends when fewer than two players able to trade are left unfinished: when all
have sent FINISH, or at the deadline, which finishes everyone (his open offers
lapse with him). Under No-Trading the phase is skipped (NT-6).

A hand too small to trade (§28.3) is finished at once (``UnableToTrade``),
never asked, never offered a trade: with hand sizes public (D-8 `seed`) that
tells nobody anything. Enough cards but too few tradable (secret non-tradable
calamities, §27.4), or any hand under D-8 `1991`, is asked as before, lest the
list of players asked give it away; so is every hand in a game older than
rules revision 1 (`core.state.RULES_REVISION`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import PhaseRules, acting_nation, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

from pbem.rules.phases.trade.offers import (
    Offer,
    declined,
    offer_numbered,
    open_offers,
    tell_accepted,
    tell_executed,
    tell_finished,
    tell_lapsed,
    tell_offer,
    tell_unable,
    tell_withdrawn,
    write_ask,
    write_cards,
    write_give,
)

PHASE = "trade"

# -- commands ------------------------------------------------------------------------------


@dataclass(frozen=True)
class MakeOffer:
    """OFFER: ``give_named`` are shown to the addressees, ``give_hidden`` only after the trade."""

    player_id: int
    to: tuple[str, ...]
    give_named: tuple[str, ...]
    give_hidden: tuple[str, ...]
    ask_named: tuple[str, ...]
    ask_count: int
    replaces: int | None = None


@dataclass(frozen=True)
class AcceptOffer:
    player_id: int
    offer: int
    giving: tuple[str, ...]


@dataclass(frozen=True)
class WithdrawOffer:
    player_id: int
    offer: int


@dataclass(frozen=True)
class FinishTrading:
    player_id: int


# -- the offers on the table (kept in state.filed as plain tuples) -------------------------------


def _finished(state: GameState) -> tuple[str, ...]:
    return tuple(state.filed.get("finished", ()))


def _tradable(state: GameState, card: str) -> bool:
    """A commodity or a tradable calamity (§28.2); False for non-tradable calamities and unknown names."""
    rules = ruleset_of(state)
    if card in rules.calamities:
        return rules.calamities[card].tradable
    try:
        rules.commodity(card)
    except KeyError:
        return False
    return True


def trade_cards(state: GameState) -> tuple[str, ...]:
    """Every card name a player may write in a trade order (non-tradable calamities too, to refuse them by name)."""
    rules = ruleset_of(state)
    return tuple(c.name for s in rules.stacks for c in s.commodities) + tuple(rules.calamities)


def _can_trade(state: GameState, nation: str) -> bool:
    n = ruleset_of(state).numbers["trade_min_cards"]
    return sum(1 for c in state.nations[nation].hand if _tradable(state, c)) >= n


def _unable_openly(state: GameState) -> list[str]:
    """Nations not yet finished whose public hand size is below a trade's minimum side (§28.3, D-8), by name."""
    if state.revision < 1 or options_of(state).public_hand_size != "seed":
        return []
    n = ruleset_of(state).numbers["trade_min_cards"]
    done = _finished(state)
    return sorted(name for name, ns in state.nations.items() if name not in done and len(ns.hand) < n)


def asked(state: GameState) -> list[str]:
    """Nations holding any card that have not declared they are finished, in name order.

    Players who cannot trade (fewer than three tradable cards, §28.3) are asked too, to
    send FINISH, so the list of players asked never tells how many cards anyone holds.
    """
    done = _finished(state)
    return sorted(n for n, ns in state.nations.items() if n not in done and ns.hand)


def still_trading(state: GameState) -> list[str]:
    """Nations that can trade and have not declared they are finished, in name order."""
    done = _finished(state)
    return sorted(n for n in state.nations if n not in done and _can_trade(state, n))


def _holds(hand: tuple[str, ...], cards: tuple[str, ...]) -> bool:
    have = Counter(hand)
    return all(have[c] >= k for c, k in Counter(cards).items())


def _without(hand: tuple[str, ...], cards: tuple[str, ...]) -> tuple[str, ...]:
    left = list(hand)
    for c in cards:
        left.remove(c)
    return tuple(left)


def _lapse_offers_of(state: GameState, nation: str) -> GameState:
    """Drop ``nation``'s offers and strike it from offers made to it (dropping offers left with nobody)."""
    kept = []
    for o in open_offers(state):
        if o.offerer == nation:
            continue
        to = tuple(t for t in o.to if t != nation)
        if to:
            kept.append(replace(o, to=to).record())
    return replace(state, filed=state.filed.set("offers", tuple(kept)))


def _remove_offer(state: GameState, number: int) -> GameState:
    kept = tuple(o.record() for o in open_offers(state) if o.number != number)
    return replace(state, filed=state.filed.set("offers", kept))


def _decline(state: GameState, number: int, nation: str) -> GameState:
    kept = []
    for o in open_offers(state):
        if o.number == number:
            o = replace(o, to=tuple(t for t in o.to if t != nation))
            if not o.to:
                continue
        kept.append(o.record())
    return replace(state, filed=state.filed.set("offers", tuple(kept)))


# -- folding -------------------------------------------------------------------------------


def apply_offer(state: GameState, data: dict[str, Any]) -> GameState:
    if data.get("replaces") is not None:
        old = offer_numbered(state, data["replaces"])
        if old is not None and old.offerer == data["nation"]:
            state = _remove_offer(state, old.number)
        elif old is not None:
            state = _decline(state, old.number, data["nation"])
            told = (old.number, old.offerer, data["nation"], data["offer"])
            state = replace(state, filed=state.filed.set("declined", tuple(state.filed.get("declined", ())) + (told,)))
    offer = Offer(data["offer"], data["nation"], tuple(data["to"]), tuple(data["give_named"]),
                  tuple(data["give_hidden"]), tuple(data["ask_named"]), data["ask_count"])
    filed = state.filed.set("offers", tuple(o.record() for o in open_offers(state)) + (offer.record(),))
    return replace(state, filed=filed.set("count", (data["offer"],)))


def apply_withdrawn(state: GameState, data: dict[str, Any]) -> GameState:
    return _remove_offer(state, data["offer"])


def apply_finished(state: GameState, data: dict[str, Any]) -> GameState:
    state = _lapse_offers_of(state, data["nation"])
    return replace(state, filed=state.filed.set("finished", _finished(state) + (data["nation"],)))


def apply_unable(state: GameState, data: dict[str, Any]) -> GameState:
    finished = _finished(state) + tuple(n for n in data["nations"] if n not in _finished(state))
    return replace(state, filed=state.filed.set("finished", finished))


def apply_executed(state: GameState, data: dict[str, Any]) -> GameState:
    a, b = data["offerer"], data["acceptor"]
    a_gives, b_gives = tuple(data["offerer_gives"]), tuple(data["acceptor_gives"])
    na, nb = state.nations[a], state.nations[b]
    state = state.with_nation(replace(na, hand=_without(na.hand, a_gives) + b_gives))
    state = state.with_nation(replace(nb, hand=_without(nb.hand, b_gives) + a_gives))
    state = _remove_offer(state, data["offer"])
    givers = tuple(tuple(g) for g in data["calamities"])
    return replace(state, calamity_givers=state.calamity_givers + givers)


def apply_lapsed(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, filed=state.filed.set("offers", ()))


# -- deciding ------------------------------------------------------------------------------


def _trader(state: GameState, player_id: int) -> str:
    nation = acting_nation(state, player_id)
    if state.phase != PHASE or state.step == "ended":
        raise Rejection("trading happens only in phase 7 (Trade)", "seed 003: 7")
    if nation in _finished(state):
        raise Rejection("you have declared that you are finished trading this turn", "seed 003: 7")
    return nation


def _check_side(state: GameState, named: tuple[str, ...], count: int, whose: str) -> None:
    numbers = ruleset_of(state).numbers
    for card in named:
        if not _tradable(state, card):
            raise Rejection(f"{card} cannot be traded: only commodity cards and tradable calamities change hands", "§27.3")
    if count < numbers["trade_min_cards"]:
        raise Rejection(f"{whose} side has {count} cards: each side of a trade gives at least {numbers['trade_min_cards']}", "§28.3")
    if len(named) < numbers["trade_named_cards"]:
        raise Rejection(f"{whose} side names {len(named)} cards: each side must name at least {numbers['trade_named_cards']} of its cards truthfully", "§28.3")


def decide_offer(state: GameState, command: MakeOffer) -> list[Event]:
    nation = _trader(state, command.player_id)
    trading = asked(state)
    to = tuple(dict.fromkeys(command.to))
    if not to:
        raise Rejection("say to whom you offer: OFFER <nation>: ...")
    for other in to:
        if other == nation:
            raise Rejection("you cannot trade with yourself", "§28.2")
        if other not in trading:
            raise Rejection(f"{other} is not trading now (finished, or holds no cards)", "seed 003: 7")
    give = command.give_named + command.give_hidden
    for card in command.give_hidden:
        if not _tradable(state, card):
            raise Rejection(f"{card} cannot be traded: only commodity cards and tradable calamities change hands", "§27.3")
    _check_side(state, command.give_named, len(give), "your")
    _check_side(state, command.ask_named, command.ask_count, "the other")
    if len(command.ask_named) > command.ask_count:
        raise Rejection("you ask for more named cards than the count you ask for", "§28.3")
    if not _holds(state.nations[nation].hand, give):
        raise Rejection(f"you do not hold all of {', '.join(give)}: offer only cards in your hand", "§28.3")
    data: dict[str, Any] = {
        "nation": nation, "offer": state.filed.get("count", (0,))[0] + 1, "to": list(to),
        "give_named": list(command.give_named), "give_hidden": list(command.give_hidden),
        "ask_named": list(command.ask_named), "ask_count": command.ask_count,
    }
    if command.replaces is not None:
        old = offer_numbered(state, command.replaces)
        if old is None or (old.offerer != nation and nation not in old.to):
            raise Rejection(f"there is no open offer {command.replaces} by you or to you to replace")
        data["replaces"] = command.replaces
    return [Event("OfferMade", data, ("seed 003: 7", "§28.1", "§28.3"))]


def _refusal_to_execute(state: GameState, offer: Offer, acceptor: str, giving: tuple[str, ...]) -> str | None:
    if not _holds(state.nations[acceptor].hand, giving):
        return f"you do not hold all of {', '.join(giving)}"
    if not _holds(state.nations[offer.offerer].hand, offer.give):
        return f"{offer.offerer} no longer holds every card of its side of offer {offer.number}"
    return None


def decide_accept(state: GameState, command: AcceptOffer) -> list[Event]:
    nation = _trader(state, command.player_id)
    offer = offer_numbered(state, command.offer)
    if offer is None or nation not in offer.to:
        raise Rejection(f"there is no open offer {command.offer} to you", "seed 003: 7")
    giving = tuple(command.giving)
    for card in giving:
        if not _tradable(state, card):
            raise Rejection(f"{card} cannot be traded: only commodity cards and tradable calamities change hands", "§27.3")
    if len(giving) != offer.ask_count:
        raise Rejection(f"offer {offer.number} asks for exactly {offer.ask_count} cards; you gave {len(giving)}", "§28.3")
    if not _holds(giving, offer.ask_named):
        raise Rejection(f"offer {offer.number} asks for {', '.join(offer.ask_named)} among your cards", "§28.3")
    why = _refusal_to_execute(state, offer, nation, giving)
    if why:
        raise Rejection(f"the trade cannot be made: {why}", "§28.3")
    calamities = [[nation, c, offer.offerer] for c in offer.give if c in ruleset_of(state).calamities]
    calamities += [[offer.offerer, c, nation] for c in giving if c in ruleset_of(state).calamities]
    return [
        Event("OfferAccepted", {"nation": nation, "offer": offer.number, "offerer": offer.offerer, "giving": list(giving)},
              ("seed 003: 7",)),
        Event("TradeExecuted", {
            "offer": offer.number, "offerer": offer.offerer, "acceptor": nation,
            "offerer_gives": list(offer.give), "acceptor_gives": list(giving), "calamities": calamities,
        }, ("seed 003: 7", "§28.1", "§28.2", "§28.3")),
    ]


def decide_withdraw(state: GameState, command: WithdrawOffer) -> list[Event]:
    nation = _trader(state, command.player_id)
    offer = offer_numbered(state, command.offer)
    if offer is None or offer.offerer != nation:
        raise Rejection(f"you have no open offer {command.offer}", "seed 003: 7")
    return [Event("OfferWithdrawn", {"nation": nation, "offer": offer.number, "to": list(offer.to)}, ("seed 003: 7",))]


def decide_finish(state: GameState, command: FinishTrading) -> list[Event]:
    nation = _trader(state, command.player_id)
    return [Event("TradingFinished", {"nation": nation}, ("seed 003: 7",))]


def defaults(state: GameState, prompt: Prompt) -> list[Event]:
    return [Event("TradingFinished", {"nation": acting_nation(state, prompt.player_id), "by_default": True}, ("seed 003: 7",))]


# -- prompts -------------------------------------------------------------------------------


def _shown(offer: Offer) -> str:
    """An offer as its addressees see it: the named cards and the count."""
    hidden = len(offer.give_hidden)
    gives = write_cards(offer.give_named) + (f" + {hidden} more" if hidden else "")
    return f"gives {gives} ({len(offer.give)} cards) FOR {write_ask(offer.ask_named, offer.ask_count)} ({offer.ask_count} cards)"


def _acceptance(state: GameState, offer: Offer, nation: str) -> tuple[str, ...] | None:
    """The cards ``nation`` could give for ``offer``: the named ones, then others from his hand."""
    hand = state.nations[nation].hand
    if not _holds(hand, offer.ask_named):
        return None
    rest = [c for c in _without(hand, offer.ask_named) if _tradable(state, c)]
    more = offer.ask_count - len(offer.ask_named)
    if len(rest) < more:
        return None
    giving = offer.ask_named + tuple(rest[:more])
    return giving if _refusal_to_execute(state, offer, nation, giving) is None else None


#: What a ready-made OFFER asks for: the cards most players hold (stack 1 is drawn by every city owner).
ASKS = (("Ochre", "Hides"), ("Ochre", "Ochre"), ("Hides", "Hides"))


def _offer_lines(state: GameState, nation: str, others: list[str]) -> list[str]:
    numbers = ruleset_of(state).numbers
    cards = [c for c in state.nations[nation].hand if _tradable(state, c)]
    calamities = [c for c in cards if c in ruleset_of(state).calamities]
    commodities = [c for c in cards if c not in ruleset_of(state).calamities]
    ordered = commodities + calamities
    named = tuple(ordered[: numbers["trade_named_cards"]])
    rest = _without(tuple(cards), named)
    hidden_first = [c for c in rest if c in calamities] + [c for c in rest if c not in calamities]
    hidden = tuple(hidden_first[: max(0, numbers["trade_min_cards"] - len(named))])
    rules = ruleset_of(state)
    asks = [a for a in ASKS if all(c in trade_cards(state) for c in a)] or [
        tuple([rules.stacks[0].commodities[0].name] * numbers["trade_named_cards"])]
    lines = []
    for other in others:
        for ask in asks:
            lines.append(f"OFFER {other}: {write_give(named, hidden)} FOR {write_ask(ask, numbers['trade_min_cards'])}")
    return lines


def pending(state: GameState) -> dict[str, Prompt]:
    if len(still_trading(state)) < 2:
        return {}
    trading = asked(state)
    offers = open_offers(state)
    out = {}
    for nation in trading:
        n = state.nations[nation]
        others = [o for o in trading if o != nation]
        if not _can_trade(state, nation):
            out[nation.lower()] = Prompt(
                who=nation.lower(), player_id=n.player_id, step="trade",
                question=(f"Trade. You hold fewer than {ruleset_of(state).numbers['trade_min_cards']} tradable cards, "
                          "so you cannot trade this turn: send FINISH."),
                choices=("FINISH",), template="FINISH",
                default="you finish trading",
                situation=(f"Your hand: {write_cards(n.hand)}.",),
                cites=("§28.3", "§27.3"),
            )
            continue
        to_me = [o for o in offers if nation in o.to]
        mine = [o for o in offers if o.offerer == nation]
        choices = ["FINISH"]
        for o in to_me:
            giving = _acceptance(state, o, nation)
            if giving is not None:
                choices.append(f"ACCEPT {o.number} GIVING {write_cards(giving)}")
        choices += [f"WITHDRAW {o.number}" for o in mine[:5]]
        choices += _offer_lines(state, nation, others)
        situation = [f"Your hand: {write_cards(n.hand) or 'no cards'}."]
        situation += [f"Offer {o.number} to you from {o.offerer}: {_shown(o)}." for o in to_me]
        situation += [f"Your offer {o.number} to {', '.join(o.to)}: {write_give(o.give_named, o.give_hidden)} "
                      f"FOR {write_ask(o.ask_named, o.ask_count)}." for o in mine]
        turned_down = declined(state, nation)
        situation += [f"{by} declined your offer {n}, making offer {instead} in its place"
                      + (" to you." if any(o.number == instead for o in to_me) else ".") for n, by, instead in turned_down]
        situation.append(f"Not yet finished: {', '.join(trading)}.")
        numbers = ruleset_of(state).numbers
        latest = max((o.number for o in to_me), default=None)
        out[nation.lower()] = Prompt(
            who=nation.lower(),
            player_id=n.player_id,
            # a new offer to him, or one of his declined, brings his prompt up to date
            step="trade" + (f":offer-{latest}" if latest is not None else "")
            + (f":declined-{len(turned_down)}" if turned_down else ""),
            question=(
                f"Trade. Each side gives at least {numbers['trade_min_cards']} cards and names at least "
                f"{numbers['trade_named_cards']} of them truthfully; only the named cards are shown, the others "
                "arrive with the trade. Commodities and tradable calamities only. "
                "OFFER <nation>[, <nation>]: <named cards> + <hidden cards> FOR <named cards> + <n> more "
                "[REPLACES <offer>] -- e.g. OFFER Crete: Salt 2 + Treachery FOR Grain, Iron + 2 more. "
                "ACCEPT <offer> GIVING <all your cards for it>. WITHDRAW <offer>. "
                "FINISH when you are done trading (you stay asked until then)."
            ),
            choices=tuple(choices[:60]),
            template=next((c for c in choices if c.startswith("ACCEPT")), next((c for c in choices if c.startswith("OFFER")), "FINISH")),
            default="you finish trading (your open offers lapse)",
            situation=tuple(situation),
            cites=("seed 003: 7", "§28.1", "§28.2", "§28.3", "§27.3"),
        )
    return out


# -- resolving -----------------------------------------------------------------------------


def settle(state: GameState, draws: Draws) -> list[Event]:
    if not parts_of(state).calamities.trading:
        return [phase_ended(PHASE, ("NT-6",))]
    unable = _unable_openly(state)
    if unable:
        data = {"nations": unable, "cards": [len(state.nations[n].hand) for n in unable],
                "least": ruleset_of(state).numbers["trade_min_cards"]}
        return [Event("UnableToTrade", data, ("seed 003: 7", "§28.3", "D-8"))]
    if len(still_trading(state)) >= 2:
        return []
    events = []
    offers = open_offers(state)
    if offers:
        events.append(Event("OffersLapsed", {"offers": [o.number for o in offers],
                                             "parties": sorted({p for o in offers for p in (o.offerer, *o.to)})},
                            ("seed 003: 7",)))
    return events + [phase_ended(PHASE, ("seed 003: 7", "§28.41"))]


RULES = PhaseRules(
    name=PHASE,
    apply={
        "OfferMade": apply_offer,
        "OfferWithdrawn": apply_withdrawn,
        "OfferAccepted": lambda s, d: s,
        "TradeExecuted": apply_executed,
        "TradingFinished": apply_finished,
        "UnableToTrade": apply_unable,
        "OffersLapsed": apply_lapsed,
    },
    decide={MakeOffer: decide_offer, AcceptOffer: decide_accept, WithdrawOffer: decide_withdraw, FinishTrading: decide_finish},
    pending=pending,
    defaults=defaults,
    settle=settle,
    inputs={
        "OfferMade": lambda s, d: MakeOffer(
            s.nations[d["nation"]].player_id, tuple(d["to"]), tuple(d["give_named"]), tuple(d["give_hidden"]),
            tuple(d["ask_named"]), d["ask_count"], d.get("replaces")),
        "OfferAccepted": lambda s, d: AcceptOffer(s.nations[d["nation"]].player_id, d["offer"], tuple(d["giving"])),
        "OfferWithdrawn": lambda s, d: WithdrawOffer(s.nations[d["nation"]].player_id, d["offer"]),
        "TradingFinished": lambda s, d: FinishTrading(s.nations[d["nation"]].player_id),
    },
    narrate={
        "OfferMade": tell_offer,
        "OfferWithdrawn": tell_withdrawn,
        "OfferAccepted": tell_accepted,
        "TradeExecuted": tell_executed,
        "TradingFinished": tell_finished,
        "UnableToTrade": tell_unable,
        "OffersLapsed": tell_lapsed,
    },
)
