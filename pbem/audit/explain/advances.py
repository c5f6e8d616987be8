"""Explaining a civilization-card purchase (phase 12a): cost, credits, the sets paid, treasury, nothing given back.

The civilization cards a nation owns and its treasury are public; the
commodity cards it paid with are not, so only the buyer (and the moderator or
an auditor) reads which sets were spent and what each was worth. Everyone
reads the cost, the credits and the treasury spent.
"""

from __future__ import annotations

from pbem.audit.explain.common import (
    Case,
    Explainer,
    Told,
    mismatch,
    nation_line,
    plural,
)
from pbem.rules.board.commodities import (
    MoneyKind,
    commodity_kinds,
    mining_commodities,
    sets_value,
)
from pbem.rules.ruleset.rulebook import ruleset_of


def _credit_lines(case: Case, nation: str, cards: list[str]) -> tuple[list[str], int, int, dict[str, int]]:
    """One line per card bought: its cost less the credit of each card owned before this turn (§31.54)."""
    rules = ruleset_of(case.before)
    owned = [c for c in case.before.nations[nation].civ_cards if c in rules.civ_cards]
    lines, cost, credit = [], 0, 0
    per_card: dict[str, int] = {}
    for card in cards:
        price = rules.civ_cards[card].cost
        givers = [(o, rules.credit(o, card)) for o in owned if rules.credit(o, card)]
        got = sum(n for _, n in givers)
        per_card[card] = got
        cost, credit = cost + price, credit + got
        if givers:
            sources = " + ".join(f"{o} {n}" for o, n in givers)
            lines.append(f"{card}: cost {price}, credits {sources} = {got}; {price} - {got} = {price - got}.")
        else:
            lines.append(f"{card}: cost {price}, no credit from the cards owned ({', '.join(owned) or 'none'}).")
    return lines, cost, credit, per_card


def _set_lines(case: Case, nation: str, pay: dict[str, int]) -> tuple[list[str], int]:
    """Each set paid with its value: n² × face value (§28.51), money cards their face values added (NT-13)."""
    kinds = commodity_kinds(case.before)
    lines = []
    for name, count in pay.items():
        kind = kinds[name]
        if isinstance(kind, MoneyKind):
            lines.append(f"  {name} x{count}: {count} x {kind.value} = {kind.set_value(count)}")
        else:
            n = min(count, kind.copies)
            capped = f" (a set counts at most {kind.copies})" if n < count else ""
            lines.append(f"  {name} x{count}: {n}² x {kind.value} = {kind.set_value(count)}{capped}")
    value, boosted = sets_value(case.before, pay, mining_commodities(case.before, nation))
    if boosted:
        plain = sum(kinds[n].set_value(c) for n, c in pay.items())
        lines.append(f"  Mining: the {boosted} set counts one card larger, +{value - plain} (§28.53).")
    return lines, value


def _payment(case: Case, moved: bool) -> Told:
    """The arithmetic of the purchase in ``case``; ``moved``: the treasury has been paid (the purchase, not the order)."""
    d = case.event.data
    nation = d["nation"]
    before = case.before.nations[nation]
    after = case.after.nations[nation]
    told_before = (nation_line(case.seen_before, nation),)
    if d.get("void") or not d["cards"]:
        why = f"{', '.join(d['void'])} could not be bought: {d['why']}." if d.get("void") else "No card was ordered."
        return Told(told_before, (why, "Nothing was spent."))
    lines, cost, credit, per_card = _credit_lines(case, nation, d["cards"])
    due = max(0, cost - credit)
    lines.append(f"To pay: cost {cost} - credits {credit} = {due} (§31, §31.54).")
    treasury = d["treasury"]
    if case.sees_hand(nation):
        sets, value = _set_lines(case, nation, dict(d["pay"]))
        lines.append(f"Trade cards paid, {plural(len(sets), 'set')}:" if sets else "Trade cards paid: none.")
        lines.extend(sets)
        lines.append(f"Cards worth {value}; treasury paid {treasury}: {value} + {treasury} = {value + treasury}.")
        lost = value + treasury - due
        lines.append(f"No change is given (§31.58): {value + treasury} - {due} = {lost} lost." if lost
                     else f"{value + treasury} pays the {due} exactly: nothing lost.")
        lines += mismatch("card value", value, d["value"]) + mismatch("value lost", lost, d["lost"])
    else:
        spent = sum(d["pay"].values())
        lines.append(f"Paid with {plural(spent, 'trade card')} (which ones is {nation}'s to know) "
                     f"and {treasury} from treasury; no change is given (§31.58).")
    if moved:
        lines.append(f"Treasury {before.treasury} - {treasury} = {after.treasury}; the {treasury} tokens go to stock "
                     f"({before.stock} + {treasury} = {after.stock}).")
    lines += mismatch("cost", cost, d["cost"]) + mismatch("credits", per_card, d["credits"]) + mismatch("due", due, d["due"])
    return Told(told_before, tuple(lines))


def purchase(case: Case) -> Told:
    return _payment(case, moved=True)


def order(case: Case) -> Told:
    """An order on file is secret until revealed: only its buyer reads its arithmetic before the purchase."""
    if not case.sees_hand(case.event.data["nation"]) or not case.event.data.get("cards"):
        return Told((nation_line(case.seen_before, case.event.data["nation"]),), ())
    told = _payment(case, moved=False)
    return Told(told.before, ("As ordered (paid when every order is in, in A.S.T. order):",) + told.how)


EXPLAINERS: dict[str, Explainer] = {"AdvancesBought": purchase, "AdvancesOrdered": order}
