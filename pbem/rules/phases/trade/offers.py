"""Phase 7's offers on the table and how trading is told (§28.1-28.53): shared by the phase's rules and the bots.

An offer lives in ``state.filed`` as a plain tuple (`Offer.record`). Each
reader is told only what he may know: the addressees see the named cards
and how many more, the offerer and the overseers see all (`tell_offer`),
and a player whose offer is declined by a counter-offer hears of it
whether or not the counter-offer is made to him (`declined`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pbem.rules.core.events import Event
from pbem.rules.core.phase import defaulted
from pbem.rules.core.state import GameState


@dataclass(frozen=True)
class Offer:
    number: int
    offerer: str
    to: tuple[str, ...]
    give_named: tuple[str, ...]
    give_hidden: tuple[str, ...]
    ask_named: tuple[str, ...]
    ask_count: int

    @property
    def give(self) -> tuple[str, ...]:
        return self.give_named + self.give_hidden

    def record(self) -> tuple:
        return (self.number, self.offerer, self.to, self.give_named, self.give_hidden, self.ask_named, self.ask_count)


def open_offers(state: GameState) -> list[Offer]:
    return [Offer(r[0], r[1], tuple(r[2]), tuple(r[3]), tuple(r[4]), tuple(r[5]), r[6]) for r in state.filed.get("offers", ())]


def offer_numbered(state: GameState, number: int) -> Offer | None:
    return next((o for o in open_offers(state) if o.number == number), None)


def declined(state: GameState, nation: str) -> list[tuple[int, str, int]]:
    """(offer, by whom, his offer in its place) for each offer of ``nation`` declined by a counter-offer this
    phase: his prompt tells him, whether or not the counter-offer is made to him."""
    return [(n, by, instead) for n, offerer, by, instead in state.filed.get("declined", ()) if offerer == nation]


def write_cards(cards: tuple[str, ...] | list[str]) -> str:
    """Cards as a player writes them: identical cards grouped as ``Salt 2``."""
    counts = Counter(cards)
    return ", ".join(f"{c} {k}" if k > 1 else c for c, k in counts.items())


def write_give(named: tuple[str, ...], hidden: tuple[str, ...]) -> str:
    return write_cards(named) + (f" + {write_cards(hidden)}" if hidden else "")


def write_ask(named: tuple[str, ...], count: int) -> str:
    more = count - len(named)
    return write_cards(named) + (f" + {more} more" if more else "")


# -- narration ---------------------------------------------------------------------------------


def _sees_all(viewer: str) -> bool:
    return viewer in ("moderator", "auditor")


def _is(viewer: str, nation: str) -> bool:
    return viewer == f"player:{nation.lower()}"


def tell_offer(state: GameState, event: Event, viewer: str) -> str | None:
    d = event.data
    also = f" (replacing offer {d['replaces']})" if d.get("replaces") is not None else ""
    head = f"Offer {d['offer']}: {d['nation']} to {', '.join(d['to'])}{also}: "
    if _sees_all(viewer) or _is(viewer, d["nation"]):
        return head + f"gives {write_give(tuple(d['give_named']), tuple(d['give_hidden']))} FOR {write_ask(tuple(d['ask_named']), d['ask_count'])}."
    replaced = offer_numbered(state, d["replaces"]) if d.get("replaces") is not None else None
    turned_down = (f"{d['nation']} declined your offer {replaced.number}, making offer {d['offer']} in its place. "
                   if replaced is not None and replaced.offerer != d["nation"] and _is(viewer, replaced.offerer) else "")
    if any(_is(viewer, t) for t in d["to"]):
        hidden = len(d["give_hidden"])
        gives = write_cards(d["give_named"]) + (f" + {hidden} more" if hidden else "")
        return turned_down + head + (f"gives {gives} FOR {write_ask(tuple(d['ask_named']), d['ask_count'])}. "
                                     f"Reply ACCEPT {d['offer']} GIVING <your cards>.")
    return turned_down.strip() or None


def tell_withdrawn(state: GameState, event: Event, viewer: str) -> str | None:
    d = event.data
    if _sees_all(viewer) or any(_is(viewer, n) for n in (d["nation"], *d["to"])):
        return f"{d['nation']} withdrew offer {d['offer']}."
    return None


def tell_accepted(state: GameState, event: Event, viewer: str) -> str | None:
    d = event.data
    if _sees_all(viewer) or _is(viewer, d["nation"]):
        return f"{d['nation']} accepted offer {d['offer']}, giving {write_cards(d['giving'])}."
    if _is(viewer, d["offerer"]):
        return f"{d['nation']} accepted offer {d['offer']}."
    return None


def tell_executed(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    a, b = d["offerer"], d["acceptor"]
    if _sees_all(viewer):
        return f"Trade (offer {d['offer']}): {a} gave {write_cards(d['offerer_gives'])}; {b} gave {write_cards(d['acceptor_gives'])}."
    for me, other, gave, got in ((a, b, d["offerer_gives"], d["acceptor_gives"]), (b, a, d["acceptor_gives"], d["offerer_gives"])):
        if _is(viewer, me):
            return f"Trade with {other} done (offer {d['offer']}): you gave {write_cards(gave)}; you received {write_cards(got)}."
    return f"{a} and {b} traded."


def tell_finished(state: GameState, event: Event, viewer: str) -> str:
    by = f" ({defaulted(event.data)}: no FINISH was sent)" if event.data.get("by_default") else ""
    return f"{event.data['nation']} has finished trading{by}."


def tell_unable(state: GameState, event: Event, viewer: str) -> str:
    held = ", ".join(f"{n} {k} card{'s' if k != 1 else ''}" for n, k in zip(event.data["nations"], event.data["cards"]))
    return f"Fewer than {event.data['least']} trade cards, so finished trading at once, not asked (§28.3): {held}."


def tell_lapsed(state: GameState, event: Event, viewer: str) -> str | None:
    d = event.data
    if _sees_all(viewer) or any(_is(viewer, p) for p in d["parties"]):
        return f"Trading is over: open offers {', '.join(str(n) for n in d['offers'])} lapsed."
    return None
