"""Who may read an event whole: the rule behind partial exports (docs/audit.md, "Exporting a game").

The log holds secrets of three kinds. Some belong to one nation or a few:
trade cards drawn or bought, the cards a player pays with or discards, orders
given before they are revealed, a trade offer and the cards that change hands
in it, the card taken as spoils. Some belong to nobody at the table: the order
of the shuffled stacks and piles (which foretells every later draw), a bounce
or a stranger's request to watch, and the secret seed revealed to the
moderator alone. The rest happened in front of everyone.

An export is all or nothing per event: a viewer reads an event's payload only
if every part of it is his to read, because a payload with parts cut out
could no longer be hashed, and a reader who can check nothing gains nothing.
So an offer a nation receives, of which it is told only part, is withheld
from it whole. The table below is the single place that decides; the export
(`pbem.audit.transfer`) only applies it. A new event type that is not in the
table is read by the overseers alone until someone decides otherwise (a test
holds the table to the engine's list of event types).

Overseers read everything: the moderator always, an auditor once the game has
ended. During the game an auditor reads what an observer reads. The one
exception is the seed revealed to the moderator on request, which stays the
moderator's (`pbem.rules.ledger`), whoever else may read the log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pbem.rules.core.state import GameState

#: Everyone at the table and around it may read the event whole.
PUBLIC = "public"
#: Only the overseers (the moderator; an auditor once the game has ended).
OVERSEERS = "overseers"


@dataclass(frozen=True)
class Nations:
    """Private to the nations named in these payload fields (a name or a list of names).

    With ``when``, the event is private only while that field is set: spoils
    without a card taken hold nothing secret.
    """

    fields: tuple[str, ...]
    when: str | None = None


@dataclass(frozen=True)
class Seat:
    """Private to the player whose id is in ``field``: his own setting or the orders he keeps."""

    field: str = "player"


#: Readers of an event whose rule needs more than its payload's fields.
Special = Callable[[Mapping[str, Any], GameState], frozenset | None]
Rule = str | Nations | Seat | Special


def _press(payload: Mapping[str, Any], before: GameState) -> frozenset | None:
    """Press: its sender and the nations it names (every nation for ALL, and observers then too).

    Anonymous press names its sender in the payload, so only he and the
    overseers read it whole (`pbem.rules.table.press_readers` says who reads
    the text in the reports).
    """
    nations = {p.id: p.nation for p in before.players}
    sender = nations.get(payload.get("player"))
    readers = {f"player:{sender.lower()}"} if sender else set()
    if payload.get("blind"):  # a reply to anonymous press names the writer answered: the replier may not read that
        return frozenset()
    if payload.get("anonymous"):
        return frozenset(readers)
    if payload.get("reader") is not None:  # a reply to press: its writer and the one he answers
        answered = nations.get(payload["reader"])
        return frozenset(readers | ({f"player:{answered.lower()}"} if answered else set()))
    named = {str(n).lower() for n in payload.get("to", ())}
    for pid, nation in nations.items():
        if nation and pid != payload.get("player") and ("all" in named or nation.lower() in named):
            readers.add(f"player:{nation.lower()}")
    if "all" in named:
        readers.add("observer")
    return frozenset(readers)


def _observer_left(payload: Mapping[str, Any], before: GameState) -> frozenset | None:
    """A watcher leaving is public; a request to watch turned down is the moderator's business."""
    held = before.table.get(f"observer:{payload.get('observer')}")
    return frozenset() if held and held[1] == "asked" else None


def _calamities_revealed(payload: Mapping[str, Any], before: GameState) -> frozenset | None:
    """The calamities of phase 8 are public, but the payload names who traded each: with a traded one in it, only
    the parties of every such trade read it whole (the reports tell the rest without the traders)."""
    traded = [c for c in payload.get("calamities", ()) if c.get("giver")]
    if not traded:
        return None
    givers = {c["giver"] for c in traded} | {c["victim"] for c in traded}
    if len(traded) > 1:
        return frozenset()  # no one but the overseers is party to every trade in it
    return frozenset(f"player:{n.lower()}" for n in givers)


def _seed_revealed(payload: Mapping[str, Any], before: GameState) -> frozenset | None:
    """Public once revealed to everyone; revealed to the moderator, it is his (see `may_read`)."""
    return None if payload.get("to") == "everyone" else frozenset()


#: Each event type of the engine, and who may read its payload whole. Types not
#: listed are read by the overseers alone.
RULES: dict[str, Rule] = {
    # Setup and the turn.
    "GameCreated": PUBLIC, "PlaceCardsDealt": PUBLIC, "NationChosen": PUBLIC, "StartTokenPlaced": PUBLIC,
    "SetupCompleted": PUBLIC, "PhaseBegan": PUBLIC, "PhaseEnded": PUBLIC, "PhaseSkipped": PUBLIC,
    # Tax, expansion, census.
    "TaxCollected": PUBLIC, "TaxRateChosen": PUBLIC, "CitiesRevolted": PUBLIC, "RevoltChosen": PUBLIC,
    "RevoltingCitiesEliminated": PUBLIC, "PopulationExpanded": PUBLIC, "GrowthDistributed": PUBLIC,
    "CensusTaken": PUBLIC,
    # Ships and movement.
    "MovementOrderFixed": PUBLIC, "ShipBuilt": PUBLIC, "ShipKept": PUBLIC, "ShipScrapped": PUBLIC,
    "ShipOrdersDone": PUBLIC, "ShipConstructionEnded": PUBLIC, "UpkeepCollected": PUBLIC, "TokensMoved": PUBLIC,
    "TokensSailed": PUBLIC, "CityAttacked": PUBLIC, "MovesDone": PUBLIC,
    # Conflict: the card taken as spoils is known to the two nations only.
    "TokenConflictResolved": PUBLIC, "CityAttacksFound": PUBLIC, "CityOrderChosen": PUBLIC,
    "AttacksResolvedFirst": PUBLIC, "DeferralChosen": PUBLIC, "CityAttackFailed": PUBLIC,
    "CityAttackSucceeded": PUBLIC, "CityReplaced": PUBLIC, "CityRestored": PUBLIC, "TownLossesChosen": PUBLIC,
    "SpoilsChosen": PUBLIC, "SpoilsTaken": Nations(("attacker", "defender"), when="card"),
    "BarbariansRemoved": PUBLIC,
    # Cities and towns: orders are secret until revealed together.
    "CitiesOrdered": Nations(("nation",)), "TownsOrdered": Nations(("nation",)), "CityOrdersDone": PUBLIC,
    "CityOrdersRevealed": PUBLIC, "CitiesBuilt": PUBLIC, "TownsBuilt": PUBLIC, "SurplusRemoved": PUBLIC,
    "CityReduced": PUBLIC, "CityReductionChosen": PUBLIC, "CitySupportReduced": PUBLIC,
    "CitySupportReductionChosen": PUBLIC, "TownFlipped": PUBLIC, "TownFlipChosen": PUBLIC,
    # Trade cards: the stacks' order foretells every draw; what one draws or buys is his.
    "StacksSetUp": OVERSEERS, "MoneyPilesSetUp": OVERSEERS, "CardsRestacked": OVERSEERS,
    "PilesReshuffled": OVERSEERS, "TradeCardDrawBegan": PUBLIC,
    "TradeCardsDrawn": Nations(("nation",)), "TradeCardsBought": Nations(("nation",)),
    # Trade: an offer is its maker's (its addressees are told only part of it); the cards exchanged are the two
    # parties'.
    "OfferMade": Nations(("nation",)), "OfferAccepted": Nations(("nation",)),
    "OfferWithdrawn": Nations(("nation", "to")), "TradeExecuted": Nations(("offerer", "acceptor")),
    "OffersLapsed": Nations(("parties",)), "TradingFinished": PUBLIC,
    "UnableToTrade": PUBLIC,  # emitted only where hand sizes are public (D-8 seed)
    # Calamities: revealed in phase 8 and resolved in the open; the cards set aside against Famine are the holder's.
    "CalamitiesRevealed": _calamities_revealed, "CalamitiesLimited": PUBLIC, "CalamityCountRolled": PUBLIC,
    "CalamityDrawn": PUBLIC, "CalamityPileEmpty": PUBLIC, "CalamitiesBackInPile": PUBLIC,
    "VolunteeringSet": Nations(("nation",)), "WaterSetAside": Nations(("nation",)),
    "CalamityStruck": PUBLIC, "CalamityCitiesChosen": PUBLIC,
    "CalamityCitiesPreferred": PUBLIC, "CalamityPreferencesUnused": PUBLIC, "CalamityLossTaken": PUBLIC,
    "CalamityLossChosen": PUBLIC, "CalamityLossesShared": PUBLIC, "CalamityLossesGiven": PUBLIC,
    "CalamityNotPlayable": PUBLIC, "CalamityResolved": PUBLIC, "FloodStruck": PUBLIC, "FloodPlainChosen": PUBLIC,
    "SlavesRevolted": PUBLIC, "SlavesRecovered": PUBLIC, "TownReductionsDue": PUBLIC, "TownsReduced": PUBLIC,
    "TownFlipsChosen": PUBLIC, "CityBrokenIntoTowns": PUBLIC, "TownCityChosen": PUBLIC,
    "BarbariansAppear": PUBLIC, "BarbariansMove": PUBLIC, "BarbariansHalt": PUBLIC, "BarbariansAverted": PUBLIC,
    "BarbarianRouteChosen": PUBLIC, "CivilWarBegins": PUBLIC, "CivilWarAverted": PUBLIC, "CivilWarSplit": PUBLIC,
    "CivilWarUnitsChosen": PUBLIC, "CivilWarUnitsTaken": PUBLIC, "CivilWarFactionKept": PUBLIC,
    "CivilWarOneFactionLeft": PUBLIC, "CivilWarFought": PUBLIC,
    # Special abilities, civilization cards, the A.S.T.: what one pays with and discards is his.
    "AreaConverted": PUBLIC, "NothingToConvert": PUBLIC,
    "AdvancesOrdered": Nations(("nation",)), "AdvanceOrdersRevealed": PUBLIC,
    "AdvancesBought": Nations(("nation",)), "AdvancePurchasesDone": PUBLIC,
    "CardsDiscarded": Nations(("nation",)), "HandsLimited": PUBLIC,
    "AstAdvanced": PUBLIC, "AstHeld": PUBLIC, "AstMovedBack": PUBLIC, "AstMarkersMoved": PUBLIC,
    "GameEnded": PUBLIC,
    # The table: deadlines and the moderator's acts are public; a player's own settings and kept orders are his;
    # bounces and strangers' requests are the moderator's.
    "DeadlineSet": PUBLIC, "DeadlinePassed": PUBLIC, "Moderated": PUBLIC, "AbsenceNoted": PUBLIC,
    "PlayerReplaced": PUBLIC, "PlayerKicked": PUBLIC, "KickLifted": PUBLIC,
    "TimezoneSet": Seat(), "MailPreferenceSet": Seat(), "OrdersQueued": Seat(), "QueuedOrdersTaken": Seat(),
    "PressSent": _press, "MailBounced": OVERSEERS, "LinksRevoked": OVERSEERS,
    "ObserverAsked": OVERSEERS, "ObserverJoined": PUBLIC, "ObserverLeft": _observer_left,
    # The log's own events.
    "SeedRevealed": _seed_revealed, "RolledBack": PUBLIC,
}

#: Metadata keys anyone may read; any other key is a note of the service's own and keeps the metadata withheld.
PUBLIC_METADATA = ("actor", "source", "recorded_at", "engine_version")


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def readers(event_type: str, payload: Mapping[str, Any], before: GameState) -> frozenset | None:
    """The viewers besides the overseers who may read this event whole; None when everyone may.

    ``before`` is the game just before the event (it says which nation sits
    in which seat, and which observers only asked to watch).
    """
    rule = RULES.get(event_type, OVERSEERS)
    if rule == PUBLIC:
        return None
    if rule == OVERSEERS:
        return frozenset()
    if isinstance(rule, Nations):
        if rule.when is not None and not payload.get(rule.when):
            return None
        return frozenset(f"player:{n.lower()}" for f in rule.fields for n in _names(payload.get(f)))
    if isinstance(rule, Seat):
        nation = next((p.nation for p in before.players if p.id == payload.get(rule.field)), None)
        return frozenset({f"player:{nation.lower()}"} if nation else ())
    return rule(payload, before)


def overseer(viewer: str, finished: bool) -> bool:
    """Who reads every event whole: the moderator, and an auditor once the game has ended."""
    return viewer == "moderator" or (viewer == "auditor" and finished)


def may_read(
    viewer: str,
    event_type: str,
    payload: Mapping[str, Any],
    before: GameState,
    *,
    finished: bool,
    superseded: bool = False,
) -> bool:
    """Whether ``viewer`` (canonical: ``player:<nation>``, observer, moderator, auditor) reads this payload whole.

    ``finished`` is whether the game has ended now, at the end of the log;
    ``superseded`` whether a rollback set the event aside, which only the
    overseers read (`pbem.audit.history`).
    """
    if event_type == "SeedRevealed" and payload.get("to") != "everyone":
        return viewer == "moderator"
    if overseer(viewer, finished):
        return True
    if superseded:
        return False
    if viewer == "auditor":  # during the game an auditor reads what an observer reads
        viewer = "observer"
    allowed = readers(event_type, payload, before)
    return allowed is None or viewer in allowed


#: Metadata keys of an order's origin (`pbem.audit.explain.origin`): its sender reads them, with the public ones.
ORIGIN_METADATA = ("order", "kept")


def sender_of(actor: str, state: GameState) -> str | None:
    """The viewer (``player:<nation>``) who sent an input recorded with ``actor``; None for the moderator, the clock,
    or a player without a nation in ``state``."""
    if not (actor.startswith("player:") and actor[7:].isdigit()):
        return None
    nation = next((p.nation for p in state.players if p.id == int(actor[7:])), None)
    return f"player:{nation.lower()}" if nation else None


def own_metadata(viewer: str, metadata: Mapping[str, Any], state: GameState) -> bool:
    """Whether ``metadata`` is an order's of ``viewer`` himself, with nothing in it but the public keys and its origin.

    His export keeps it whole (the hash covers all of it): the line he wrote and the mail it came in are his own.
    ``state`` is a state in which he sits in his seat with his nation."""
    if any(key not in PUBLIC_METADATA + ORIGIN_METADATA for key in metadata):
        return False
    if any(isinstance(v, str) and "@" in v for v in metadata.values()):  # an old whole Message-ID: still withheld
        return False
    return sender_of(str(metadata.get("actor", "")), state) == viewer


def reads_origin(viewer: str, sender: str | None, finished: bool) -> bool:
    """Whether ``viewer`` reads the line an order was written as and the mail it came in (`pbem.audit.explain.origin`).

    The raw line may say more than the order the engine made of it (a trade
    offer's terms, a word to another player), so: the overseers and the player
    who sent it (``sender``, ``player:<nation>``), nobody else.
    """
    return overseer(viewer, finished) or (sender is not None and viewer == sender)


def metadata_public(metadata: Mapping[str, Any]) -> bool:
    """Whether anyone may read this metadata: only the public keys, and no mail Message-ID among them.

    Logs of engines before 0.6.0 give the source of an order sent by mail as
    ``mail:<Message-ID>``: an address at the sender's mail server, which is
    nobody else's business. Since then it is ``mail:`` and a digest of the
    Message-ID (`pbem.service.batch.mail_source`), which names no server.
    """
    if any(key not in PUBLIC_METADATA for key in metadata):
        return False
    return not any(isinstance(v, str) and "@" in v for v in metadata.values())
