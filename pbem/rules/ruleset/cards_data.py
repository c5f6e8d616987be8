"""Reading the cards: trade stacks, calamities, civilization cards with their effects and credits."""

from __future__ import annotations

import csv
from typing import Any, Iterable, Mapping

from pbem.rules.ruleset.effects import EFFECT_KINDS, Names
from pbem.rules.ruleset.model import (
    Calamity,
    CivCard,
    Commodity,
    Effect,
    MoneyPile,
    NoTrading,
    TradeStack,
    frozen,
)
from pbem.rules.ruleset.source import Source


def read_stacks(src: Source) -> tuple[list[TradeStack], int, int]:
    data = src.json()
    stacks: list[TradeStack] = []
    commodity_names: set[str] = set()
    for s in data.get("stacks", []):
        number = s.get("number")
        line = src.line_of("number", number)
        number = src.int_field(line, "stack number", number, 1)
        if number != len(stacks) + 1:
            raise src.error(line, f"stack {number} out of order (expected {len(stacks) + 1})")
        commodities = []
        for c in s.get("commodities", []):
            cline = src.line_of("name", c.get("name")) or line
            name = c.get("name")
            if not isinstance(name, str) or not name or name in commodity_names:
                raise src.error(cline, f"stack {number}: missing or duplicate commodity "
                                       f"{name!r}")
            commodity_names.add(name)
            commodities.append(Commodity(
                name=name, value=src.int_field(cline, f"{name}: value", c.get("value"), 1),
                copies=src.int_field(cline, f"{name}: copies", c.get("copies"), 1)))
        if not commodities:
            raise src.error(line, f"stack {number}: no commodities")
        stacks.append(TradeStack(number=number, commodities=tuple(commodities),
                                 non_tradable_calamity=s.get("non_tradable_calamity"),
                                 tradable_calamity=s.get("tradable_calamity")))
    if not stacks:
        raise src.error(None, "no stacks")
    purchase = data.get("purchase", {})
    pline = src.line_of("purchase", None) or src.line_of("price", purchase.get("price"))
    price = src.int_field(pline, "purchase price", purchase.get("price"), 1)
    stack = src.int_field(pline, "purchase stack", purchase.get("stack"), 1)
    if stack > len(stacks):
        raise src.error(pline, f"purchase stack {stack} does not exist")
    return stacks, price, stack


def read_calamities(src: Source, stacks: list[TradeStack]) -> dict[str, Calamity]:
    data = src.json()
    placed = {}
    for s in stacks:
        for name, tradable in ((s.non_tradable_calamity, False), (s.tradable_calamity, True)):
            if name:
                placed[name] = (s.number, tradable)
    raw: dict[str, tuple[int | None, dict[str, Any]]] = {}
    for c in data.get("calamities", []):
        name = c.get("name")
        line = src.line_of("name", name)
        if not isinstance(name, str) or not name or name in raw:
            raise src.error(line, f"missing or duplicate calamity {name!r}")
        if name not in placed:
            raise src.error(line, f"{name}: not in any stack of trade_stacks.json")
        stack = src.int_field(line, f"{name}: stack", c.get("stack"), 1)
        if (stack, bool(c.get("tradable"))) != placed[name]:
            raise src.error(line, f"{name}: stack/tradable disagree with trade_stacks.json "
                                  f"(stack {placed[name][0]}, "
                                  f"{'tradable' if placed[name][1] else 'non-tradable'})")
        for part in ("primary", "secondary"):
            for k, v in c.get(part, {}).items():
                src.int_field(line, f"{name}: {part} {k}", v)
        raw[name] = (line, c)
    missing = set(placed) - set(raw)
    if missing:
        raise src.error(None, f"calamity {sorted(missing)[0]!r} of trade_stacks.json has "
                              "no entry")
    ordered = sorted(raw, key=lambda n: (placed[n][0], placed[n][1]))
    out = {}
    for order, name in enumerate(ordered, 1):
        c = raw[name][1]
        out[name] = Calamity(
            name=name, stack=placed[name][0], tradable=placed[name][1], order=order,
            primary=frozen({k: int(v) for k, v in c.get("primary", {}).items()}),
            secondary=frozen({k: int(v) for k, v in c.get("secondary", {}).items()}),
            derived=frozen(c.get("derived", {})),
            favourable=tuple(c.get("favourable", ())),
            immune_nations=tuple(c.get("immune_nations", ())),
            reduced_by=tuple(c.get("reduced_by", ())),
            aggravated_by=tuple(c.get("aggravated_by", ())),
            summary=c.get("summary", ""))
    return out


def read_cards(src: Source, credit_src: Source, names: Names
                ) -> tuple[tuple[str, ...], dict[str, CivCard]]:
    data = src.json()
    groups = tuple(data.get("groups", ()))
    if not groups:
        raise src.error(None, "no card groups")
    entries: dict[str, tuple[int | None, dict[str, Any]]] = {}
    for c in data.get("cards", []):
        name = c.get("name")
        line = src.line_of("name", name)
        if not isinstance(name, str) or not name or name in entries:
            raise src.error(line, f"missing or duplicate card {name!r}")
        entries[name] = (line, c)
    all_names = {**names, "cards": frozenset(entries)}
    credits = read_credits(credit_src, frozenset(entries))
    cards: dict[str, CivCard] = {}
    for name, (line, c) in entries.items():
        cost = src.int_field(line, f"{name}: cost", c.get("cost"), 1)
        card_groups = tuple(c.get("groups", ()))
        if not card_groups or set(card_groups) - set(groups):
            raise src.error(line, f"{name}: groups {list(card_groups)} must be some of "
                                  f"{', '.join(groups)}")
        prereq = c.get("prerequisite")
        if prereq is not None and (prereq not in entries or prereq == name):
            raise src.error(line, f"{name}: unknown prerequisite {prereq!r}")
        effects = tuple(read_effect(src, line, name, e, all_names)
                        for e in c.get("effects", ()))
        cards[name] = CivCard(name=name, cost=cost, groups=card_groups, prerequisite=prereq,
                              credits=frozen(credits.get(name, {})), effects=effects,
                              summary=c.get("summary", ""))
    return groups, cards


def read_effect(src: Source, line: int | None, card: str, raw: Any,
                 names: Names) -> Effect:
    if not isinstance(raw, dict) or raw.get("kind") not in EFFECT_KINDS:
        kind = raw.get("kind") if isinstance(raw, dict) else raw
        raise src.error(line, f"{card}: unknown effect kind {kind!r}")
    kind = raw["kind"]
    spec = EFFECT_KINDS[kind]
    params = {k: v for k, v in raw.items() if k != "kind"}
    allowed = {p.rstrip("?") for p in spec}
    extra = set(params) - allowed
    if extra:
        raise src.error(line, f"{card}: effect {kind} has unknown parameter "
                              f"{sorted(extra)[0]!r}")
    for p, check in spec.items():
        key = p.rstrip("?")
        if key not in params:
            if p.endswith("?"):
                continue
            raise src.error(line, f"{card}: effect {kind} needs parameter {key!r}")
        problem = check(params[key], names)
        if problem:
            raise src.error(line, f"{card}: effect {kind}: {key} {problem}")
    return Effect(kind=kind, params=frozen(params))


def read_credits(src: Source, cards: frozenset[str]) -> dict[str, dict[str, int]]:
    reader_rows = src.rows(("held",))
    header = next(csv.reader(src.text.splitlines()))
    for col in header[1:]:
        if col.strip() not in cards:
            raise src.error(1, f"credit for an unknown card {col.strip()!r} (column)")
    out: dict[str, dict[str, int]] = {}
    for line, r in reader_rows:
        held = r["held"]
        if held not in cards:
            raise src.error(line, f"credit from an unknown card {held!r}")
        if held in out:
            raise src.error(line, f"duplicate row for {held!r}")
        row = {}
        for buying, raw in r.items():
            if buying == "held" or raw in ("", "-", "—"):
                continue
            value = src.int_field(line, f"credit {held} -> {buying}", raw, 1)
            if buying == held:
                raise src.error(line, f"{held} gives credit to itself")
            row[buying] = value
        out[held] = row
    return out


def cross_check_calamities(src: Source, calamities: Mapping[str, Calamity],
                            cards: Mapping[str, CivCard]) -> None:
    """reduced_by / aggravated_by must agree with the card effects."""
    for cal in calamities.values():
        line = src.line_of("name", cal.name)
        for card in cal.reduced_by + cal.aggravated_by:
            if card not in cards:
                raise src.error(line, f"{cal.name}: unknown card {card!r}")
        helps: set[str] = set()
        hurts: set[str] = set()
        quantities = set(cal.primary) | set(cal.secondary) | set(cal.derived)
        for card in cards.values():
            for e in card.effects:
                if e.calamity != cal.name:
                    continue
                q = e.get("quantity")
                if q is not None and q not in quantities:
                    raise src.error(line, f"{cal.name}: card {card.name} changes unknown "
                                          f"quantity {q!r}")
                worse = e.get("delta", 0) > 0
                if q in cal.favourable:
                    worse = not worse
                if e.kind == "calamity-modifier" and worse:
                    hurts.add(card.name)
                else:
                    helps.add(card.name)
        if helps != set(cal.reduced_by) or hurts != set(cal.aggravated_by):
            raise src.error(line, f"{cal.name}: reduced_by/aggravated_by disagree with the "
                                  f"card effects (effects say reduced by {sorted(helps)}, "
                                  f"aggravated by {sorted(hurts)})")
        for nation in cal.immune_nations:
            if not isinstance(nation, str):
                raise src.error(line, f"{cal.name}: bad immune nation {nation!r}")


def read_no_trading(src: Source, epochs: Iterable[str]) -> NoTrading:
    """The No-Trading variant's numbers: money piles (NT-3, NT-17), price (NT-5), hand limit (NT-13), calamity dice (NT-7)."""
    data = src.json()
    dice: dict[str, tuple[int, int]] = {}
    for d in data.get("calamity_dice", []):
        line = src.line_of("epoch", d.get("epoch"))
        if d.get("epoch") not in epochs or d["epoch"] in dice:
            raise src.error(line, f"calamity_dice: unknown or repeated epoch {d.get('epoch')!r}")
        add = d.get("add", 0)
        if not isinstance(add, int) or isinstance(add, bool):
            raise src.error(line, f"calamity_dice: add must be a whole number, not {add!r}")
        dice[d["epoch"]] = (src.int_field(line, "calamity_dice: sides", d.get("sides"), 0), add)
    missing = [e for e in epochs if e not in dice]
    if missing:
        raise src.error(None, f"calamity_dice: no entry for {', '.join(missing)}")
    piles: list[MoneyPile] = []
    for p in data.get("piles", []):
        number = p.get("number")
        line = src.line_of("number", number)
        number = src.int_field(line, "pile number", number, 1)
        if number != len(piles) + 1:
            raise src.error(line, f"pile {number} out of order (expected {len(piles) + 1})")
        kind = p.get("type")
        if not isinstance(kind, str) or not kind or kind in {q.type for q in piles}:
            raise src.error(line, f"pile {number}: missing or duplicate type {kind!r}")
        raw = p.get("values")
        if not isinstance(raw, dict) or not raw:
            raise src.error(line, f"pile {number}: 'values' must map each card value to its copies")
        values = {
            src.int_field(line, f"{kind}: value", value, 1): src.int_field(line, f"{kind}: copies of {value}", copies, 1)
            for value, copies in raw.items()
        }
        piles.append(MoneyPile(number=number, type=kind, values=frozen(dict(sorted(values.items())))))
    if not piles:
        raise src.error(None, "no money piles")
    price = src.int_field(src.line_of("price", data.get("price")), "price", data.get("price"), 1)
    limit = src.int_field(src.line_of("hand_limit", data.get("hand_limit")), "hand_limit", data.get("hand_limit"), 1)
    return NoTrading(piles=tuple(piles), price=price, hand_limit=limit, calamity_dice=frozen(dice))
