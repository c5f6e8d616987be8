"""Orders of phase 7, trade (seed 003: 7; §28): OFFER, ACCEPT, WITHDRAW, FINISH.

    OFFER Crete: Salt 2 + Treachery FOR Grain, Iron + 2 more
    OFFER Crete, Egypt: Ochre, Hides + Wine FOR Salt 2 + 1 more REPLACES 3
    ACCEPT 3 GIVING Grain, Iron, Ochre, Hides
    WITHDRAW 3
    FINISH

On each side the cards before ``+`` are the NAMED ones (shown to the other
party); after ``+`` come your hidden cards (you say exactly which, nobody else
sees them until the trade) or, on the side you ask for, ``<n> more``. A count
may follow or precede a card: ``Salt 2`` = ``2 Salt`` = ``Salt, Salt``.
"""

from __future__ import annotations

import re

from pbem.rules.core.state import GameState
from pbem.rules.phases.trade import (
    AcceptOffer,
    FinishTrading,
    MakeOffer,
    WithdrawOffer,
    trade_cards,
    write_ask,
    write_cards,
    write_give,
)

from .grammar import Actor, LineError, Parser, count, name, player_of


#: "2 Salt", "2x Salt", "Salt 2", "Salt x2". Each run (digits, blanks) is read from where it starts and taken
#: whole (the look-behinds, the possessives): otherwise each character before a long run reads it again.
#: Anchored (\A): the lazy card is read from the item's start only, as fullmatch reads it.
_COUNTED_CARD = re.compile(r"\A(?:(?<!\d)(\d++)(?:\s*+x\s++|\s++)(.+)|(.+?)(?<!\s)\s*+x?\s*+(?<!\d)(\d++))", re.IGNORECASE)


def cards(state: GameState, text: str, notes: list[str]) -> tuple[str, ...]:
    """``Salt 2, Grain`` -> (Salt, Salt, Grain)."""
    out: list[str] = []
    for item in (p.strip() for p in re.split(r"[,;+]", text)):
        if not item:
            continue
        match = _COUNTED_CARD.fullmatch(item)
        number, card = (1, item)
        if match and match.group(1):
            number, card = int(match.group(1)), match.group(2)
        elif match and match.group(4):
            number, card = int(match.group(4)), match.group(3)
        if number < 1 or number > 20:
            raise LineError(f"'{item}': a count of cards is 1 to 20")
        out += [name(card.strip(), trade_cards(state), "trade card", notes)] * number
    return tuple(out)


# The words of an OFFER line, each with the blanks around it taken whole from where their run starts (the
# look-behinds, the possessives): "\\s+FOR" read a long run of blanks again from each of them.
_REPLACES = re.compile(r"(?<!\s)\s++REPLACES?\s++(\d++)\s*+$", re.IGNORECASE)
_TO = re.compile(r"^\s*+TO\s++", re.IGNORECASE)
_AND = re.compile(r"[,;]|(?<!\s)\s++AND\s++", re.IGNORECASE)
_FOR = re.compile(r"(?<!\s)\s++FOR\s++", re.IGNORECASE)


def _split(text: str) -> tuple[str, str | None]:
    head, plus, tail = text.partition("+")
    return head.strip(), (tail.strip() if plus else None)


def _offer(state: GameState, actor: Actor, rest: str, notes: list[str]) -> MakeOffer:
    replaces = None
    tail = _REPLACES.search(rest)
    if tail:
        replaces, rest = int(tail.group(1)), rest[: tail.start()]
    who, colon, body = rest.partition(":")
    if not colon:
        raise LineError("write OFFER <nation>: <your cards> FOR <cards you want>, e.g. OFFER Crete: Salt 2 + Treachery FOR Grain, Iron + 2 more")
    who = _TO.sub("", who)
    to = tuple(name(w.strip(), state.nations, "nation", notes) for w in _AND.split(who) if w.strip())
    parts = _FOR.split(body, maxsplit=1)
    if len(parts) != 2:
        raise LineError("say what you want: ... FOR <named cards> + <n> more")
    give_text, ask_text = parts
    give_named_text, give_hidden_text = _split(give_text)
    if give_hidden_text and re.fullmatch(r"\d+(\s+more)?", give_hidden_text, re.IGNORECASE):
        raise LineError("name every card you give: the ones after + stay hidden from the other player until the trade")
    give_named = cards(state, give_named_text, notes)
    give_hidden = cards(state, give_hidden_text, notes) if give_hidden_text else ()
    ask_named_text, ask_more_text = _split(ask_text)
    ask_named = cards(state, ask_named_text, notes)
    more = 0
    if ask_more_text:
        found = re.fullmatch(r"(\d+)(\s+(more|others?|any|cards?))?", ask_more_text, re.IGNORECASE)
        if not found:
            raise LineError("after + on the side you want, write how many more cards: + 2 more")
        more = count(found.group(1), "number of cards")
    return MakeOffer(player_of(actor), to, give_named, give_hidden, ask_named, len(ask_named) + more, replaces)


def _accept(state: GameState, actor: Actor, rest: str, notes: list[str]) -> AcceptOffer:
    found = re.fullmatch(r"(\d+)\s*(?:GIVING|GIVE|WITH|:)?\s*(.*)", rest.strip(), re.IGNORECASE | re.DOTALL)
    if not found or not found.group(2):
        raise LineError("write ACCEPT <offer number> GIVING <every card you give>, e.g. ACCEPT 3 GIVING Grain, Iron, Ochre")
    return AcceptOffer(player_of(actor), int(found.group(1)), cards(state, found.group(2), notes))


def _withdraw(state: GameState, actor: Actor, rest: str, notes: list[str]) -> WithdrawOffer:
    return WithdrawOffer(player_of(actor), count(rest.strip(), "offer number"))


def _finish(state: GameState, actor: Actor, rest: str, notes: list[str]) -> FinishTrading:
    return FinishTrading(player_of(actor))


VERBS: dict[str, tuple[Parser, str]] = {
    "OFFER": (_offer, "OFFER <nation>: <named cards> + <hidden cards> FOR <named cards> + <n> more [REPLACES <offer>]"),
    "ACCEPT": (_accept, "ACCEPT <offer> GIVING <cards>"),
    "WITHDRAW": (_withdraw, "WITHDRAW <offer>"),
    "FINISH": (_finish, "FINISH (done trading)"),
}
CANONICAL = {
    MakeOffer: lambda c: f"OFFER {', '.join(c.to)}: {write_give(c.give_named, c.give_hidden)} FOR {write_ask(c.ask_named, c.ask_count)}"
    + (f" REPLACES {c.replaces}" if c.replaces is not None else ""),
    AcceptOffer: lambda c: f"ACCEPT {c.offer} GIVING {write_cards(c.giving)}",
    WithdrawOffer: lambda c: f"WITHDRAW {c.offer}",
    FinishTrading: lambda c: "FINISH",
}
