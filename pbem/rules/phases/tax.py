"""Phase 1: tax collection and tax revolts (seed 003: 1A, 1B; §19; D-2; Q-S5).

Every player pays his rate per city on the board from stock to treasury,
all at once. A Coinage holder first names his rate (1, 2 or 3). Players who
cannot pay are handled after everyone else, in A.S.T.-ranking order: the
cities they cannot pay for revolt to the beneficiary (D-1 ranking among the
other players), who picks which ones and replaces them with his own cities;
when he runs out, the next-ranked continues; cities nobody can take are
eliminated. Democracy holders never revolt (§19.34).

Small Cities (SC-12): towns pay too, one token for every k of them rounded
up, k = 3 at rate 2 (4 at rate 1, 2 at rate 3, the Coinage pairs). That town
levy is taken from stock first; the cities revolt on what is left, and towns
never revolt (Q-SC6, Q-SC11).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, islice
from typing import Any

from pbem.rules.board.ranking import beneficiary_ranking, cities_in_stock, in_ast_order
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import PhaseRules, acting_nation, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

MAX_CHOICES = 60
PHASE = "tax-collection"
COINAGE_RATES = (1, 2, 3)
TOWNS_PER_TOKEN = {1: 4, 2: 3, 3: 2}  # Small Cities: the town rate that goes with each city rate (SC-12)


@dataclass(frozen=True)
class ChooseTaxRate:
    """A Coinage holder's rate for this turn (§19.2)."""

    player_id: int
    rate: int


@dataclass(frozen=True)
class ChooseRevoltingCities:
    """The beneficiary's pick of which of the victim's cities revolt to him (seed 003: 1B, Q-S5)."""

    player_id: int
    areas: tuple[str, ...]


def _cities(state: GameState, nation: str) -> list[str]:
    return sorted(a for a, area in state.areas.items() if area.city == nation)


def _towns(state: GameState, nation: str) -> int:
    """Towns that pay tax (SC-12): none unless Small Cities is played."""
    return parts_of(state).pieces.taxed_towns(state, nation)


def _taxed(state: GameState, nation: str) -> bool:
    return bool(_cities(state, nation)) or _towns(state, nation) > 0


def town_levy(towns: int, rate: int) -> int:
    """Tokens a nation's towns pay at a city rate: one per k towns, rounded up (SC-12, Q-SC11)."""
    return -(-towns // TOWNS_PER_TOKEN[rate]) if towns else 0


def _needs_rate(state: GameState) -> list[str]:
    """Coinage holders with cities (or towns) who have not yet named a rate."""
    return [
        n
        for n in in_ast_order(state, state.nations)
        if "Coinage" in state.nations[n].civ_cards and _taxed(state, n) and f"rate:{n}" not in state.filed
    ]


def _rate(state: GameState, nation: str) -> int:
    filed = state.filed.get(f"rate:{nation}")
    return filed[0] if filed else ruleset_of(state).numbers["tax_per_city"]


def _revolt_queue(state: GameState) -> list[tuple[str, int]]:
    return list(state.filed.get("revolts", ()))


# -- folding -----------------------------------------------------------------


def apply_rate(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, filed=state.filed.set(f"rate:{data['nation']}", (data["rate"],)))


def apply_collected(state: GameState, data: dict[str, Any]) -> GameState:
    for nation, paid in data["paid"].items():
        n = state.nations[nation]
        state = state.with_nation(replace(n, stock=n.stock - paid, treasury=n.treasury + paid))
    queue = tuple((v["nation"], v["revolting"]) for v in data["shortfalls"] if v["revolting"])
    return replace(state, step="revolts", filed=state.filed.set("revolts", queue))


def apply_revolted(state: GameState, data: dict[str, Any]) -> GameState:
    for area in data["areas"]:
        state = state.with_area(area, replace(state.area(area), city=data["beneficiary"]))
    gained = state.gained_this_turn + tuple(a for a in data["areas"] if a not in state.gained_this_turn)
    return _count_off(replace(state, gained_this_turn=gained), data["victim"], len(data["areas"]))


def apply_eliminated(state: GameState, data: dict[str, Any]) -> GameState:
    for area in data["areas"]:
        state = state.with_area(area, replace(state.area(area), city=None))
    return _count_off(state, data["victim"], len(data["areas"]))


def _count_off(state: GameState, victim: str, count: int) -> GameState:
    queue = []
    for nation, left in _revolt_queue(state):
        if nation == victim:
            left -= count
        if left > 0:
            queue.append((nation, left))
    return replace(state, filed=state.filed.set("revolts", tuple(queue)))


# -- who acts ---------------------------------------------------------------------


def _current_revolt(state: GameState) -> tuple[str, int, str | None]:
    """(victim, cities still to revolt, beneficiary who can take one, or None)."""
    victim, left = _revolt_queue(state)[0]
    for candidate in beneficiary_ranking(state, excluding=[victim]):
        if cities_in_stock(state, candidate) > 0:
            return victim, left, candidate
    return victim, left, None


def _revolt_prompt(state: GameState) -> Prompt | None:
    victim, left, beneficiary = _current_revolt(state)
    if beneficiary is None:
        return None
    cities = _cities(state, victim)
    take = min(left, cities_in_stock(state, beneficiary))
    if take >= len(cities):
        return None  # no choice to make: every city of the victim goes
    nation = state.nations[beneficiary]
    example = ", ".join(cities[:take])
    picks = [", ".join(c) for c in islice(combinations(cities, take), MAX_CHOICES)]
    return Prompt(
        who=beneficiary.lower(),
        player_id=nation.player_id,
        step="tax-revolt",
        question=(
            f"{victim} could not pay its tax: {left} of its cities revolt. As beneficiary you take {take} of them, "
            f"replacing each with one of your cities from stock. Choose which."
        ),
        choices=tuple(f"REVOLT {p}" for p in picks),
        template=f"REVOLT {example}",
        default=f"the first {take} by area name ({', '.join(cities[:take])})",
        situation=(f"{victim}'s cities: {', '.join(cities)}.", f"Your cities in stock: {cities_in_stock(state, beneficiary)}."),
        cites=("seed 003: 1B", "Q-S5", "§19.32"),
    )


def pending(state: GameState) -> dict[str, Prompt]:
    if state.step == "" and _needs_rate(state):
        out = {}
        for nation in _needs_rate(state):
            n = state.nations[nation]
            cities, towns = len(_cities(state, nation)), _towns(state, nation)
            question = f"You hold Coinage: choose your tax rate (1, 2 or 3 per city) for your {cities} cities."
            situation = f"Stock {n.stock}, treasury {n.treasury}, cities {cities}."
            if parts_of(state).pieces.towns:
                question = (f"You hold Coinage: choose your tax rate for your {cities} cities and {towns} towns: "
                            + "; ".join(f"TAX {r} is {r} a city and 1 for every {k} towns ({r * cities + town_levy(towns, r)} "
                                        "in all)" for r, k in TOWNS_PER_TOKEN.items()) + ".")
                situation = f"Stock {n.stock}, treasury {n.treasury}, cities {cities}, towns {towns}."
            out[nation.lower()] = Prompt(
                who=nation.lower(),
                player_id=n.player_id,
                step="tax-rate",
                question=question,
                choices=tuple(f"TAX {r}" for r in COINAGE_RATES),
                template="TAX 2",
                default="rate 2",
                situation=(situation,),
                cites=("§19.2", "§32.421") + (("SC-12",) if parts_of(state).pieces.towns else ()),
            )
        return out
    if state.step == "revolts" and _revolt_queue(state):
        prompt = _revolt_prompt(state)
        return {prompt.who: prompt} if prompt else {}
    return {}


# -- deciding ----------------------------------------------------------------------


def decide_rate(state: GameState, command: ChooseTaxRate) -> list[Event]:
    nation = acting_nation(state, command.player_id)
    if state.phase != PHASE or nation not in _needs_rate(state):
        raise Rejection("no tax rate is asked of you now; only a Coinage holder names one, in phase 1", "§19.2")
    if command.rate not in COINAGE_RATES:
        raise Rejection("the tax rate is 1, 2 or 3", "§19.2")
    return [Event("TaxRateChosen", {"nation": nation, "rate": command.rate})]


def decide_revolt(state: GameState, command: ChooseRevoltingCities, by_default: bool = False) -> list[Event]:
    prompt = _revolt_prompt(state) if state.phase == PHASE and state.step == "revolts" and _revolt_queue(state) else None
    if prompt is None or prompt.player_id != command.player_id:
        raise Rejection("no revolting cities are yours to choose now", "seed 003: 1B")
    victim, left, beneficiary = _current_revolt(state)
    take = min(left, cities_in_stock(state, beneficiary))
    cities = _cities(state, victim)
    areas = tuple(dict.fromkeys(command.areas))
    wrong = [a for a in areas if a not in cities]
    if wrong:
        raise Rejection(f"{', '.join(wrong)}: not a city of {victim}; choose from {', '.join(cities)}", "Q-S5")
    if len(areas) != take:
        raise Rejection(f"choose exactly {take} of {victim}'s cities", "Q-S5")
    data = {"victim": victim, "beneficiary": beneficiary, "areas": list(areas)}
    if by_default:
        data["by_default"] = True
    return [Event("RevoltChosen", data, ("seed 003: 1B", "Q-S5", "§19.32", "§24.53"))]


def defaults(state: GameState, prompt: Prompt) -> list[Event]:
    if prompt.step == "tax-rate":
        nation = acting_nation(state, prompt.player_id)
        return [Event("TaxRateChosen", {"nation": nation, "rate": 2, "by_default": True})]
    victim, left, beneficiary = _current_revolt(state)
    take = min(left, cities_in_stock(state, beneficiary))
    return decide_revolt(state, ChooseRevoltingCities(prompt.player_id, tuple(_cities(state, victim)[:take])), True)


# -- resolving ----------------------------------------------------------------------


def _collect(state: GameState) -> Event:
    paid: dict[str, int] = {}
    shortfalls = []
    seed_rule = options_of(state).tax_shortfall_payment == "seed"
    small = parts_of(state).pieces.towns
    for nation in in_ast_order(state, state.nations):
        cities, towns = len(_cities(state, nation)), _towns(state, nation)
        if not cities and not towns:
            continue
        rate, stock = _rate(state, nation), state.nations[nation].stock
        levy = town_levy(towns, rate)
        due = rate * cities + levy
        if stock >= due:
            paid[nation] = due
            continue
        levied = min(stock, levy)  # the towns' levy comes first (Q-SC6)
        covered = (stock - levied) // rate
        democracy = "Democracy" in state.nations[nation].civ_cards
        paid[nation] = stock if seed_rule else levied + rate * covered
        shortfall = {"nation": nation, "cities": cities, "stock": stock, "rate": rate, "paid": paid[nation],
                     "revolting": 0 if democracy else cities - covered, "democracy": democracy}
        if small:
            shortfall.update(towns=towns, levy=levy, levied=levied)
        shortfalls.append(shortfall)
    cites = ("seed 003: 1A", "§19.1") + (("seed 003: 1B", "D-2") if shortfalls else ())
    cites += ("SC-12",) if small and any(_towns(state, n) for n in paid) else ()
    cites += ("Q-SC6",) if small and any(s.get("levy") for s in shortfalls) else ()
    return Event("TaxCollected", {"paid": paid, "shortfalls": shortfalls}, cites)


def settle(state: GameState, draws: Draws) -> list[Event]:
    if state.step == "":
        if _needs_rate(state):
            return []
        if not any(_taxed(state, n) for n in state.nations):
            return [phase_ended(PHASE, ("§18.2",))]  # nothing to collect: the phase is skipped
        return [_collect(state)]
    if state.step == "revolts" and _revolt_queue(state):
        victim, left, beneficiary = _current_revolt(state)
        cities = _cities(state, victim)
        if beneficiary is None:
            return [Event("RevoltingCitiesEliminated", {"victim": victim, "areas": cities[:left]}, ("Q-S5", "§19.33"))]
        if _revolt_prompt(state) is None:  # the beneficiary takes every remaining city
            take = min(left, cities_in_stock(state, beneficiary))
            data = {"victim": victim, "beneficiary": beneficiary, "areas": cities[:take]}
            return [Event("CitiesRevolted", data, ("seed 003: 1B", "Q-S5", "§19.32", "§24.53"))]
        return []
    return [phase_ended(PHASE)]


def _tell_collected(state: GameState, event: Event, viewer: str) -> str:
    parts = [f"{n} paid {p}" for n, p in event.data["paid"].items()]
    if parts_of(state).pieces.towns:  # what each paid for: cities and towns (SC-12)
        parts = [f"{part} ({len(_cities(state, n))} cities, {_towns(state, n)} towns)" for part, n in zip(parts, event.data["paid"])]
    text = "Tax: " + (", ".join(parts) if parts else "nobody has a city, nobody pays") + "."
    for s in event.data["shortfalls"]:
        if s.get("levy"):
            text += f" {s['nation']} owed {s['levy']} for its {s['towns']} towns and paid {s['levied']} of it first (Q-SC6);"
            if not s["cities"]:
                continue
        if s["democracy"]:
            text += f" {s['nation']} could not pay in full but holds Democracy: no revolt."
        else:
            text += f" {s['nation']} could pay for only {s['cities'] - s['revolting']} of {s['cities']} cities: {s['revolting']} revolt."
    return text


RULES = PhaseRules(
    name=PHASE,
    apply={
        "TaxRateChosen": apply_rate,
        "TaxCollected": apply_collected,
        "CitiesRevolted": apply_revolted,
        "RevoltChosen": apply_revolted,
        "RevoltingCitiesEliminated": apply_eliminated,
    },
    decide={ChooseTaxRate: decide_rate, ChooseRevoltingCities: decide_revolt},
    pending=pending,
    defaults=defaults,
    settle=settle,
    inputs={
        "TaxRateChosen": lambda s, d: ChooseTaxRate(s.nations[d["nation"]].player_id, d["rate"]),
        "RevoltChosen": lambda s, d: ChooseRevoltingCities(s.nations[d["beneficiary"]].player_id, tuple(d["areas"])),
    },
    narrate={
        "TaxRateChosen": lambda s, e, v: f"{e.data['nation']} chose a tax rate of {e.data['rate']}.",
        "TaxCollected": _tell_collected,
        "RevoltChosen": lambda s, e, v: f"{e.data['beneficiary']} chose {len(e.data['areas'])} cities of {e.data['victim']} to revolt to it: {', '.join(e.data['areas'])}.",
        "CitiesRevolted": lambda s, e, v: f"{len(e.data['areas'])} cities of {e.data['victim']} revolted to {e.data['beneficiary']}: {', '.join(e.data['areas'])}.",
        "RevoltingCitiesEliminated": lambda s, e, v: f"Nobody could take {e.data['victim']}'s revolting cities; eliminated: {', '.join(e.data['areas'])}.",
    },
)
