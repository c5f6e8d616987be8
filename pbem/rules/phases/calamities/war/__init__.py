"""Civil War, a calamity of phase 9 (stack 4, non-tradable; §30.41, fact sheet §2.12, D-1, Q-S6).

Procedure as this engine plays it (stages of the calamity, ``state.step``):

0. The beneficiary is ranked by ``beneficiary_ranking`` (D-1) over all
   players, the victim included. If the victim ranks first, or he has no
   unit on the board, there is no Civil War (§30.411, D-1 "Civil War").
   Under No-Trading the High roller is the beneficiary and the ranking only
   follows him for the cascade of step 5; the victim's own rank does not
   matter (NT-9).
1. Faction 1: the victim chooses units worth 15 unit points (a city 5, a
   token 1), +5 for each of Music and Drama & Poetry, +10 for Democracy.
   With Philosophy the beneficiary chooses 15 units instead, and stage 2 is
   skipped (Philosophy replaces the split rule).
2. The beneficiary adds 20 more unit points of the victim's units.
3. The victim's other units are faction 2; if there are none, there is no
   Civil War. Military (victim's card): each faction first loses 5 unit
   points (tokens first by area name, then cities by area name; this engine
   chooses them, the sources give nobody the choice).
4. The victim keeps one faction, his choice (fact sheet §2.12: "Victim
   keeps one faction (his choice)"): ``FACTION 1`` or ``FACTION 2``. The
   default keeps the faction worth more unit points (faction 1 on a tie).
   If the Military losses emptied one faction, he keeps the other without
   being asked.
5. The other faction goes to the beneficiary: each token and city is
   replaced by one of his from his stock; when his stock runs out the
   next-ranked player takes the rest (§30.415, D-1 "Cascade"); a city
   nobody can take is eliminated. Cities changing owner count as gained
   this turn (D-6). The victim's removed pieces go back to his stock.

A choice of units is an order ``REBELS <area> <tokens>, <area> CITY ...``
totalling exactly the points asked if possible, otherwise the least
overshoot, otherwise everything left. The default takes tokens first (by
area name) and as few cities as possible (by area name). Under Small Cities
towns are units of 1 point (``<area> <n> TOWNS``), taken after tokens by
default and shed after them; towns that change sides become the
beneficiary's towns (SC-9).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.board.ranking import beneficiary_ranking, cities_in_stock
from pbem.rules.board.support import cities_of
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.choosing import (
    MAX_CHOICES,
    CalamityFamily,
    own_stage,
    quantity,
)
from pbem.rules.phases.calamities.war.factions import CITY_POINTS, Item, faction_points
from pbem.rules.phases.calamities.war.narration import (
    AVERTED_BECAUSE,
    tell_fought,
    tell_kept,
    tell_split,
    tell_units,
    units_text,
)
from pbem.rules.ruleset.rulebook import ruleset_of

NAME = "Civil War"
DONE = 9
SPLIT, KEEP, HANDOVER = 3, 4, 5
CITES = ("§30.41", "D-1", "Q-S6")


@dataclass(frozen=True)
class KeepFaction:
    """The faction (1 or 2) the Civil War's victim keeps (FACTION 1|2)."""

    player_id: int
    faction: int


@dataclass(frozen=True)
class ChooseFaction:
    """Units chosen for Civil War's faction 1: (area, "tokens" | "city", count) items (REBELS ...)."""

    player_id: int
    items: tuple[tuple[str, str, int], ...]


def _filed_items(state: GameState, key: str = "faction") -> tuple[Item, ...]:
    return tuple(tuple(i) for i in state.filed.get(key, ()))  # type: ignore[misc]


def _beneficiary(state: GameState) -> str:
    return str(state.filed.get("beneficiary", ("",))[0])


def _philosophy(state: GameState, victim: str) -> int | None:
    rules = ruleset_of(state)
    for card in state.nations[victim].civ_cards:
        if card in rules.civ_cards:
            for e in rules.civ_cards[card].effects:
                if e.kind == "calamity-rule" and e.calamity == NAME and e.get("rule") == "beneficiary-picks-faction":
                    return int(e.get("value"))
    return None


def _room(state: GameState, victim: str, taken: tuple[Item, ...], kind: str = "tokens") -> tuple[dict[str, int], list[str]]:
    """The victim's tokens (or towns) per area and cities not yet in faction 1."""
    used = {a: n for a, what, n in taken if what == kind}
    gone = {a for a, what, _ in taken if what == "city"}
    room = {}
    for name in sorted(state.areas):
        here = state.area(name)
        left = (here.tokens if kind == "tokens" else here.towns).get(victim, 0) - used.get(name, 0)
        if left > 0:
            room[name] = left
    return room, [a for a in sorted(cities_of(state, victim)) if a not in gone]


def _singles(state: GameState, victim: str, taken: tuple[Item, ...]) -> dict[tuple[str, str], int]:
    """(area, "tokens" | "towns") -> the victim's units of 1 point not yet in faction 1, tokens before towns."""
    tokens, _ = _room(state, victim, taken)
    towns, _ = _room(state, victim, taken, "towns")
    return {**{(a, "tokens"): n for a, n in tokens.items()}, **{(a, "towns"): n for a, n in towns.items()}}


def _required(points: int, tokens: int, cities: int) -> int:
    totals = {CITY_POINTS * c + t for c in range(cities + 1) for t in range(tokens + 1)}
    above = [t for t in totals if t >= points]
    return min(above) if above else max(totals)


def _spread(room: dict[tuple[str, str], int], count: int, names: list[str]) -> list[Item]:
    """``count`` single units: tokens over ``names`` in that order, then towns likewise."""
    out = []
    for kind in ("tokens", "towns"):
        for area in names:
            if count <= 0 or (area, kind) not in room:
                continue
            take = min(room[(area, kind)], count)
            out.append((area, kind, take))
            count -= take
    return out


@dataclass(frozen=True)
class Split:
    """``chooser`` names ``points`` unit points of ``victim``'s units for faction 1 (stage ``index``)."""

    victim: str
    chooser: str
    points: int
    index: int
    next: int
    question: str

    def need(self, state: GameState) -> int:
        _, cities = _room(state, self.victim, _filed_items(state))
        return _required(self.points, sum(_singles(state, self.victim, _filed_items(state)).values()), len(cities))

    def answers(self, state: GameState, limit: int) -> list[tuple[Item, ...]]:
        """Legal answers, the default first: tokens by area name, then towns, as few cities as possible."""
        _, cities = _room(state, self.victim, _filed_items(state))
        room = _singles(state, self.victim, _filed_items(state))
        need = self.need(state)
        tokens = sum(room.values())
        out: list[tuple[Item, ...]] = []
        names = sorted({a for a, _ in room})
        orders = [names, names[::-1]]
        for k in range(len(cities) + 1):
            rest = need - CITY_POINTS * k
            if rest < 0 or rest > tokens:
                continue
            for picked in (cities[:k], cities[len(cities) - k:]):
                for names in orders:
                    answer = tuple(sorted([(a, "city", 1) for a in picked] + _spread(room, rest, names)))
                    if answer not in out:
                        out.append(answer)
            if len(out) >= limit:
                break
        return out[:limit] or [()]

    def check(self, state: GameState, items: tuple[Item, ...]) -> str | None:
        _, cities = _room(state, self.victim, _filed_items(state))
        room = _singles(state, self.victim, _filed_items(state))
        seen: set[tuple[str, str]] = set()
        total = 0
        for area, what, n in items:
            if (area, what) in seen:
                return f"{area} is named twice"
            seen.add((area, what))
            if what in ("tokens", "towns"):
                if n <= 0 or n > room.get((area, what), 0):
                    return f"{area}: {self.victim} has {room.get((area, what), 0)} {what} there you may choose"
                total += n
            elif what == "city":
                if area not in cities:
                    return f"{area} is not a city of {self.victim} you may choose"
                total += CITY_POINTS
            else:
                return f"{area}: a city joins a faction whole (write CITY)"
        need = self.need(state)
        if total != need:
            return f"your choice comes to {total} unit points; it must come to exactly {need}"
        return None

    def data(self, state: GameState, cal: tuple, items: tuple[Item, ...]) -> dict[str, Any]:
        return {
            "calamity": cal[0],
            "victim": self.victim,
            "chooser": self.chooser,
            "points": self.points,
            "units": [list(i) for i in items],
            "next": self.next,
        }

    # hooks used by calamities.settle_resolution / pending_resolution / defaults_resolution
    def settle(self, state: GameState, cal: tuple) -> list[Event]:
        options = self.answers(state, 2)
        if len(options) > 1:
            return []
        return [Event("CivilWarUnitsTaken", self.data(state, cal, options[0]), ("seed 003: 9",) + CITES)]

    def prompt(self, state: GameState, cal: tuple) -> Prompt | None:
        options = self.answers(state, MAX_CHOICES)
        if len(options) < 2:
            return None
        room, cities = _room(state, self.victim, _filed_items(state))
        towns, _ = _room(state, self.victim, _filed_items(state), "towns")
        need = self.need(state)
        lines = tuple(write(o) for o in options)
        n = state.nations[self.chooser]
        return Prompt(
            who=self.chooser.lower(),
            player_id=n.player_id,
            step="civil-war-faction",
            question=self.question
            + (f" (exactly {self.points} is impossible: choose {need})" if need != self.points else "")
            + " Write '<area> <tokens>'" + (", '<area> <n> TOWNS'" if towns else "")
            + " and '<area> CITY' (a city is 5 unit points).",
            choices=lines,
            template=lines[0],
            default=f"{lines[0]} (tokens first by area name, then as few cities as possible by area name)",
            situation=(
                f"{self.victim}'s tokens you may choose: " + (", ".join(f"{a} {k}" for a, k in room.items()) or "none") + ".",
                *((f"{self.victim}'s towns you may choose: " + ", ".join(f"{a} {k}" for a, k in towns.items()) + ".",)
                  if towns else ()),
                f"{self.victim}'s cities you may choose: " + (", ".join(cities) or "none") + ".",
                f"Beneficiary: {_beneficiary(state)}.",
            ),
            cites=("seed 003: 9",) + CITES,
        )

    def default(self, state: GameState, cal: tuple, prompt: Prompt) -> list[Event]:
        return decide_faction(state, ChooseFaction(prompt.player_id, self.answers(state, 1)[0]), True)


def write(items: tuple[Item, ...]) -> str:
    parts = [f"{a} {n}" if what == "tokens" else f"{a} {n} TOWNS" if what == "towns" else f"{a} CITY"
             for a, what, n in items]
    return "REBELS " + (", ".join(parts) if parts else "NOTHING")


def _units(state: GameState, nation: str) -> int:
    return state.tokens_on_board(nation) + state.towns_on_board(nation) + state.cities_on_board(nation)


def _military(state: GameState, victim: str) -> int:
    base = ruleset_of(state).calamities[NAME].primary.get("faction_loss", 0)
    return quantity(state, victim, NAME, "primary", "faction_loss", base)


def _shed(items: list[Item], points: int) -> tuple[list[Item], list[Item]]:
    """Remove ``points`` unit points from a faction: tokens first by area name, then towns, then cities by area name."""
    kept = sorted(items)
    lost: list[Item] = []
    for what in ("tokens", "towns", "city"):
        for i, (area, kind, n) in enumerate(list(kept)):
            if points <= 0 or kind != what:
                continue
            value = n if kind != "city" else CITY_POINTS
            if kind != "city":
                take = min(n, points)
                lost.append((area, kind, take))
                kept[i] = (area, kind, n - take)
                points -= take
            else:
                lost.append((area, "city", 1))
                kept[i] = (area, "city", 0)
                points -= value
    return [i for i in kept if i[2] > 0], lost


def _split(state: GameState, cal: tuple) -> Event:
    """Stage 3: faction 2 is what is left; Military costs each faction 5 unit points (automatic)."""
    victim = cal[1]
    faction1 = list(_filed_items(state))
    room, cities = _room(state, victim, tuple(faction1))
    towns, _ = _room(state, victim, tuple(faction1), "towns")
    faction2 = [(a, "tokens", k) for a, k in room.items()] + [(a, "towns", k) for a, k in towns.items()]
    faction2 += [(a, "city", 1) for a in cities]
    base = {"calamity": NAME, "victim": victim, "beneficiary": _beneficiary(state), "next": DONE}
    if not faction2 or not faction1:
        return Event("CivilWarAverted", base | {"reason": "no-faction-2" if not faction2 else "no-faction-1"}, ("seed 003: 9", "§30.41"))
    loss = _military(state, victim)
    lost: list[Item] = []
    if loss:
        faction1, lost1 = _shed(faction1, loss)
        faction2, lost2 = _shed(faction2, loss)
        lost = lost1 + lost2
    data = base | {
        "military": loss,
        "lost": [list(i) for i in lost],
        "factions": [[list(i) for i in sorted(faction1)], [list(i) for i in sorted(faction2)]],
        "next": KEEP,
    }
    return Event("CivilWarSplit", data, ("seed 003: 9", "§30.41") + (("§30.41 Military",) if loss else ()))


def _factions(state: GameState) -> tuple[tuple[Item, ...], tuple[Item, ...]]:
    return _filed_items(state, "faction"), _filed_items(state, "faction2")


@dataclass(frozen=True)
class KeepChoice:
    """Stage 4: the victim keeps one faction; the other goes over (fact sheet §2.12)."""

    victim: str

    def options(self, state: GameState) -> list[int]:
        return [i + 1 for i, f in enumerate(_factions(state)) if f]

    def best(self, state: GameState) -> int:
        one, two = _factions(state)
        return 2 if faction_points(two) > faction_points(one) else 1

    def settle(self, state: GameState, cal: tuple) -> list[Event]:
        options = self.options(state)
        if len(options) > 1:
            return []
        kept = options[0] if options else 1
        return [Event("CivilWarOneFactionLeft", {"calamity": NAME, "victim": self.victim, "kept": kept, "next": HANDOVER},
                      ("seed 003: 9", "§30.41"))]

    def prompt(self, state: GameState, cal: tuple) -> Prompt | None:
        if len(self.options(state)) < 2:
            return None
        one, two = _factions(state)
        best = self.best(state)
        n = state.nations[self.victim]
        return Prompt(
            who=self.victim.lower(),
            player_id=n.player_id,
            step="civil-war-keep",
            question=(f"Civil War: keep one faction; the other goes over to {_beneficiary(state)}. "
                      "Write FACTION 1 or FACTION 2."),
            choices=("FACTION 1", "FACTION 2"),
            template=f"FACTION {best}",
            default=f"FACTION {best} (the faction worth more unit points; faction 1 on a tie)",
            situation=(
                f"Faction 1 ({faction_points(one)} unit points): {units_text(list(one))}.",
                f"Faction 2 ({faction_points(two)} unit points): {units_text(list(two))}.",
                "You keep your stock, ships, treasury, cards and A.S.T. position whichever you keep.",
            ),
            cites=("seed 003: 9",) + CITES,
        )

    def default(self, state: GameState, cal: tuple, prompt: Prompt) -> list[Event]:
        return decide_keep(state, KeepFaction(prompt.player_id, self.best(state)), True)


def _handover(state: GameState, cal: tuple) -> Event:
    """Stage 5: the faction the victim did not keep changes sides (automatic)."""
    victim = cal[1]
    first = _beneficiary(state)  # fixed when the Civil War began; the rest ranked now (D-1 cascade)
    order = [first] + [n for n in beneficiary_ranking(state, excluding=(victim, first))]
    stock = {n: state.nations[n].stock for n in order}
    city_room = {n: cities_in_stock(state, n) for n in order}
    moves = []
    for area, what, n in sorted(_filed_items(state)):
        if what == "city":
            to = next((x for x in order if city_room[x] > 0), None)
            if to:
                city_room[to] -= 1
            moves.append({"area": area, "what": "city", "count": 1, "to": to})
            continue
        left = n
        for x in order:
            if left <= 0:
                break
            put = min(left, stock[x])
            if put:
                stock[x] -= put
                moves.append({"area": area, "what": what, "count": put, "to": x})
                left -= put
        if left:
            moves.append({"area": area, "what": what, "count": left, "to": None})
    data = {"calamity": NAME, "victim": victim, "beneficiary": first, "kept": state.filed.get("kept", (0,))[0],
            "moves": moves, "next": DONE}
    return Event("CivilWarFought", data, ("seed 003: 9", "§30.41", "§30.415", "D-1", "D-6"))


def civil_war(state: GameState, cal: tuple, index: int) -> Any:
    """The resolver of Civil War (see the module docstring for the stages)."""
    name, victim, high = cal
    if index == 0:
        if high is not None:  # No-Trading: High is the beneficiary; the ranking only follows him (NT-9)
            ranking = [high] + beneficiary_ranking(state, excluding=(victim, high))
            data = {"calamity": name, "victim": victim, "ranking": ranking, "beneficiary": high, "next": 1}
            if _units(state, victim) == 0:
                return Event("CivilWarAverted", data | {"reason": "no-units", "next": DONE}, ("seed 003: 9", "§30.41"))
            return Event("CivilWarBegins", data, ("seed 004: 5b", "NT-9", "§30.415", "D-1"))
        ranking = beneficiary_ranking(state)
        data = {"calamity": name, "victim": victim, "ranking": ranking, "beneficiary": ranking[0], "next": 1}
        if ranking[0] == victim:
            return Event("CivilWarAverted", data | {"reason": "victim-ranks-first", "next": DONE}, ("seed 003: 9", "§30.411", "D-1"))
        if _units(state, victim) == 0:
            return Event("CivilWarAverted", data | {"reason": "no-units", "next": DONE}, ("seed 003: 9", "§30.41"))
        return Event("CivilWarBegins", data, ("seed 003: 9", "§30.411", "D-1", "Q-S6"))
    beneficiary = _beneficiary(state)
    philosophy = _philosophy(state, victim)
    if index == 1:
        if philosophy is not None:
            return Split(victim, beneficiary, philosophy, 1, SPLIT,
                         f"Civil War ({victim} holds Philosophy): choose {philosophy} unit points of {victim}'s units for faction 1; "
                         f"{victim} then keeps one faction and the other becomes yours.")
        base = ruleset_of(state).calamities[name].primary["victim_unit_points"]
        points = quantity(state, victim, name, "primary", "victim_unit_points", base)
        return Split(victim, victim, points, 1, 2,
                     f"Civil War: choose {points} unit points of your units for faction 1; {beneficiary} adds 20 more, "
                     "then you keep one faction and the other goes over to him.")
    if index == 2:
        points = ruleset_of(state).calamities[name].primary["beneficiary_unit_points"]
        return Split(victim, beneficiary, points, 2, SPLIT,
                     f"Civil War: choose {points} more unit points of {victim}'s units for faction 1; "
                     f"{victim} then keeps one faction and the other becomes yours.")
    if index == SPLIT:
        return _split(state, cal)
    if index == KEEP:
        return KeepChoice(victim)
    if index == HANDOVER:
        return _handover(state, cal)
    return None


def _stage(state: GameState, player_id: int) -> tuple[tuple, Split]:
    current = own_stage(state, NAME, civil_war)
    if current is None or not isinstance(current[1], Split) or current[1].prompt(state, current[0]) is None:
        raise Rejection("no Civil War asks you to choose units now", "§30.41")
    if state.nations[current[1].chooser].player_id != player_id:
        raise Rejection(f"no Civil War asks you to choose units now; {current[1].chooser} is to answer", "§30.41")
    return current[0], current[1]


def decide_faction(state: GameState, command: ChooseFaction, by_default: bool = False) -> list[Event]:
    cal, split = _stage(state, command.player_id)
    items = tuple(sorted(tuple(i) for i in command.items))
    why = split.check(state, items)  # type: ignore[arg-type]
    if why:
        raise Rejection(why, "§30.41")
    data = split.data(state, cal, items)  # type: ignore[arg-type]
    if by_default:
        data["by_default"] = True
    return [Event("CivilWarUnitsChosen", data, ("seed 003: 9",) + CITES)]


def decide_keep(state: GameState, command: KeepFaction, by_default: bool = False) -> list[Event]:
    current = own_stage(state, NAME, civil_war)
    if current is None or not isinstance(current[1], KeepChoice) or current[1].prompt(state, current[0]) is None:
        raise Rejection("no Civil War asks you to keep a faction now", "§30.41")
    stage = current[1]
    if state.nations[stage.victim].player_id != command.player_id:
        raise Rejection(f"no Civil War asks you to keep a faction now; {stage.victim} is to answer", "§30.41")
    if command.faction not in (1, 2):
        raise Rejection("there are two factions: write FACTION 1 or FACTION 2", "§30.41")
    data = {"calamity": NAME, "victim": stage.victim, "kept": command.faction, "next": HANDOVER}
    if by_default:
        data["by_default"] = True
    return [Event("CivilWarFactionKept", data, ("seed 003: 9", "§30.41"))]


# -- apply ---------------------------------------------------------------------------------------


def apply_begins(state: GameState, data: dict[str, Any]) -> GameState:
    filed = state.filed.set("beneficiary", (data["beneficiary"],)).set("faction", ())
    return replace(state, filed=filed, step=str(data["next"]))


def _clear(state: GameState) -> GameState:
    filed = state.filed
    for key in ("beneficiary", "faction", "faction2", "kept"):
        filed = filed.without(key)
    return replace(state, filed=filed)


def apply_averted(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(_clear(state), step=str(data["next"]))


def apply_units(state: GameState, data: dict[str, Any]) -> GameState:
    merged: dict[tuple[str, str], int] = {}
    for area, what, n in list(_filed_items(state)) + [tuple(u) for u in data["units"]]:
        merged[(area, what)] = merged.get((area, what), 0) + n
    items = tuple(sorted((a, w, n) for (a, w), n in merged.items()))
    return replace(state, filed=state.filed.set("faction", items), step=str(data["next"]))


def _remove(state: GameState, nation: str, area: str, what: str, n: int) -> GameState:
    a = state.area(area)
    if what == "city":
        return state.with_area(area, replace(a, city=None))
    state = state.with_area(area, a.add_towns(nation, -n) if what == "towns" else a.add_tokens(nation, -n))
    v = state.nations[nation]
    return state.with_nation(replace(v, stock=v.stock + n))


def apply_split(state: GameState, data: dict[str, Any]) -> GameState:
    victim = data["victim"]
    for area, what, n in data["lost"]:
        state = _remove(state, victim, area, what, n)
    one, two = (tuple(tuple(i) for i in f) for f in data["factions"])
    return replace(state, filed=state.filed.set("faction", one).set("faction2", two), step=str(data["next"]))


def apply_kept(state: GameState, data: dict[str, Any]) -> GameState:
    """What stays filed as "faction" is the faction that goes over."""
    one, two = _factions(state)
    going = two if data["kept"] == 1 else one
    filed = state.filed.set("faction", going).without("faction2").set("kept", (data["kept"],))
    return replace(state, filed=filed, step=str(data["next"]))


def apply_fought(state: GameState, data: dict[str, Any]) -> GameState:
    victim = data["victim"]
    gained = list(state.gained_this_turn)
    for m in data["moves"]:
        state = _remove(state, victim, m["area"], m["what"], m["count"])
        to = m["to"]
        if to is None:
            continue
        a = state.area(m["area"])
        if m["what"] == "city":
            state = state.with_area(m["area"], replace(a, city=to))
            if m["area"] not in gained:
                gained.append(m["area"])
        else:
            units = a.add_towns(to, m["count"]) if m["what"] == "towns" else a.add_tokens(to, m["count"])
            state = state.with_area(m["area"], units)
            v = state.nations[to]
            state = state.with_nation(replace(v, stock=v.stock - m["count"]))
    return replace(_clear(state), step=str(data["next"]), gained_this_turn=tuple(gained))


FAMILY = CalamityFamily(
    resolvers={NAME: civil_war},
    narrate={
        "CivilWarBegins": lambda s, e, v: (
            f"Civil War ({e.data['victim']}): the beneficiary is {e.data['beneficiary']} (ranking {', '.join(e.data['ranking'])})."
        ),
        "CivilWarAverted": lambda s, e, v: f"Civil War ({e.data['victim']}): no civil war, as {AVERTED_BECAUSE[e.data['reason']]}.",
        "CivilWarUnitsChosen": tell_units,
        "CivilWarUnitsTaken": tell_units,
        "CivilWarSplit": tell_split,
        "CivilWarFactionKept": tell_kept,
        "CivilWarOneFactionLeft": lambda s, e, v: (
            f"Civil War ({e.data['victim']}): Military emptied one faction; {e.data['victim']} keeps faction {e.data['kept']}."
        ),
        "CivilWarFought": tell_fought,
    },
    apply={
        "CivilWarBegins": apply_begins,
        "CivilWarAverted": apply_averted,
        "CivilWarUnitsChosen": apply_units,
        "CivilWarUnitsTaken": apply_units,
        "CivilWarSplit": apply_split,
        "CivilWarFactionKept": apply_kept,
        "CivilWarOneFactionLeft": apply_kept,
        "CivilWarFought": apply_fought,
    },
    decide={ChooseFaction: decide_faction, KeepFaction: decide_keep},
    inputs={
        "CivilWarUnitsChosen": lambda s, d: ChooseFaction(s.nations[d["chooser"]].player_id, tuple(tuple(u) for u in d["units"])),
        "CivilWarFactionKept": lambda s, d: KeepFaction(s.nations[d["victim"]].player_id, d["kept"]),
    },
)
