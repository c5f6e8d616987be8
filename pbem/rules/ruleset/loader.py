"""The Advanced Civilization ruleset as data: the loader that reads and checks it.

Why a loader: every fact the engine needs about the game (board, nations,
A.S.T. tracks, civilization cards and credits, trade stacks, calamities, fixed
numbers) lives in project-owned files under ``data/advciv/``.  Code asks a
:class:`Ruleset` instead of carrying literals, so a corrected board or a house
map is a folder of files, not a code change (game option ``ruleset-data``).

Where the sources disagree, the files hold the recommended value and keep the
alternative; the ruleset options in :data:`RULESET_OPTIONS` choose between
them.  The loader refuses bad data with a :class:`RulesetError` naming the
file, the line and the problem, so a moderator can fix a house map alone.

The records are in `model`; the files are read by `board_data` and
`cards_data`, each row checked as it is read (`source`, `effects`).

Pure: standard library only, no clock, no randomness.
"""

from __future__ import annotations

import functools
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from pbem.rules.ruleset.board_data import (
    apply_disputed,
    link_graph,
    read_aliases,
    read_areas,
    read_links,
    read_waters,
)
from pbem.rules.ruleset.cards_data import (
    cross_check_calamities,
    read_calamities,
    read_cards,
    read_no_trading,
    read_stacks,
)
from pbem.rules.ruleset.model import (
    Area,
    AstTrack,
    Epoch,
    Nation,
    PlayerCountSetup,
    Ruleset,
    RulesetError,
    frozen,
)
from pbem.rules.ruleset.source import Source

#: Ruleset options: name -> allowed values, the default first.  The game-options
#: validator accepts these; ``ruleset-data`` (a folder) is handled by callers.
RULESET_OPTIONS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "open-sea": ("vassal", "literal"),
    "western-extension": ("off", "on"),
    "disputed-areas": ("majority", "jc", "ng", "lv"),
    "water-links": ("all", "confirmed"),
    "five-player-board": ("drop-east", "drop-west"),
    "babylon-late-iron": ("1500-1800", "1600-1900"),
})

PACKAGED_DATA = Path(__file__).resolve().parent / "data" / "advciv"


def load_ruleset(data_dir: str | Path | None = None,
                 overrides: Mapping[str, str] = MappingProxyType({})) -> Ruleset:
    """Load and validate a ruleset.

    ``data_dir`` None means the packaged Advanced Civilization data (cached:
    it is loaded often).  ``overrides`` may carry any game options; only the
    keys of :data:`RULESET_OPTIONS` are read, and their values are checked.
    """
    options = _resolve_options(overrides)
    key = tuple(sorted(options.items()))
    if data_dir is None:
        return _packaged(key)
    return _load(Path(data_dir), dict(key))


@functools.lru_cache(maxsize=32)
def _packaged(options: tuple[tuple[str, str], ...]) -> Ruleset:
    return _load(PACKAGED_DATA, dict(options))


def _resolve_options(overrides: Mapping[str, str]) -> dict[str, str]:
    options = {}
    for name, allowed in RULESET_OPTIONS.items():
        value = overrides.get(name, allowed[0])
        if value not in allowed:
            raise RulesetError(
                f"option {name}={value!r}: allowed values are {', '.join(allowed)}")
        options[name] = value
    return options


def _load(folder: Path, options: dict[str, str]) -> Ruleset:
    if not folder.is_dir():
        raise RulesetError(f"ruleset data folder {folder} does not exist")
    constants = read_constants(Source(folder, "constants.json"))
    areas = read_areas(Source(folder, "areas.csv"))
    waters = read_waters(Source(folder, "water.csv"), options["open-sea"])
    land_pairs = read_links(Source(folder, "land_adjacency.csv"), areas, waters, land=True)
    water_records = read_links(Source(folder, "water_adjacency.csv"), areas, waters,
                                land=False)
    epochs, tracks = read_ast(Source(folder, "ast.json"), options)
    nations = read_nations(Source(folder, "nations.csv"), areas, tracks)
    stacks, price, purchase_stack = read_stacks(Source(folder, "trade_stacks.json"))
    calamities = read_calamities(Source(folder, "calamities.json"), stacks)
    names = {
        "calamities": frozenset(calamities),
        "commodities": frozenset(c.name for s in stacks for c in s.commodities),
    }
    groups, cards = read_cards(Source(folder, "civ_cards.json"),
                                Source(folder, "civ_card_credits.csv"), names)
    cross_check_calamities(Source(folder, "calamities.json"), calamities, cards)
    aliases = read_aliases(folder)
    no_trading = None
    if (folder / "no_trading.json").exists():  # only the No-Trading variant needs it
        no_trading = read_no_trading(Source(folder, "no_trading.json"), [e.name for e in epochs])

    # Options that choose among recorded alternatives.
    areas = apply_disputed(areas, options["disputed-areas"])
    if options["water-links"] == "confirmed":
        water_records = [w for w in water_records if w.confidence == "confirmed"]
    boards = {"main", "western"} if options["western-extension"] == "on" else {"main"}
    areas = {n: a for n, a in areas.items() if a.board in boards}
    waters = {n: w for n, w in waters.items() if w.board in boards}
    known = set(areas) | set(waters)
    land_pairs = [p for p in land_pairs if p.a in known and p.b in known]
    water_records = [w for w in water_records if w.a in known and w.b in known]
    nations = _place_nations(nations, areas)
    setups = read_player_counts(Source(folder, "player_counts.json"), areas, nations,
                                 options)

    land_adj = link_graph(areas, land_pairs)
    water_graph = link_graph(list(areas) + list(waters), water_records)
    coast_graph = link_graph(areas, [w for w in water_records if w.kind == "coast-coast"])
    return Ruleset(
        name=constants["name"], title=constants.get("title", constants["name"]),
        data_dir=str(folder), options=frozen(options),
        areas=frozen(dict(sorted(areas.items()))),
        waters=frozen(dict(sorted(waters.items()))),
        land_adjacency=land_adj, water_links=water_graph, coast_links=coast_graph,
        water_link_records=tuple(water_records),
        aliases=frozen({a: n for a, n in aliases.items() if n in known}),
        nations=frozen(nations), epochs=epochs, player_counts=frozen(setups),
        civ_card_groups=groups, civ_cards=frozen(cards), stacks=tuple(stacks),
        calamities=frozen(calamities), gold_ivory_price=price,
        purchase_stack=purchase_stack,
        cities_per_nation=constants["cities_per_nation"],
        ships_per_nation=constants["ships_per_nation"],
        tokens_per_nation=constants["tokens_per_nation"],
        hand_limit=constants["hand_limit"],
        civ_card_copies=constants["civ_card_copies"],
        numbers=frozen(constants["numbers"]),
        no_trading=no_trading,
    )


def read_constants(src: Source) -> dict[str, Any]:
    data = src.json()
    out: dict[str, Any] = {}
    for key in ("name",):
        if not isinstance(data.get(key), str) or not data[key]:
            raise src.error(src.line_of(key, data.get(key)) or 1, f"{key}: missing text")
    out["name"] = data["name"]
    out["title"] = data.get("title", data["name"])
    for key in ("cities_per_nation", "ships_per_nation", "tokens_per_nation",
                "hand_limit", "civ_card_copies"):
        if key not in data:
            raise src.error(None, f"{key}: missing")
        out[key] = src.int_field(src.line_of(key, data[key]), key, data[key], 1)
    numbers = data.get("numbers", {})
    if not isinstance(numbers, dict):
        raise src.error(None, "numbers: must be an object")
    out["numbers"] = {k: src.int_field(src.line_of(k, v), k, v, 0) for k, v in numbers.items()}
    return out


def read_ast(src: Source, options: Mapping[str, str]
              ) -> tuple[tuple[Epoch, ...], dict[str, AstTrack]]:
    data = src.json()
    per_space = src.int_field(src.line_of("points_per_space", data.get("points_per_space")),
                              "points_per_space", data.get("points_per_space"), 1)
    finish = src.int_field(src.line_of("finish_space", data.get("finish_space")),
                           "finish_space", data.get("finish_space"), 2)
    epochs = []
    for e in data.get("epochs", []):
        line = src.line_of("name", e.get("name"))
        epochs.append(Epoch(name=e["name"], **{
            k: src.int_field(line, f"{e['name']}: {k}", e.get(k, 0)) for k in
            ("cities", "civ_cards", "groups")}))
    if not epochs:
        raise src.error(None, "no epochs")
    tracks: dict[str, AstTrack] = {}
    for t in data.get("tracks", []):
        nation = t.get("nation")
        line = src.line_of("nation", nation)
        if nation in tracks:
            raise src.error(line, f"duplicate track for {nation!r}")
        starts = [src.int_field(line, f"{nation}: epoch_starts", s, 1)
                  for s in t.get("epoch_starts", [])]
        if len(starts) != len(epochs):
            raise src.error(line, f"{nation}: {len(starts)} epoch starts for "
                                  f"{len(epochs)} epochs")
        if starts[0] != 1 or starts != sorted(set(starts)) or starts[-1] >= finish:
            raise src.error(line, f"{nation}: epoch starts {starts} must rise from 1 and "
                                  f"stay below the finish space {finish}")
        points = t.get("late_iron_points", {})
        for option, choices in t.get("alternatives", {}).items():
            if option not in RULESET_OPTIONS:
                raise src.error(line, f"{nation}: unknown option {option!r} in alternatives")
            for value in choices:
                if value not in RULESET_OPTIONS[option]:
                    raise src.error(line, f"{nation}: {option}={value!r} is not an allowed "
                                          "value")
            points = choices.get(options[option], points)
        thresholds = {}
        for space, need in points.items():
            s = src.int_field(line, f"{nation}: late_iron_points space", space, 1)
            if not starts[-1] <= s < finish:
                raise src.error(line, f"{nation}: late-iron threshold on space {s}, outside "
                                      f"the last epoch ({starts[-1]}..{finish - 1})")
            thresholds[s] = src.int_field(line, f"{nation}: points for space {s}", need, 1)
        tracks[nation] = AstTrack(
            epoch_starts=frozen({e.name: s for e, s in zip(epochs, starts)}),
            late_iron_points=frozen(dict(sorted(thresholds.items()))),
            points_per_space=per_space, finish_space=finish)
    return tuple(epochs), tracks


def read_nations(src: Source, areas: Mapping[str, Area],
                  tracks: Mapping[str, AstTrack]) -> dict[str, Nation]:
    nations: dict[str, Nation] = {}
    for line, r in src.rows(("nation", "ast_order", "start_areas")):
        name = r["nation"]
        if name in nations:
            raise src.error(line, f"duplicate nation {name!r}")
        starts = tuple(s.strip() for s in r["start_areas"].split(";") if s.strip())
        if not starts:
            raise src.error(line, f"{name}: no start area")
        for s in starts:
            if s not in areas:
                raise src.error(line, f"{name}: start area {s!r} does not exist")
            if areas[s].start_nation != name:
                raise src.error(line, f"{name}: start area {s} names "
                                      f"{areas[s].start_nation!r} in areas.csv")
        marked = {a.name for a in areas.values() if a.start_nation == name}
        if marked != set(starts):
            raise src.error(line, f"{name}: start areas differ from areas.csv "
                                  f"({', '.join(sorted(marked ^ set(starts)))})")
        if name not in tracks:
            raise src.error(line, f"{name}: no A.S.T. track in ast.json")
        nations[name] = Nation(
            name=name, ast_order=src.int_field(line, f"{name}: ast_order", r["ast_order"], 1),
            start_areas=starts, ast_track=tracks[name], colour=r.get("colour") or None,
            replaces=r.get("replaces") or None)
    for n in nations.values():
        if n.replaces and n.replaces not in nations:
            raise src.error(src.line_of("nation", n.name),
                            f"{n.name}: replaces unknown nation {n.replaces!r}")
    for a in areas.values():
        if a.start_nation and a.start_nation not in nations:
            raise src.error(None, f"areas.csv names start nation {a.start_nation!r} "
                                  f"(area {a.name}) that has no row here")
    return nations


def _place_nations(nations: Mapping[str, Nation], areas: Mapping[str, Area]
                   ) -> dict[str, Nation]:
    """Keep nations with a start area on the boards in use, in A.S.T. order."""
    out = {}
    for n in sorted(nations.values(), key=lambda n: (n.ast_order, n.replaces or "")):
        starts = tuple(s for s in n.start_areas if s in areas)
        if starts:
            out[n.name] = Nation(n.name, n.ast_order, starts, n.ast_track, n.colour,
                                 n.replaces)
    return out


def read_player_counts(src: Source, areas: Mapping[str, Area],
                        nations: Mapping[str, Nation], options: Mapping[str, str]
                        ) -> dict[int, PlayerCountSetup]:
    data = src.json()
    setups: dict[int, PlayerCountSetup] = {}
    for s in data.get("setups", []):
        players = s.get("players")
        line = src.line_of("players", players)
        players = src.int_field(line, "players", players, 1)
        if players in setups:
            raise src.error(line, f"duplicate set-up for {players} players")
        board = s.get("board", {})
        for option, choices in s.get("board_options", {}).items():
            if option not in RULESET_OPTIONS or set(choices) - set(RULESET_OPTIONS[option]):
                raise src.error(line, f"board_options: unknown option or value in {option!r}")
            board = choices.get(options[option], board)
        panels = set(board.get("panels", ("1", "2-3", "4")))
        side = board.get("divider_side")
        in_play = {a.name for a in areas.values() if a.board == "main"
                   and a.panel in panels and (side is None or a.divider_side == side)}
        extension = bool(s.get("western_extension")) and options["western-extension"] == "on"
        if extension:
            in_play |= {a.name for a in areas.values() if a.board == "western"}
        replaced = {n.replaces for n in nations.values()
                    if n.replaces and set(n.start_areas) & in_play} if extension else set()
        rule = s.get("nations")
        if rule in ("any", "with-start-area"):
            allowed = [n for n in nations if n not in replaced
                       and set(nations[n].start_areas) & in_play]
        elif isinstance(rule, list):
            unknown = [n for n in rule if n not in nations]
            if unknown:
                raise src.error(line, f"{players} players: unknown nation {unknown[0]!r}")
            allowed = [n for n in nations if n in rule]
        else:
            raise src.error(line, f"{players} players: nations must be a list, 'any' or "
                                  "'with-start-area'")
        starts = {n: tuple(a for a in nations[n].start_areas if a in in_play) for n in allowed}
        empty = [n for n, st in starts.items() if not st]
        if empty:
            raise src.error(line, f"{players} players: {empty[0]} has no start area in play")
        tokens = src.int_field(line, f"{players} players: tokens_per_player",
                               s.get("tokens_per_player"), 1)
        setups[players] = PlayerCountSetup(
            players=players, tokens_per_player=tokens, nations_allowed=tuple(allowed),
            areas_in_play=frozenset(in_play), start_areas=frozen(starts),
            island_city_sites_ignored=bool(s.get("island_city_sites_ignored")),
            note=s.get("note", ""))
    return dict(sorted(setups.items()))
