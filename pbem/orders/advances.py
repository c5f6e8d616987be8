"""Orders of phase 12 (§31, seed 003: 12): ADVANCE (with PAY on the same line) and DISCARD.

``ADVANCE Pottery, Mysticism PAY Ochre 4, Hides 2, treasury 3`` buys two
cards and pays with 4 Ochre (a set: 4² × 1 = 16), 2 Hides and 3 treasury
tokens. ``ADVANCE Pottery`` alone lets the server choose the payment (least
waste). ``ADVANCE NONE`` buys nothing. The whole purchase is one line, so it
is checked as a whole. ``DISCARD Ochre 2, Hides`` gives up cards over the
hand limit. Counts may come before or after a name (``3 Salt``, ``Salt 3``);
a name alone is one card.

Under No-Trading a money card is named by its type and value, one card each:
``ADVANCE Pottery PAY Research 13, Water 7, Water 7``; ``Water 7 x2`` is the
same as naming it twice.
"""

from __future__ import annotations

import re

from pbem.rules.core.state import GameState
from pbem.rules.phases.advances.hand_limit import DiscardCards
from pbem.rules.phases.advances.purchase import BuyAdvances, order_line, pay_text
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

from .grammar import Actor, LineError, Parser, count, name, player_of

#: PAY with the blanks around it. It starts only where a run of blanks does (the look-behind), and takes
#: the run whole: "\\s*\\bpay" read a long run again from each of its blanks.
_PAY = re.compile(r"(?<!\s)\s*+\bpay\b\s*+", re.IGNORECASE)
_NONE = ("none", "nothing", "no", "0", "-")
_TREASURY = ("treasury", "treas", "tre", "t", "tokens", "token")


def _civ_cards(state: GameState, text: str, notes: list[str]) -> tuple[str, ...]:
    known = list(ruleset_of(state).civ_cards)
    parts = [p.strip() for p in re.split(r"[,;]", text) if p.strip()]  # "and" is part of a name (Drama and Poetry)
    out: list[str] = []
    for part in parts:
        try:
            out.append(name(part, known, "civilization card", notes))
        except LineError:
            if " " not in part:
                raise
            out.extend(name(w, known, "civilization card", notes) for w in part.split())
    return tuple(out)


def _money_card(state: GameState, words: list[str], part: str, notes: list[str]) -> tuple[str, int]:
    """'Water 7', 'Water 7 x2', '2 x Water 7' -> (Water 7, count)."""
    times = 1
    if len(words) > 2 and words[-1].lower().lstrip("x×").isdigit() and words[-1][0].lower() in "x×":
        times, words = int(words[-1].lower().lstrip("x×")), words[:-1]
    elif len(words) > 2 and words[0].isdigit() and words[1].lower() in ("x", "×"):
        times, words = int(words[0]), words[2:]
    if len(words) < 2 or not words[-1].isdigit():
        raise LineError(f"'{part}': name a money card by its type and value, e.g. Water 7")
    kind = name(" ".join(words[:-1]), [p.type for p in ruleset_of(state).money_piles], "money card type", notes)
    return f"{kind} {int(words[-1])}", count(str(times), "number of cards")


def _counted(state: GameState, text: str, notes: list[str], allow_treasury: bool) -> tuple[list[tuple[str, int]], int]:
    """'Ochre 4, Hides, treasury 3' -> ([(Ochre, 4), (Hides, 1)], 3); under No-Trading 'Water 7, Ore 3 x2'."""
    commodities = [c.name for s in ruleset_of(state).stacks for c in s.commodities]
    money = parts_of(state).deck.pays_face_values  # NT-13: money cards named with their values
    cards: list[tuple[str, int]] = []
    treasury = 0
    for part in (p.strip() for p in re.split(r"[,;]|\band\b", text, flags=re.IGNORECASE)):
        if not part:
            continue
        words = part.split()
        number = 1
        if len(words) > 1 and words[-1].isdigit():
            number, words = int(words[-1]), words[:-1]
        elif len(words) > 1 and words[0].isdigit():
            number, words = int(words[0]), words[1:]
        elif len(words) > 1 and words[-1].lower().lstrip("x×").isdigit():
            number, words = int(words[-1].lower().lstrip("x×")), words[:-1]
        label = " ".join(words)
        if allow_treasury and label.lower() in _TREASURY:
            treasury += number
            continue
        if money:
            cards.append(_money_card(state, part.split(), part, notes))
            continue
        if label.isdigit():
            raise LineError(f"'{part}': write the card's name and how many, e.g. Ochre 4")
        cards.append((name(label, commodities, "commodity card", notes), count(str(number), "number of cards")))
    return cards, treasury


def _advance(state: GameState, actor: Actor, rest: str, notes: list[str]) -> BuyAdvances:
    who = player_of(actor)
    pieces = _PAY.split(rest, maxsplit=1)
    wanted = pieces[0].strip()
    if not wanted:
        raise LineError("say which cards: ADVANCE Pottery, Mysticism PAY Ochre 4, treasury 3 (or ADVANCE NONE)")
    if wanted.lower() in _NONE:
        if len(pieces) > 1 and pieces[1].strip():
            raise LineError("ADVANCE NONE buys nothing, so there is nothing to pay")
        return BuyAdvances(who, ())
    cards = _civ_cards(state, wanted, notes)
    if len(pieces) == 1:
        return BuyAdvances(who, cards, auto=True)
    paid = pieces[1].strip()
    if not paid:
        raise LineError("say what you pay with after PAY (e.g. PAY Ochre 4, treasury 3), or leave PAY out")
    if paid.lower() in _NONE:
        return BuyAdvances(who, cards)
    pay, treasury = _counted(state, paid, notes, allow_treasury=True)
    return BuyAdvances(who, cards, tuple(pay), treasury)


def _pay(state: GameState, actor: Actor, rest: str, notes: list[str]) -> BuyAdvances:
    raise LineError("write PAY on the ADVANCE line, so the purchase is checked as a whole: ADVANCE Pottery PAY Ochre 4, treasury 3")


def _discard(state: GameState, actor: Actor, rest: str, notes: list[str]) -> DiscardCards:
    if not rest.strip():
        raise LineError("say which cards: DISCARD Ochre 2, Hides 1")
    cards, _ = _counted(state, rest, notes, allow_treasury=False)
    return DiscardCards(player_of(actor), tuple(cards))


def _counts(pairs: tuple[tuple[str, int], ...]) -> dict[str, int]:
    """(card, n) pairs added up by card: 'Water 7, Water 7' is two cards, not one (dict() would keep the last)."""
    out: dict[str, int] = {}
    for card, n in pairs:
        out[card] = out.get(card, 0) + n
    return out


def _write_buy(command: BuyAdvances) -> str:
    if command.auto:
        return "ADVANCE " + ", ".join(command.cards)
    return order_line(command.cards, _counts(command.pay), command.treasury)


VERBS: dict[str, tuple[Parser, str]] = {
    "ADVANCE": (_advance, "ADVANCE <card>, <card> [PAY <commodity> <n>, ..., treasury <n>] | ADVANCE NONE"),
    "PAY": (_pay, "PAY goes on the ADVANCE line"),
    "DISCARD": (_discard, "DISCARD <commodity> <n>, ... (No-Trading: DISCARD <type> <value>, ...)"),
}
CANONICAL = {
    BuyAdvances: _write_buy,
    DiscardCards: lambda c: "DISCARD " + pay_text(_counts(c.cards), 0),
}
