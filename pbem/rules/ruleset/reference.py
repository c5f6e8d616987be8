"""Plain-text reference pages about the ruleset, for players and moderators.

Why: players ask "what does Astronomy do?" or "what borders Sinai?" by email
and read the answer on a phone, so the text is plain, fits about 72 columns,
and forgives spelling.  :func:`match_name` is the forgiving matcher; the order
parser reuses it for area, nation and card names.

Pure: reads a :class:`~pbem.rules.ruleset.Ruleset`, returns strings.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import re
import textwrap
from typing import Callable, Iterable, Mapping

from pbem.rules.ruleset.model import (
    Area,
    Calamity,
    CivCard,
    Effect,
    Ruleset,
    TradeStack,
    Water,
)
from pbem.rules.ruleset.options import option_docs

__all__ = ["TOPICS", "describe", "describe_effect", "match_name"]

WIDTH = 72


@functools.lru_cache(maxsize=4096)
def _norm(text: str) -> str:
    """Case-folded letters and digits, '&' read as 'and': 'Drama & Poetry' ->
    'dramaandpoetry'.

    Remembered: every order names an area or a card, and each match
    normalises every candidate name (a hundred areas) again.
    """
    return re.sub(r"[^0-9a-z]", "", text.casefold().replace("&", "and"))


@functools.lru_cache(maxsize=64)
def _by_norm(names: tuple[str, ...], aliases: tuple[tuple[str, str], ...]) -> dict[str, list[str]]:
    """The candidates (and aliases) by their normalised spelling, in the order given.

    Made once per list of candidates: an order's every area name is matched
    against the same hundred areas. The caller only reads it.
    """
    by_norm: dict[str, list[str]] = {}
    for name in names:
        by_norm.setdefault(_norm(name), []).append(name)
    known = set(names)
    for alias, target in aliases:
        if target in known:
            by_norm.setdefault(_norm(alias), []).append(target)
    return by_norm


@functools.lru_cache(maxsize=64)
def _sorted_keys(names: tuple[str, ...], aliases: tuple[tuple[str, str], ...]) -> list[str]:
    """`_by_norm`'s spellings in order, so those a typed prefix starts are found by bisection, not by trying
    every name (a word that names no area was compared with all hundred of them)."""
    return sorted(_by_norm(names, aliases))


def _starting_with(keys: list[str], prefix: str) -> list[str]:
    """The spellings in sorted ``keys`` that start with ``prefix``: one run from where ``prefix`` would go."""
    out = []
    for at in range(bisect.bisect_left(keys, prefix), len(keys)):
        if not keys[at].startswith(prefix):
            break
        out.append(keys[at])
    return out


def match_name(text: str, candidates: Iterable[str], *,
               aliases: Mapping[str, str] | None = None, kind: str = "name", explain: bool = True) -> str:
    """The one candidate ``text`` means, matched forgivingly.

    Case, spaces and punctuation are ignored; a unique prefix is accepted;
    ``aliases`` (other spelling -> candidate) are tried too.  Otherwise a
    LookupError names the nearest candidates, so a reply can say "did you
    mean ...".  Typos are never silently corrected: orders must be meant.
    Without ``explain`` an unknown name is refused without looking for the
    nearest (a caller trying which words form a name drops the refusal).
    """
    names, spellings = tuple(dict.fromkeys(candidates)), tuple((aliases or {}).items())
    by_norm = _by_norm(names, spellings)
    key = _norm(text)
    if not key:
        raise LookupError(f"no {kind} given")
    exact = sorted(set(by_norm.get(key, ())))
    if len(exact) == 1:
        return exact[0]
    prefixed = sorted({n for k in _starting_with(_sorted_keys(names, spellings), key) for n in by_norm[k]})
    if len(prefixed) == 1:
        return prefixed[0]
    if len(prefixed) > 1:
        shown = ", ".join(prefixed[:8]) + (", ..." if len(prefixed) > 8 else "")
        raise LookupError(f"{text!r} could be more than one {kind}: {shown}")
    if not explain:
        raise LookupError(f"unknown {kind} {text!r}")
    close = difflib.get_close_matches(key, list(by_norm), n=4, cutoff=0.6)
    suggestions = list(dict.fromkeys(n for k in close for n in by_norm[k]))
    if suggestions:
        raise LookupError(f"unknown {kind} {text!r}; did you mean: "
                          f"{', '.join(suggestions)}?")
    raise LookupError(f"unknown {kind} {text!r}")


# --------------------------------------------------------------------------
# Small text helpers


def _table(header: tuple[str, ...], rows: Iterable[tuple[object, ...]]) -> str:
    """Aligned columns; the last column wraps so lines stay within WIDTH."""
    rows = [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    indent = sum(w + 2 for w in widths[:-1])
    widths[-1] = min(widths[-1], max(WIDTH - indent, 12))

    def fmt(cells: tuple[str, ...]) -> list[str]:
        last = textwrap.wrap(cells[-1], widths[-1]) or [""]
        head = "  ".join(c.ljust(w) for c, w in zip(cells[:-1], widths))
        first = (head + "  " + last[0]) if cells[:-1] else last[0]
        return [first.rstrip()] + [" " * indent + more for more in last[1:]]

    lines = fmt(header) + fmt(tuple("-" * w for w in widths))
    for r in rows:
        lines += fmt(r)
    return "\n".join(lines)


def _para(text: str) -> str:
    return textwrap.fill(text, width=WIDTH)


def _wrap(label: str, text: str) -> str:
    return textwrap.fill(text or "-", width=WIDTH, initial_indent=f"{label}: ",
                         subsequent_indent="  ")


def _names(items: Iterable[str]) -> str:
    items = sorted(items)
    return ", ".join(items) if items else "none"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


# --------------------------------------------------------------------------
# Effects in words


def describe_effect(effect: Effect) -> str:
    """One effect in plain words (the data stays the authority)."""
    p = effect.params
    role = {"primary": "as primary victim", "secondary": "as secondary victim",
            "any": "as any victim"}.get(p.get("role", ""), "")
    quantity = str(p.get("quantity", "")).replace("_", " ")
    per = f" per {p['per']} card held" if "per" in p else ""
    part = f" ({p['part']})" if "part" in p else ""
    words: dict[str, Callable[[], str]] = {
        "ship-range": lambda: f"ships move up to {p['value']} water areas",
        "open-sea-passage": lambda: "ships may pass through open sea (not end there)",
        "tax-rate-choice": lambda: "tax rate may be " + "/".join(map(str, p["values"]))
                                   + " per city",
        "tax-revolt-immunity": lambda: "cities never revolt over taxes",
        "conflict-removes-last": lambda: "removes tokens after all non-holders in conflict",
        "population-limit-bonus": lambda: f"population limit +{p['value']} ({p['where']})",
        "city-reduction-bonus": lambda: f"a reduced city gives {p['value']} more token(s)",
        "land-move-range": lambda: f"tokens may move {p['value']} land areas "
                                   f"(pass-through: {p['pass_through']})",
        "set-value-bonus": lambda: f"once a turn a set of {', '.join(p['commodities'])} "
                                   f"counts {p['cards']} card larger",
        "city-attack": lambda: f"as {p['role']}: city attack needs {p['threshold']} "
                               f"tokens, city becomes {p['replacement_tokens']}",
        "city-build-from-treasury": lambda: f"up to {p['max_percent']}% of one city's "
                                            "tokens a turn from treasury",
        "acts-last": lambda: "acts after non-holders in " + ", ".join(p["steps"]),
        "conversion": lambda: f"converts one {p['reach']} area a turn "
                              f"(not against {', '.join(p['blocked_by'])})",
        "conversion-immunity": lambda: "immune to conversion",
        "calamity-modifier": lambda: f"{p.get('calamity')}: {quantity} "
                                     f"{p['delta']:+d}{per} {role}",
        "calamity-override": lambda: f"{p.get('calamity')}: {quantity} becomes "
                                     f"{p['value']} {role} (best card only)",
        "calamity-cap": lambda: f"{p.get('calamity')}: {quantity} at most {p['value']} {role}",
        "calamity-immunity": lambda: f"{p.get('calamity')}{part}: immune {role}",
        "calamity-downgrade": lambda: f"{p.get('calamity')}{part}: {p['from']} becomes "
                                      f"{p['to']} {role}",
        "calamity-rule": lambda: f"{p.get('calamity')}: special rule {p['rule']}"
                                 + (f" ({p['value']})" if "value" in p else "") + f" {role}",
    }
    render = words.get(effect.kind)
    return (render() if render else effect.kind).strip()


# --------------------------------------------------------------------------
# Topics


def _areas_table(r: Ruleset) -> str:
    rows = []
    for a in r.areas.values():
        site = {"none": "-", "black": "city", "white": "city*"}[a.city_site]
        rows.append((a.name, a.population_limit, site, "F" if a.flood_plain else "",
                     "C" if a.coastal else "", a.start_nation or "",
                     a.panel))
    text = _table(("Area", "Pop", "Site", "Fl", "Co", "Start", "Panel"), rows)
    seas = ", ".join(f"{w.name}{' (open sea)' if w.open_sea else ''}"
                     for w in r.waters.values())
    key = ("Site: city = city site, city* = flood-plain (white) site. "
           "Fl = flood plain, Co = coastal.")
    return f"{text}\n\n{_para(key)}\n" + _wrap("Water areas", seas)


def _area_detail(r: Ruleset, name: str) -> str:
    if name in r.waters:
        return _water_detail(r, r.waters[name])
    a: Area = r.areas[name]
    site = {"none": "none (12 tokens to build)", "black": "yes (black, safe from Flood)",
            "white": "yes (white, on the flood plain)"}[a.city_site]
    by_water = r.water_links.get(name, frozenset())
    lines = [
        f"{a.name} ({'Western Extension' if a.board == 'western' else 'main board'}, "
        f"panel {a.panel}, {a.divider_side} of the divider)",
        f"Population limit: {a.population_limit}",
        f"City site: {site}",
        "Flood plain: " + (f"yes ({a.flood_plain_group})" if a.flood_plain else "no"),
        f"Coastal: {_yes(a.coastal)}",
    ]
    if a.volcano:
        lines.append(f"Volcano: {a.volcano}")
    if a.island:
        lines.append(f"Island: {a.island}")
    if a.start_nation:
        lines.append(f"Start area of: {a.start_nation}")
    lines.append(_wrap("Neighbours by land", _names(r.land_adjacency.get(name, ()))))
    lines.append(_wrap("Neighbours by water", _names(n for n in by_water if n in r.areas)))
    lines.append(_wrap("Water areas touched", _names(n for n in by_water if n in r.waters)))
    for field, votes in a.disputed.items():
        shown = ", ".join(f"{k}={v}" for k, v in votes.items())
        lines.append(_wrap(f"Disputed {field.replace('_', ' ')}", shown))
    return "\n".join(lines)


def _water_detail(r: Ruleset, w: Water) -> str:
    touches = r.water_links.get(w.name, frozenset())
    return "\n".join([
        f"{w.name} (all-water area, "
        f"{'Western Extension' if w.board == 'western' else 'main board'})",
        _wrap("Open sea (Astronomy needed)",
              f"{_yes(w.open_sea)} [VASSAL reading {_yes(w.open_sea_vassal)}, "
              f"literal 4.23 {_yes(w.open_sea_literal)}; option "
              f"open-sea={r.options.get('open-sea')}]"),
        _wrap("Coasts touched", _names(n for n in touches if n in r.areas)),
        _wrap("Seas touched", _names(n for n in touches if n in r.waters)),
        _wrap("Note", w.note),
    ])


def _cards_table(r: Ruleset) -> str:
    rows = [(c.name, c.cost, "+".join(c.groups), c.prerequisite or "")
            for c in r.civ_cards.values()]
    total = sum(c.cost for c in r.civ_cards.values())
    return (_table(("Card", "Cost", "Groups", "Needs"), rows)
            + f"\n\n{len(rows)} cards, total face value {total}.")


def _card_detail(r: Ruleset, name: str) -> str:
    c: CivCard = r.civ_cards[name]
    received = {o: r.credit(o, name) for o in r.civ_cards if r.credit(o, name)}
    lines = [
        f"{c.name}: cost {c.cost}, group(s) {', '.join(c.groups)}",
        f"Prerequisite: {c.prerequisite or 'none'}",
        _wrap("Summary", c.summary),
    ]
    for e in c.effects:
        lines.append(_wrap("Effect", describe_effect(e)))
    lines.append(_wrap("Credits given", ", ".join(
        f"{k} {v}" for k, v in sorted(c.credits.items())) or "none"))
    lines.append(_wrap("Credits received", ", ".join(
        f"{k} {v}" for k, v in sorted(received.items())) or "none"))
    lines.append(f"Largest possible credit toward it: {sum(received.values())}")
    return "\n".join(lines)


def _calamities_table(r: Ruleset) -> str:
    rows = []
    for name in r.calamity_order():
        c = r.calamities[name]
        rows.append((c.order, c.name, c.stack, _yes(c.tradable)))
    return _table(("#", "Calamity", "Stack", "Tradable"), rows) + \
        "\n\nResolved in this order: by stack, non-tradable first."


def _calamity_detail(r: Ruleset, name: str) -> str:
    c: Calamity = r.calamities[name]
    def nums(m: Mapping[str, int]) -> str:
        return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in m.items()) or "none"
    lines = [
        f"{c.name}: stack {c.stack}, {'tradable' if c.tradable else 'non-tradable'}, "
        f"resolved {c.order} of {len(r.calamities)}",
        _wrap("Summary", c.summary),
        _wrap("Primary victim", nums(c.primary)),
        _wrap("Secondary victims", nums(c.secondary)),
    ]
    if c.immune_nations:
        lines.append(_wrap("Never primary victim", ", ".join(c.immune_nations)))
    for label, cards in (("Reduced by", c.reduced_by), ("Aggravated by", c.aggravated_by)):
        parts = []
        for card in cards:
            effects = [describe_effect(e) for e in r.civ_cards[card].effects
                       if e.calamity == c.name]
            parts.append(f"{card} ({'; '.join(effects)})")
        lines.append(_wrap(label, "; ".join(parts) or "none"))
    return "\n".join(lines)


def _stacks_table(r: Ruleset) -> str:
    rows = []
    for s in r.stacks:
        goods = ", ".join(f"{c.name} x{c.copies}" for c in s.commodities)
        cals = ", ".join(x for x in (s.non_tradable_calamity, s.tradable_calamity) if x)
        rows.append((s.number, goods, s.card_count, cals or "-"))
    total = sum(s.card_count for s in r.stacks)
    return (_table(("Stk", "Commodities", "Cards", "Calamities"), rows)
            + "\n\n" + _para(
                f"{total} cards. Face value = stack number; a set of n equal cards"
                f" is worth n*n*value. Stack {r.purchase_stack} cards may be bought"
                f" for {r.gold_ivory_price} treasury each."))


def _stack_detail(r: Ruleset, stack: TradeStack) -> str:
    lines = [f"Stack {stack.number}: {stack.card_count} cards"]
    for c in stack.commodities:
        sets = ", ".join(str(c.set_value(n)) for n in range(1, c.copies + 1))
        lines.append(_wrap(f"{c.name} (value {c.value}, {c.copies} copies)",
                           f"set values {sets}"))
    lines.append(f"Non-tradable calamity: {stack.non_tradable_calamity or 'none'}")
    lines.append(f"Tradable calamity: {stack.tradable_calamity or 'none'}")
    if stack.number == r.purchase_stack:
        lines.append(f"May be bought for {r.gold_ivory_price} treasury per card.")
    return "\n".join(lines)


def _ast_table(r: Ruleset) -> str:
    epochs = [e.name for e in r.epochs]
    short = [("".join(w[0] for w in e.split())) for e in epochs]
    rows = []
    for n in r.nations.values():
        t = n.ast_track
        pts = " ".join(f"{s}:{p}" for s, p in t.late_iron_points.items())
        rows.append((n.ast_order, n.name, *(t.epoch_starts[e] for e in epochs), pts))
    req = "; ".join(
        f"{s} {e.name}: {e.cities} cities"
        + (f", {e.civ_cards} cards" if e.civ_cards else "")
        + (f", {e.groups} groups" if e.groups else "")
        for s, e in zip(short, r.epochs))
    finish = next(iter(r.nations.values())).ast_track if r.nations else None
    tail = ("\n\n" + _para(
        f"Columns give the first space of each epoch; finish = space "
        f"{finish.finish_space}, {finish.points_per_space} points a space.")
        if finish else "")
    return (_table(("#", "Nation", *short, "Late Iron points"), rows) + tail
            + "\n" + _wrap("To enter", req))


def _ast_detail(r: Ruleset, name: str) -> str:
    n = r.nations[name]
    t = n.ast_track
    rows = []
    for space in range(1, t.finish_space + 1):
        label = "finish" if space == t.finish_space else t.epoch_at(space)
        rows.append((space, label, t.late_iron_points.get(space, ""),
                     space * t.points_per_space))
    return "\n".join([f"{n.name}: A.S.T. order {n.ast_order}",
                      _wrap("Start areas", ", ".join(n.start_areas)), "",
                      _table(("Space", "Epoch", "Card points", "Score"), rows)])


def _stack_lookup(r: Ruleset, name: str) -> TradeStack:
    if name.strip().isdigit():
        number = int(name.strip())
        for s in r.stacks:
            if s.number == number:
                return s
        raise LookupError(f"no stack {number}; stacks are 1..{len(r.stacks)}")
    cards = [c.name for s in r.stacks for c in s.commodities]
    cards += [x for s in r.stacks for x in (s.non_tradable_calamity, s.tradable_calamity) if x]
    return r.stack_of(match_name(name, cards, kind="trade card"))


def _options_text(r: Ruleset) -> str:
    """Every game option: its values (the default first), what it decides, where the rules say so."""
    blocks = [_para("Game options, chosen when the game is created (--option KEY=VALUE); the default is listed first.")]
    for doc in option_docs():
        blocks.append(_wrap(doc.key, f"{doc.values}. {doc.meaning[0].upper()}{doc.meaning[1:]} ({doc.ruling})."))
    return "\n".join(blocks)


def _option_detail(r: Ruleset, key: str) -> str:
    doc = next(d for d in option_docs() if d.key == key)
    return "\n".join([f"{doc.key} ({doc.ruling})", _wrap("Values", doc.values + " (the first is the default)"),
                      _wrap("Decides", doc.meaning)])


def _money_table(r: Ruleset) -> str:
    if not r.money_piles or r.no_trading is None:
        return _para("This ruleset has no money piles: the No-Trading variant cannot be played with it.")
    rows = [(p.number, p.type, p.card_count, ", ".join(f"{v}x{n}" for v, n in p.values.items()))
            for p in r.money_piles]
    return (_table(("Pile", "Type", "Cards", "Values (value x copies)"), rows) + "\n\n" + _para(
        f"No-Trading only (seed 004): a player with N cities draws one card of piles 1..N; more of pile N (pile 1 "
        f"with no city) cost {r.no_trading.price} treasury each. Cards pay their face values added up; a player "
        f"keeps {r.no_trading.hand_limit} at most."))


TOPICS: Mapping[str, str] = {
    "areas": "areas", "area": "areas", "cards": "cards", "card": "cards",
    "calamities": "calamities", "calamity": "calamities", "stacks": "stacks",
    "stack": "stacks", "ast": "ast", "options": "options", "option": "options",
    "money": "money",
}


def describe(ruleset: Ruleset, topic: str, name: str | None = None) -> str:
    """Reference text for ``areas|cards|calamities|stacks|ast|options|money`` (singulars too).

    Without ``name``: a table of the whole topic.  With ``name``: one item,
    matched forgivingly (LookupError with suggestions when nothing fits).
    """
    r = ruleset
    key = TOPICS[match_name(topic, TOPICS, kind="topic")]
    if name is None:
        return {"areas": _areas_table, "cards": _cards_table,
                "calamities": _calamities_table, "stacks": _stacks_table,
                "ast": _ast_table, "options": _options_text, "money": _money_table}[key](r)
    if key == "options":
        return _option_detail(r, match_name(name, [d.key for d in option_docs()], kind="option"))
    if key == "money":
        return _money_table(r)
    if key == "areas":
        found = match_name(name, list(r.areas) + list(r.waters), aliases=r.aliases,
                           kind="area")
        return _area_detail(r, found)
    if key == "cards":
        return _card_detail(r, match_name(name, r.civ_cards, kind="card"))
    if key == "calamities":
        return _calamity_detail(r, match_name(name, r.calamities, kind="calamity"))
    if key == "stacks":
        return _stack_detail(r, _stack_lookup(r, name))
    return _ast_detail(r, match_name(name, r.nations, kind="nation"))
