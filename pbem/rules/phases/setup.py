"""Setting up a game (§15.4, §16): place cards, nations, one start token each.

Players act one at a time in place-card order. A player without a nation
first picks one of the nations the player count allows (§16) whose start areas
are on the board; then places one token from stock in one of that nation's
start areas. When the last player has placed, the first turn begins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import FrozenMap, replace
from pbem.rules.core.phase import PhaseRules, defaulted
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import NotYourTurn, Rejection
from pbem.rules.core.state import RULES_REVISION, GameState, NationState, Player
from pbem.rules.ruleset.model import Ruleset
from pbem.rules.ruleset.options import typed_options
from pbem.rules.ruleset.parts import parts_for
from pbem.rules.ruleset.reference import match_name
from pbem.rules.ruleset.rulebook import ruleset_for_options, ruleset_of

SETUP_PHASE = "setup"


@dataclass(frozen=True)
class ChooseNation:
    player_id: int
    nation: str


@dataclass(frozen=True)
class PlaceStartToken:
    player_id: int
    area: str


def create_events(
    game_id: str,
    players: Sequence[tuple[int, str, str | None]],
    options: dict[str, str],
    seed_commitment: str,
    draws: Draws,
    revision: int = RULES_REVISION,
) -> list[Event]:
    """GameCreated plus the place-card deal; checks the table of §16 first.

    ``revision`` is recorded only when above 0, so a log from before revisions re-derives unchanged.
    """
    ruleset = ruleset_for_options(options)
    missing = parts_for(typed_options(options)).deck.missing_data(ruleset)
    if missing:
        raise Rejection(*missing)
    count = len(players)
    if count not in ruleset.player_counts:
        sizes = ", ".join(str(n) for n in sorted(ruleset.player_counts))
        raise Rejection(f"a game needs {sizes} players, not {count}", "§16")
    layout = ruleset.setup_for(count)
    names = [name for _, name, _ in players]
    if len({n.lower() for n in names}) != len(names):
        raise Rejection("two players have the same name")
    taken: set[str] = set()
    listed = []
    for pid, name, nation in players:
        if nation is not None:
            nation = _allowed_nation(ruleset, layout.nations_allowed, layout.areas_in_play, nation, taken)
            taken.add(nation)
        listed.append({"id": pid, "name": name, "nation": nation})
    created = Event(
        "GameCreated",
        {
            "game": game_id,
            "ruleset": ruleset.name,
            "options": dict(sorted(options.items())),
            "players": listed,
            "seed_commitment": seed_commitment,
        } | ({"revision": revision} if revision else {}),
        ("§15", "§16"),
    )
    order = draws.shuffle([p["id"] for p in listed], "0:place-cards")
    dealt = Event("PlaceCardsDealt", {"order": order}, ("§15.4",))
    return [created, dealt]


def _start_areas(ruleset: Ruleset, nation: str, in_play: frozenset[str]) -> list[str]:
    return sorted(a for a in ruleset.nations[nation].start_areas if a in in_play)


def _allowed_nation(
    ruleset: Ruleset, allowed: Sequence[str], in_play: frozenset[str], nation: str, taken: set[str]
) -> str:
    try:
        name = match_name(nation, ruleset.nations)
    except LookupError as exc:
        raise Rejection(str(exc).strip("'\""), "§15.4") from None
    if name not in allowed:
        raise Rejection(f"{name} cannot play in a game of this size; allowed: {', '.join(allowed)}", "§16")
    if not _start_areas(ruleset, name, in_play):
        raise Rejection(f"{name} has no start area on the board in use", "§16.12")
    if name in taken:
        raise Rejection(f"{name} is already taken", "§15.4")
    return name


def available_nations(state: GameState) -> list[str]:
    ruleset = ruleset_of(state)
    layout = ruleset.setup_for(len(state.players))
    taken = {p.nation for p in state.players if p.nation}
    return [
        n
        for n in sorted(layout.nations_allowed, key=lambda n: ruleset.nations[n].ast_order)
        if n not in taken and _start_areas(ruleset, n, layout.areas_in_play)
    ]


# -- folding ---------------------------------------------------------------


def apply_game_created(state: GameState, data: dict[str, Any]) -> GameState:
    players = tuple(Player(p["id"], p["name"]) for p in data["players"])
    state = replace(
        state,
        game_id=data["game"],
        ruleset=data["ruleset"],
        options=FrozenMap(data["options"]),
        players=players,
        seed_commitment=data["seed_commitment"],
        phase=SETUP_PHASE,
        revision=data.get("revision", 0),
    )
    for p in data["players"]:
        if p["nation"]:
            state = apply_nation_chosen(state, {"player": p["id"], "nation": p["nation"]})
    return state


def apply_place_cards(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, place_order=tuple(data["order"]))


def apply_nation_chosen(state: GameState, data: dict[str, Any]) -> GameState:
    player = state.player(data["player"])
    nation = data["nation"]
    tokens = ruleset_of(state).setup_for(len(state.players)).tokens_per_player
    state = state.with_player(replace(player, nation=nation))
    return state.with_nation(NationState(nation, player.id, stock=tokens))


def apply_start_token(state: GameState, data: dict[str, Any]) -> GameState:
    nation = state.nations[data["nation"]]
    state = state.with_nation(replace(nation, stock=nation.stock - 1))
    return state.with_area(data["area"], state.area(data["area"]).add_tokens(nation.name, 1))


def apply_setup_completed(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, step="ended")


# -- who acts now ------------------------------------------------------------


def _placed(state: GameState, player: Player) -> bool:
    return player.nation is not None and state.tokens_on_board(player.nation) > 0


def current_player(state: GameState) -> Player | None:
    """The first player in place-card order who has not yet placed a token."""
    for pid in state.place_order:
        player = state.player(pid)
        if not _placed(state, player):
            return player
    return None


def pending(state: GameState) -> dict[str, Prompt]:
    if not state.place_order:
        return {}
    player = current_player(state)
    if player is None:
        return {}
    ruleset = ruleset_of(state)
    layout = ruleset.setup_for(len(state.players))
    position = state.place_order.index(player.id) + 1
    situation = [f"You hold place card {position} of {len(state.place_order)}."]
    for p in (state.player(pid) for pid in state.place_order):
        if p.nation:
            where = ", ".join(a for a, area in state.areas.items() if area.tokens.get(p.nation))
            situation.append(f"{p.name} plays {p.nation}" + (f" and started in {where}." if where else "."))
    if player.nation is None:
        nations = available_nations(state)
        first = nations[0]
        areas = _start_areas(ruleset, first, layout.areas_in_play)
        choices = tuple(f"NATION {n}" for n in nations)
        return {
            player.name.lower(): Prompt(
                who=player.name.lower(),
                player_id=player.id,
                step="choose-nation",
                question="Choose your nation, then place your first token in one of its start areas.",
                choices=choices,
                template=f"NATION {first}\nPLACE {areas[0]}",
                default=f"the first nation still free in A.S.T. order ({first}) and its first start area",
                situation=tuple(situation),
                cites=("§15.4", "§16"),
            )
        }
    areas = _start_areas(ruleset, player.nation, layout.areas_in_play)
    return {
        player.nation.lower(): Prompt(
            who=player.nation.lower(),
            player_id=player.id,
            step="place-start-token",
            question=f"Place {player.nation}'s first token in one of its start areas.",
            choices=tuple(f"PLACE {a}" for a in areas),
            template=f"PLACE {areas[0]}",
            default=f"the token goes to {areas[0]}",
            situation=tuple(situation),
            cites=("§15.4",),
        )
    }


# -- deciding ----------------------------------------------------------------


def _require_turn(state: GameState, player_id: int) -> Player:
    if state.phase != SETUP_PHASE:
        raise Rejection("the game is past setup; nations and start tokens are fixed", "§15.4")
    player = current_player(state)
    if player is None or player.id != player_id:
        waiting = player.name if player else "nobody"
        later = player is not None and any(p.id == player_id and not _placed(state, p) for p in state.players)
        raise (NotYourTurn if later else Rejection)(f"it is not your turn to set up; waiting for {waiting}", "§15.4")
    return player


def decide_choose_nation(state: GameState, command: ChooseNation) -> list[Event]:
    player = _require_turn(state, command.player_id)
    if player.nation is not None:
        raise Rejection(f"you already play {player.nation}", "§15.4")
    ruleset = ruleset_of(state)
    layout = ruleset.setup_for(len(state.players))
    taken = {p.nation for p in state.players if p.nation}
    nation = _allowed_nation(ruleset, layout.nations_allowed, layout.areas_in_play, command.nation, taken)
    return [Event("NationChosen", {"player": player.id, "nation": nation})]


def decide_place_start_token(state: GameState, command: PlaceStartToken) -> list[Event]:
    player = _require_turn(state, command.player_id)
    if player.nation is None:
        raise Rejection("choose a nation first (NATION name)", "§15.4")
    ruleset = ruleset_of(state)
    layout = ruleset.setup_for(len(state.players))
    areas = _start_areas(ruleset, player.nation, layout.areas_in_play)
    try:
        area = match_name(command.area, ruleset.areas)
    except LookupError as exc:
        raise Rejection(str(exc).strip("'\""), "§15.4") from None
    if area not in areas:
        raise Rejection(f"{area} is not a start area of {player.nation}; choose one of {', '.join(areas)}", "§15.4")
    return [Event("StartTokenPlaced", {"player": player.id, "nation": player.nation, "area": area})]


def default_orders(state: GameState, prompt: Prompt) -> list[Event]:
    """What a missed deadline decides for the current player (documented in the prompt)."""
    player = state.player(prompt.player_id)
    events: list[Event] = []
    nation = player.nation
    if nation is None:
        nation = available_nations(state)[0]
        events.append(Event("NationChosen", {"player": player.id, "nation": nation, "by_default": True}))
    layout = ruleset_of(state).setup_for(len(state.players))
    area = _start_areas(ruleset_of(state), nation, layout.areas_in_play)[0]
    events.append(Event("StartTokenPlaced", {"player": player.id, "nation": nation, "area": area, "by_default": True}))
    return events


def settle(state: GameState, draws: Draws) -> list[Event]:
    """The automatic step of setup: once everyone has placed, setup ends."""
    if state.place_order and current_player(state) is None:
        return [Event("SetupCompleted", {}, ("§15.4",))]
    return []


def _name(state: GameState, player_id: int) -> str:
    try:
        return state.player(player_id).name
    except KeyError:
        return f"player {player_id}"


def _by_default(data: dict[str, Any]) -> str:
    if not data.get("by_default"):
        return ""
    return f" ({defaulted(data)})" if data.get("kicked") else " (by default: no orders by the deadline)"


def _tell_created(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    names = ", ".join(p["name"] + (f" ({p['nation']})" if p["nation"] else "") for p in d["players"])
    return f"Game {d['game']} created for {names}; seed commitment {d['seed_commitment'][:16]}."


def _tell_place_cards(state: GameState, event: Event, viewer: str) -> str:
    order = ", ".join(f"{i}. {_name(state, pid)}" for i, pid in enumerate(event.data["order"], start=1))
    return f"Place cards dealt: {order}."


RULES = PhaseRules(
    name=SETUP_PHASE,
    apply={
        "GameCreated": apply_game_created,
        "PlaceCardsDealt": apply_place_cards,
        "NationChosen": apply_nation_chosen,
        "StartTokenPlaced": apply_start_token,
        "SetupCompleted": apply_setup_completed,
    },
    decide={ChooseNation: decide_choose_nation, PlaceStartToken: decide_place_start_token},
    pending=pending,
    defaults=default_orders,
    settle=settle,
    inputs={
        "NationChosen": lambda s, d: ChooseNation(d["player"], d["nation"]),
        "StartTokenPlaced": lambda s, d: PlaceStartToken(d["player"], d["area"]),
    },
    narrate={
        "GameCreated": _tell_created,
        "PlaceCardsDealt": _tell_place_cards,
        "NationChosen": lambda s, e, v: f"{_name(s, e.data['player'])} chose {e.data['nation']}{_by_default(e.data)}.",
        "StartTokenPlaced": lambda s, e, v: f"{e.data['nation']} placed its first token in {e.data['area']}{_by_default(e.data)}.",
        "SetupCompleted": lambda s, e, v: "Setup is complete.",
    },
)
