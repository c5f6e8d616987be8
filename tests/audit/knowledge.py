"""What each viewer may know of a game, derived from its log by the rules alone: the visibility test's model.

Written from the rules, not from the product's view code (`pbem.rules.view` is
never asked what is allowed): §27.3-27.4 (drawn cards are secret), §28.3
(hands may not be shown; deal details may not be revealed afterwards), D-8
(`public-hand-size`: `seed` every count public, `1991` only the count kept
after 12b), Q-S20 (the card taken as spoils is the two players'), §29.61 with
Q-S6 and Q-NT7 (the trader's public part), DESIGN §4 (the seed is revealed
at the end), and the press and table rules of docs/orders.md.

The model answers two kinds of question:

* which parts of an event are whose secret (`event_secrets`): each `Secret`
  names its readers and knows how to change the secret in a payload, so the
  test can check *noninterference*: whatever a non-reader is told of the
  event must not change when the secret does;
* what a viewer may know of the game at a version (`Knowledge`): whose trader
  of which calamity, the hand counts D-8 makes public, when the seed becomes
  public, who reads a press message.

`perturbed_state` changes every secret of the state a viewer may not know
(other hands, traders of calamities he was not party to, the stacks' order),
so a view or a sentence built from it must come out the same.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from email.message import EmailMessage
from typing import Any

from pbem.rules.core.frozen import FrozenMap
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of

#: Viewers who read everything in views and sentences (the moderator; an auditor, DESIGN §3).
OVERSEERS = frozenset({"moderator", "auditor"})

#: The twelve calamities of 1991 (fact sheet §2.12): the four that cannot be traded, and the eight that can.
FIXED = ("Volcanic Eruption / Earthquake", "Famine", "Civil War", "Flood")
TRADABLE = ("Treachery", "Superstition", "Slave Revolt", "Barbarian Hordes", "Epidemic", "Civil Disorder",
            "Iconoclasm & Heresy", "Piracy")

#: Calamities whose rule gives their trader a part played in the open, from the moment the calamity is resolved.
#: Every other calamity's trader stays between trader and victim (§28.3); the trader of these is still not named
#: when the calamities are revealed, only where he acts.
TRADER_ACTS_IN_THE_OPEN = {
    "Treachery": "the trader is the beneficiary and picks the city he takes (§30.2, Q-S6)",
    "Piracy": "the trader picks the victim's coastal cities that become Pirate cities (§30.9)",
    "Barbarian Hordes": "the trader chooses between tied areas (§30.5251)",
}

#: Phases where a hand decides who is asked at all: 12a asks only those who can afford a civilization card, 12b
#: only those over the hand limit. Who is asked is public (the brief's rule for `pending`; what they are asked is
#: not), so there a hand's size is not changed and the players asked may differ when the hands do. This is a
#: flow the rules do not make: at the table a player who cannot buy is not told apart from one who buys nothing.
HAND_DECIDES_WHO_IS_ASKED = ("civilization-advances",)


def seat(nation: str) -> str:
    """The viewer of a nation's player."""
    return f"player:{nation.lower()}"


def readers_of(*nations: str | None) -> frozenset[str]:
    return frozenset(seat(n) for n in nations if n)


# -- the cards -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cards:
    """The game's trade cards by kind, for changing a secret card into another of the same kind."""

    commodities: tuple[str, ...]
    calamities: tuple[str, ...]
    civ_cards: tuple[str, ...]
    fixed: tuple[str, ...]  # the calamities that cannot be traded

    @classmethod
    def of(cls, state: GameState) -> Cards:
        rules = ruleset_of(state)
        commodities = tuple(sorted({c.name for s in rules.stacks for c in s.commodities}))
        fixed = tuple(sorted(n for n, c in rules.calamities.items() if not c.tradable))
        return cls(commodities, tuple(sorted(rules.calamities)), tuple(sorted(rules.civ_cards)), fixed)

    def other(self, card: str, rng: random.Random) -> str:
        """Another card of the same kind: a commodity, a tradable calamity, a calamity that cannot be traded.

        The kind stays, so whether a hand can trade (§28.3: three tradable
        cards) stays too: the players asked to trade, and when trading ends,
        are seen by all at the table.
        """
        if card in self.fixed:
            pool: tuple[str, ...] = self.fixed
        elif card in self.calamities:
            pool = tuple(c for c in self.calamities if c not in self.fixed)
        else:
            pool = self.commodities
        return rng.choice([c for c in pool if c != card] or [card])

    def others(self, cards: Iterable[str], rng: random.Random, grow: int = 0) -> list[str]:
        """Each card changed into another of its kind, and ``grow`` more commodities (a different count)."""
        out = [self.other(c, rng) for c in cards]
        return out + [rng.choice(self.commodities) for _ in range(grow)]

    def other_pay(self, pay: Mapping[str, int], rng: random.Random) -> dict[str, int]:
        """Cards paid, as name -> count: the same number of cards, other names."""
        out: dict[str, int] = {}
        for card, count in pay.items():
            other = self.other(card, rng) if card in self.commodities or card in self.calamities else card
            out[other] = out.get(other, 0) + count
        return out


# -- secrets of events ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Secret:
    """One secret part of an event: who may read it, and the payload with it changed.

    ``hidden``: a viewer who is no reader must not be told of the event at
    all (an offer is a private negotiation). ``moderator_only``: not even an
    auditor reads it (the seed revealed to the moderator on request).
    """

    what: str
    readers: frozenset[str]
    change: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    hidden: bool = False
    moderator_only: bool = False

    def may_read(self, viewer: str) -> bool:
        if self.moderator_only:
            return viewer == "moderator"
        return viewer in OVERSEERS or viewer in self.readers


def _with(payload: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**payload, **changes}


def _nation_of_player(state: GameState, player_id: Any) -> str | None:
    return next((p.nation for p in state.players if p.id == player_id), None)


def press_readers(state: GameState, payload: Mapping[str, Any]) -> frozenset[str]:
    """Who reads a press message: its sender and the nations named (every player and the observers for ALL)."""
    named = {str(n).lower() for n in payload.get("to", ())}
    out = {seat(n) for n in state.nations if n.lower() in named}
    if "all" in named:
        out |= {seat(n) for n in state.nations} | {"observer"}
    sender = _nation_of_player(state, payload.get("player"))
    return frozenset(out | readers_of(sender))


def event_secrets(state: GameState, kind: str, d: dict[str, Any], cards: Cards, rng: random.Random,
                  viewer: str = "observer") -> list[Secret]:
    """The secret parts of one event (``state`` is the game just before it); an empty list: it is public.

    A changed secret is one ``viewer`` may not know either (another trader, never himself).
    """
    nation = d.get("nation")
    if kind in ("TradeCardsDrawn", "TradeCardsBought"):  # §27.3-27.4: which cards; how many follows from cities/treasury
        return [Secret(f"cards {nation} drew", readers_of(nation), lambda p: _with(p, cards=cards.others(p["cards"], rng)))]
    if kind == "OfferMade":  # a negotiation: its maker and addressees; the hidden cards the maker's alone (§28.3)
        parties = readers_of(nation, *d["to"])
        return [
            Secret(f"offer {d['offer']}", parties, lambda p: _with(
                p, give_named=cards.others(p["give_named"], rng), ask_named=cards.others(p["ask_named"], rng),
                give_hidden=cards.others(p["give_hidden"], rng, grow=1), ask_count=p["ask_count"] + 1), hidden=True),
            Secret(f"hidden cards of offer {d['offer']}", readers_of(nation),
                   lambda p: _with(p, give_hidden=cards.others(p["give_hidden"], rng))),
        ]
    if kind in ("OfferWithdrawn", "OffersLapsed"):
        parties = readers_of(nation, *d.get("to", ()), *d.get("parties", ()))
        return [Secret(f"{kind} {d.get('offer', d.get('offers'))}", parties, None, hidden=True)]
    if kind == "OfferAccepted":
        return [Secret(f"acceptance of offer {d['offer']}", readers_of(nation, d["offerer"]),
                       lambda p: _with(p, giving=cards.others(p["giving"], rng, grow=1)), hidden=True)]
    if kind == "TradeExecuted":  # that two players traded is seen at the table; what changed hands is theirs
        return [Secret(f"deal of offer {d['offer']}", readers_of(d["offerer"], d["acceptor"]), lambda p: _with(
            p, offerer_gives=cards.others(p["offerer_gives"], rng, grow=1),
            acceptor_gives=cards.others(p["acceptor_gives"], rng, grow=2), calamities=[]))]
    if kind == "SpoilsTaken" and d.get("card"):  # Q-S20
        return [Secret(f"card taken in {d['area']}", readers_of(d["attacker"], d["defender"]),
                       lambda p: _with(p, card=cards.other(p["card"], rng)))]
    if kind == "CardsDiscarded":  # the count is public (D-8: the count kept is), which cards is not
        return [Secret(f"cards {nation} discarded", readers_of(nation), lambda p: _with(p, cards=cards.other_pay(p["cards"], rng)))]
    if kind == "AdvancesOrdered":  # secret until revealed together
        return [Secret(f"{nation}'s civilization-card order", readers_of(nation), lambda p: _with(
            p, cards=[rng.choice(cards.civ_cards)], pay=cards.other_pay(p["pay"], rng), treasury=p["treasury"] + 1))]
    if kind == "AdvancesBought":  # the cards bought are public; the commodities paid, the payer's
        return [Secret(f"cards {nation} paid", readers_of(nation), lambda p: _with(p, pay=cards.other_pay(p["pay"], rng)))]
    if kind in ("CitiesOrdered", "TownsOrdered"):  # secret until revealed together (seed 001: 5A)
        key = "builds" if kind == "CitiesOrdered" else "towns"
        return [Secret(f"{nation}'s city orders", readers_of(nation), lambda p: _with(p, **{key: []}))]
    if kind == "CalamitiesRevealed":  # who traded a calamity is the trader's and the victim's (§28.3)
        return [Secret(f"trader of {c['calamity']} to {c['victim']}", readers_of(c["giver"], c["victim"]),
                       _other_giver(state, i, rng, viewer)) for i, c in enumerate(d["calamities"]) if c["giver"]]
    if kind in ("WaterSetAside", "VolunteeringSet"):
        return [Secret(f"{kind} of {nation}", readers_of(nation), lambda p: _with(p, cards=cards.other_pay(p.get("cards", {}), rng)))]
    if kind == "PressSent":
        return [Secret("press", press_readers(state, d), lambda p: _with(p, text=p["text"] + " (changed)"), hidden=True)]
    if kind in ("OrdersQueued", "QueuedOrdersTaken", "TimezoneSet"):  # a player's own setting or kept orders
        own = readers_of(_nation_of_player(state, d["player"]))
        return [Secret(f"{kind} of player {d['player']}", own, lambda p: _with(p, lines=["HALT"], zone="UTC"), hidden=True)]
    if kind in ("MailBounced", "ObserverAsked"):  # the moderator's business
        return [Secret(kind, frozenset(), lambda p: _with(p, reason="changed", name="Someone Else"), hidden=True)]
    if kind in ("StacksSetUp", "CardsRestacked", "MoneyPilesSetUp", "PilesReshuffled"):  # the order foretells draws
        return [Secret("order of the stacks", frozenset(), lambda p: _with(p, stacks={k: list(reversed(v)) for k, v in p["stacks"].items()}))]
    if kind == "SeedRevealed" and d.get("to") != "everyone":
        return [Secret("the seed", frozenset(), lambda p: _with(p, seed="not-the-seed"), moderator_only=True)]
    return []


def _other_giver(state: GameState, index: int, rng: random.Random, viewer: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def change(p: dict[str, Any]) -> dict[str, Any]:
        entries = [dict(c) for c in p["calamities"]]
        c = entries[index]
        choices = [n for n in state.nations if n not in (c["victim"], c["giver"]) and seat(n) != viewer]
        c["giver"] = rng.choice(choices) if choices else None
        return _with(p, calamities=entries)
    return change


# -- secrets of the state --------------------------------------------------------------------------------------


def perturbed_state(state: GameState, viewer: str, cards: Cards, rng: random.Random, *, sizes: bool) -> GameState:
    """``state`` with every secret ``viewer`` may not know changed: what he is shown of it must not change.

    Other hands get other cards of the same kinds (`Cards.other`); with
    ``sizes`` (D-8 `1991`) a hand that can trade also grows by one commodity,
    except where a hand's size decides who is asked (an empty hand is not
    asked to trade, and the trade ends when fewer than two can: both are seen
    at the table). Traders of calamities the viewer was not party to change,
    except the one being resolved now if its trader acts in the open. The
    stacks are reversed.
    """
    if viewer in OVERSEERS:
        return state
    for name, n in state.nations.items():
        if seat(name) == viewer:
            continue
        tradable = sum(1 for c in n.hand if c not in cards.fixed)
        grow = sizes and tradable >= 3 and state.phase not in HAND_DECIDES_WHO_IS_ASKED
        hand = tuple(cards.others(n.hand, rng, grow=1 if grow else 0))
        state = state.with_nation(replace(n, hand=hand))
    others = [n for n in state.nations if seat(n) != viewer]

    def new_giver(victim: str, giver: str | None) -> str | None:
        if not giver or viewer in readers_of(victim, giver):
            return giver
        return rng.choice([n for n in others if n not in (victim, giver)] or [giver])

    calamities = tuple(
        (name, victim, giver if i == 0 and state.phase == "calamity-resolution" and name in TRADER_ACTS_IN_THE_OPEN
         else new_giver(victim, giver))
        for i, (name, victim, giver) in enumerate(state.calamities)
    )
    givers = tuple((receiver, card, new_giver(receiver, given_by)) for receiver, card, given_by in state.calamity_givers)
    stacks = FrozenMap({k: tuple(reversed(v)) for k, v in state.stacks.items()})
    return replace(state, calamities=calamities, calamity_givers=givers, stacks=stacks)


# -- what a viewer may know at a version -----------------------------------------------------------------------


@dataclass(frozen=True)
class CalamityTrade:
    """A traded calamity that struck: its trader, the victim, and when it was revealed and began to be resolved."""

    calamity: str
    victim: str
    trader: str
    revealed: int
    resolved_from: int | None  # the version its resolution began at (None: it never was, e.g. returned by the limit)

    def may_name_trader(self, viewer: str, version: int) -> bool:
        if viewer in OVERSEERS or viewer in readers_of(self.trader, self.victim):
            return True
        acts = self.calamity in TRADER_ACTS_IN_THE_OPEN and self.resolved_from is not None
        return acts and version >= self.resolved_from


@dataclass
class Knowledge:
    """Facts a viewer may or may not know, read from the log (version, type, payload) in order."""

    nations: list[str] = field(default_factory=list)
    hand_size_rule: str = "seed"
    calamity_trades: list[CalamityTrade] = field(default_factory=list)
    #: Every hand-limit count made public (12b), by the version it became public at.
    kept: list[tuple[int, dict[str, int]]] = field(default_factory=list)
    seed_public_from: int | None = None
    press: list[tuple[int, str, frozenset[str]]] = field(default_factory=list)

    @classmethod
    def of(cls, log: list[tuple[int, str, dict[str, Any]]], states: Callable[[int], GameState]) -> Knowledge:
        """The model of one game: ``log`` is every event; ``states(v)`` the game just before version ``v``."""
        k = cls()
        given: dict[tuple[str, str], str] = {}  # (receiver, calamity) -> who last traded it to him this turn
        for version, kind, d in log:
            if kind == "GameCreated":
                k.hand_size_rule = dict(d.get("options") or {}).get("public-hand-size", "seed")
            elif kind == "NationChosen":
                k.nations.append(d["nation"])
            elif kind == "PhaseBegan" and d.get("phase") == "tax-collection":
                given.clear()
            elif kind == "TradeExecuted":  # the log of deals, read independently of the engine's own record
                calamities = set(Cards.of(states(version)).calamities)
                for giver, receiver, gave in ((d["offerer"], d["acceptor"], d["offerer_gives"]),
                                              (d["acceptor"], d["offerer"], d["acceptor_gives"])):
                    for card in gave:
                        if card in calamities:
                            given[(receiver, card)] = giver
            elif kind == "CalamitiesRevealed":
                for c in d["calamities"]:
                    trader = given.get((c["victim"], c["calamity"]))
                    assert trader == c["giver"], f"the log's trader of {c} disagrees with the deals: {trader}"
                    if trader:
                        k.calamity_trades.append(CalamityTrade(c["calamity"], c["victim"], trader, version, None))
            elif kind == "CalamityStruck" or (kind.startswith("Calamity") and "calamity" in d and "victim" in d):
                k._resolving(version, d["calamity"], d["victim"])
            elif kind == "HandsLimited":
                k.kept.append((version, dict(d["kept"])))
            elif kind == "SeedRevealed" and d.get("to") == "everyone" and k.seed_public_from is None:
                k.seed_public_from = version
            elif kind == "PressSent":
                k.press.append((version, d["text"], press_readers(states(version), d)))
        return k

    def _resolving(self, version: int, calamity: str, victim: str) -> None:
        for i, t in enumerate(self.calamity_trades):
            if t.calamity == calamity and t.victim == victim and t.resolved_from is None and t.revealed < version:
                self.calamity_trades[i] = replace(t, resolved_from=version)

    def public_hand_size(self, nation: str, version: int) -> int | None:
        """Under D-8 `1991`, what anyone may know of another's hand size: the count kept at the latest 12b (None before)."""
        counts = [kept for v, kept in self.kept if v <= version]
        return counts[-1].get(nation) if counts else None

    def seed_may_show(self, viewer: str, version: int) -> bool:
        return self.seed_public_from is not None and version >= self.seed_public_from

    def not_for(self, viewer: str, version: int, seed: str) -> list[tuple[str, str]]:
        """Texts ``viewer`` must not read at ``version``, as (what, text): the secret seed, press sent to others."""
        out = [] if self.seed_may_show(viewer, version) else [("the secret seed", seed)]
        return out + [("press not sent to him", text) for sent, text, readers in self.press
                      if sent <= version and viewer not in readers and viewer not in OVERSEERS]


# -- reading texts -------------------------------------------------------------------------------------------------

_SENTENCE = re.compile(r"[^.;\n]+")
_TRADE_WORD = re.compile(r"\btrad(?:e|ed|er|es|ing)\b|\bgave\b|\bgiver\b", re.IGNORECASE)
_STRIKES = re.compile(r"\bstrikes (\w+)")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def names_trader(text: str, trade: CalamityTrade) -> str | None:
    """The first sentence of ``text`` that ties the calamity to its trader ("traded by", "who traded you"), or None."""
    for sentence in _SENTENCE.findall(text):
        struck = _STRIKES.search(sentence)
        if struck and struck.group(1) != trade.victim:  # the same card traded by the same nation to another victim
            continue
        if trade.calamity in sentence and re.search(rf"\b{re.escape(trade.trader)}\b", sentence) and _TRADE_WORD.search(sentence):
            return sentence.strip()
    return None


def text_of(message: EmailMessage) -> str:
    """Everything a reader sees of a letter: its headers of persons and every text part."""
    heads = "\n".join(f"{h}: {message[h]}" for h in ("From", "To", "Reply-To", "Subject") if message[h])
    parts = [p.get_content() for p in message.walk() if p.get_content_type() in ("text/plain", "text/html")]
    return heads + "\n" + "\n".join(parts)
