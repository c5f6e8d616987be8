"""The Advanced Civilization ruleset as data: frozen records and their loader.

Why a loader: every fact the engine needs about the game (board, nations,
A.S.T. tracks, civilization cards and credits, trade stacks, calamities, fixed
numbers) lives in project-owned files under ``data/advciv/``.  Code asks a
:class:`Ruleset` instead of carrying literals, so a corrected board or a house
map is a folder of files, not a code change (game option ``ruleset-data``).

Where the sources disagree, the files hold the recommended value and keep the
alternative; the ruleset options in :data:`RULESET_OPTIONS` choose between
them.  The loader refuses bad data with a :class:`RulesetError` naming the
file, the line and the problem, so a moderator can fix a house map alone.

Pure: standard library only, no clock, no randomness.
"""

from __future__ import annotations

import csv
import functools
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

__all__ = [
    "RULESET_OPTIONS",
    "Area",
    "AstTrack",
    "Calamity",
    "CivCard",
    "Commodity",
    "Effect",
    "EFFECT_KINDS",
    "Epoch",
    "Nation",
    "PlayerCountSetup",
    "Ruleset",
    "RulesetError",
    "TradeStack",
    "Water",
    "WaterLink",
    "load_ruleset",
]

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

CITY_SITES = ("none", "black", "white")
WATER_LINK_KINDS = ("coast-coast", "coast-sea", "sea-sea")
ROLES = ("primary", "secondary", "any")
_DISPUTABLE = ("population_limit", "city_site", "coastal", "flood_plain")


class RulesetError(ValueError):
    """Bad ruleset data; the message names the file, the line and the problem."""


# --------------------------------------------------------------------------
# Records


def _frozen(mapping: Mapping[Any, Any]) -> Mapping[Any, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Area:
    """A land area of the board (rule 4.2)."""

    name: str
    board: str                      # "main" or "western"
    population_limit: int
    city_site: str                  # "none", "black" (safe from Flood), "white"
    flood_plain: bool
    flood_plain_group: str | None   # connected flood-plain areas share a label
    volcano: str | None             # Thera, Vesuvius or Etna when one touches it
    coastal: bool                   # rule 4.24: sea coast, lakes excluded
    island: str | None              # island group, None on the two mainlands
    start_nation: str | None
    panel: str                      # "1", "2-3", "4" or "W"
    divider_side: str               # "W" or "E" of the dotted divider (4.7)
    disputed: Mapping[str, Mapping[str, str]]  # field -> source -> value

    @property
    def has_city_site(self) -> bool:
        return self.city_site != "none"


@dataclass(frozen=True)
class Water:
    """An all-water area; ``open_sea`` is the value chosen by option ``open-sea``."""

    name: str
    board: str
    open_sea: bool
    open_sea_vassal: bool
    open_sea_literal: bool
    note: str


@dataclass(frozen=True)
class WaterLink:
    """One undirected water boundary a ship can cross."""

    a: str
    b: str
    kind: str        # coast-coast, coast-sea or sea-sea
    confidence: str  # confirmed or single-source


@dataclass(frozen=True)
class Epoch:
    """An A.S.T. epoch and what it takes to step into it (rule 33.2)."""

    name: str
    cities: int
    civ_cards: int
    groups: int


@dataclass(frozen=True)
class AstTrack:
    """One nation's row of the A.S.T.: where each epoch starts, and points."""

    epoch_starts: Mapping[str, int]      # epoch name -> first space
    late_iron_points: Mapping[int, int]  # space -> civ-card points to enter
    points_per_space: int
    finish_space: int

    def epoch_at(self, space: int) -> str:
        """The epoch a space belongs to (space 0, the start arrow, is Stone Age)."""
        current = next(iter(self.epoch_starts))
        for name, first in self.epoch_starts.items():
            if space >= first:
                current = name
        return current


@dataclass(frozen=True)
class Nation:
    """A nation (set of pieces) with its A.S.T. row and start areas."""

    name: str
    ast_order: int
    start_areas: tuple[str, ...]
    ast_track: AstTrack
    colour: str | None
    replaces: str | None   # Iberia replaces Italy with the Western Extension


@dataclass(frozen=True)
class PlayerCountSetup:
    """Board, tokens and nations for one player count (rule 16)."""

    players: int
    tokens_per_player: int
    nations_allowed: tuple[str, ...]
    areas_in_play: frozenset[str]
    start_areas: Mapping[str, tuple[str, ...]]  # allowed nation -> in-play starts
    island_city_sites_ignored: bool
    note: str


@dataclass(frozen=True)
class Effect:
    """A machine-readable card ability; vocabulary in :data:`EFFECT_KINDS`."""

    kind: str
    params: Mapping[str, Any]

    def get(self, key: str, default: Any = None) -> Any:
        return self.params.get(key, default)

    @property
    def calamity(self) -> str | None:
        return self.params.get("calamity")


@dataclass(frozen=True)
class CivCard:
    """A civilization card (rule 32); ``credits`` are given toward other cards."""

    name: str
    cost: int
    groups: tuple[str, ...]
    prerequisite: str | None
    credits: Mapping[str, int]
    effects: tuple[Effect, ...]
    summary: str

    def effects_of(self, kind: str) -> tuple[Effect, ...]:
        return tuple(e for e in self.effects if e.kind == kind)


@dataclass(frozen=True)
class Commodity:
    name: str
    value: int
    copies: int

    def set_value(self, count: int) -> int:
        """n identical cards are worth n * n * value, capped at the copy count."""
        n = max(0, min(count, self.copies))
        return n * n * self.value


@dataclass(frozen=True)
class TradeStack:
    number: int
    commodities: tuple[Commodity, ...]
    non_tradable_calamity: str | None
    tradable_calamity: str | None

    @property
    def card_count(self) -> int:
        calamities = (self.non_tradable_calamity, self.tradable_calamity)
        return sum(c.copies for c in self.commodities) + sum(1 for c in calamities if c)


@dataclass(frozen=True)
class Calamity:
    """A calamity (rule 30) with its printed numbers and the cards that change it."""

    name: str
    stack: int
    tradable: bool
    order: int                      # resolution order, 1..12 (rule 29.6)
    primary: Mapping[str, int]
    secondary: Mapping[str, int]
    derived: Mapping[str, str]      # further quantities a card effect may change
    favourable: tuple[str, ...]     # quantities the victim wants larger
    immune_nations: tuple[str, ...]
    reduced_by: tuple[str, ...]
    aggravated_by: tuple[str, ...]
    summary: str


@dataclass(frozen=True, eq=False)
class Ruleset:
    """Everything the engine knows about the game, loaded from data files.

    Compared and hashed by identity, so it can key caches.
    """

    name: str
    title: str
    data_dir: str
    options: Mapping[str, str]
    areas: Mapping[str, Area]
    waters: Mapping[str, Water]
    land_adjacency: Mapping[str, frozenset[str]]
    water_links: Mapping[str, frozenset[str]]   # ship graph: coasts and seas
    coast_links: Mapping[str, frozenset[str]]   # coast-coast water boundaries only
    water_link_records: tuple[WaterLink, ...]
    aliases: Mapping[str, str]
    nations: Mapping[str, Nation]
    epochs: tuple[Epoch, ...]
    player_counts: Mapping[int, PlayerCountSetup]
    civ_card_groups: tuple[str, ...]
    civ_cards: Mapping[str, CivCard]
    stacks: tuple[TradeStack, ...]
    calamities: Mapping[str, Calamity]
    gold_ivory_price: int
    purchase_stack: int
    cities_per_nation: int
    ships_per_nation: int
    tokens_per_nation: int
    hand_limit: int
    civ_card_copies: int
    numbers: Mapping[str, int]

    def area_names(self) -> tuple[str, ...]:
        """Land area names, sorted."""
        return tuple(sorted(self.areas))

    def credit(self, owned: str, buying: str) -> int:
        """Credit that owning ``owned`` gives toward buying ``buying`` (rule 31.5)."""
        for card in (owned, buying):
            if card not in self.civ_cards:
                raise KeyError(f"unknown civilization card {card!r}")
        return self.civ_cards[owned].credits.get(buying, 0)

    def setup_for(self, players: int) -> PlayerCountSetup:
        """The rule-16 set-up for a player count."""
        try:
            return self.player_counts[players]
        except KeyError:
            counts = ", ".join(str(n) for n in sorted(self.player_counts))
            raise ValueError(f"no set-up for {players} players (known: {counts})") from None

    def commodity(self, name: str) -> Commodity:
        for stack in self.stacks:
            for c in stack.commodities:
                if c.name == name:
                    return c
        raise KeyError(f"unknown commodity {name!r}")

    def stack_of(self, card: str) -> TradeStack:
        """The stack holding a commodity or calamity card."""
        for stack in self.stacks:
            names = [c.name for c in stack.commodities]
            names += [stack.non_tradable_calamity, stack.tradable_calamity]
            if card in names:
                return stack
        raise KeyError(f"unknown trade card {card!r}")

    def calamity_order(self) -> tuple[str, ...]:
        """Calamity names in resolution order (rule 29.6)."""
        return tuple(sorted(self.calamities, key=lambda n: self.calamities[n].order))


# --------------------------------------------------------------------------
# Effect vocabulary: kind -> {parameter: checker}.  A parameter ending in "?"
# is optional.  Checkers receive the value and the names known so far.

_Names = Mapping[str, frozenset[str]]
_Checker = Callable[[Any, _Names], str | None]


def _is_int(v: Any, _: _Names) -> str | None:
    return None if isinstance(v, int) and not isinstance(v, bool) else "must be a whole number"


def _is_pos_int(v: Any, n: _Names) -> str | None:
    return _is_int(v, n) or (None if v > 0 else "must be positive")


def _is_int_list(v: Any, n: _Names) -> str | None:
    ok = isinstance(v, list) and v and all(_is_pos_int(x, n) is None for x in v)
    return None if ok else "must be a list of positive whole numbers"


def _is_str(v: Any, _: _Names) -> str | None:
    return None if isinstance(v, str) and v else "must be a text"


def _is_role(v: Any, _: _Names) -> str | None:
    return None if v in ROLES else f"must be one of {', '.join(ROLES)}"


def _name_in(kind: str) -> _Checker:
    def check(v: Any, names: _Names) -> str | None:
        return None if v in names[kind] else f"unknown {kind[:-1]} {v!r}"
    return check


def _names_in(kind: str) -> _Checker:
    def check(v: Any, names: _Names) -> str | None:
        if not isinstance(v, list) or not v:
            return f"must be a list of {kind}"
        bad = [x for x in v if x not in names[kind]]
        return f"unknown {kind[:-1]} {bad[0]!r}" if bad else None
    return check


_CALAMITY = _name_in("calamities")

#: The card-effect vocabulary (documented in docs/rules-data.md).
EFFECT_KINDS: Mapping[str, Mapping[str, _Checker]] = MappingProxyType({
    "ship-range": {"value": _is_pos_int},
    "open-sea-passage": {},
    "tax-rate-choice": {"values": _is_int_list},
    "tax-revolt-immunity": {},
    "conflict-removes-last": {},
    "population-limit-bonus": {"value": _is_pos_int, "where": _is_str},
    "city-reduction-bonus": {"value": _is_pos_int},
    "land-move-range": {"value": _is_pos_int, "pass_through": _is_str},
    "set-value-bonus": {"cards": _is_pos_int, "per_turn": _is_pos_int,
                        "commodities": _names_in("commodities")},
    "city-attack": {"role": lambda v, _: None if v in ("attacker", "defender")
                    else "must be attacker or defender",
                    "threshold": _is_pos_int, "replacement_tokens": _is_pos_int},
    "city-build-from-treasury": {"max_percent": _is_pos_int, "per_turn": _is_pos_int},
    "acts-last": {"steps": lambda v, _: None if isinstance(v, list) and v
                  and all(isinstance(s, str) for s in v) else "must be a list of steps"},
    "conversion": {"per_turn": _is_pos_int, "reach": _is_str,
                   "blocked_by": _names_in("cards")},
    "conversion-immunity": {},
    "calamity-modifier": {"calamity": _CALAMITY, "role": _is_role, "quantity": _is_str,
                          "delta": _is_int, "per?": _name_in("commodities")},
    "calamity-override": {"calamity": _CALAMITY, "role": _is_role, "quantity": _is_str,
                          "value": _is_int},
    "calamity-cap": {"calamity": _CALAMITY, "role": _is_role, "quantity": _is_str,
                     "value": _is_int},
    "calamity-immunity": {"calamity": _CALAMITY, "role": _is_role, "part?": _is_str},
    "calamity-downgrade": {"calamity": _CALAMITY, "role": _is_role, "part?": _is_str,
                           "from": _is_str, "to": _is_str},
    "calamity-rule": {"calamity": _CALAMITY, "role": _is_role, "rule": _is_str,
                      "value?": _is_int},
})


# --------------------------------------------------------------------------
# Reading files


class _Source:
    """One data file: reading it and turning problems into RulesetErrors."""

    def __init__(self, folder: Path, filename: str) -> None:
        self.filename = filename
        self.path = folder / filename
        try:
            self.text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise RulesetError(f"{filename}: file missing in {folder}") from None

    def error(self, line: int | None, problem: str) -> RulesetError:
        where = f"{self.filename}, line {line}" if line else self.filename
        return RulesetError(f"{where}: {problem}")

    def rows(self, columns: Iterable[str]) -> list[tuple[int, dict[str, str]]]:
        reader = csv.DictReader(self.text.splitlines())
        missing = [c for c in columns if c not in (reader.fieldnames or [])]
        if missing:
            raise self.error(1, f"missing column(s) {', '.join(missing)}")
        out = []
        for row in reader:
            if not any((v or "").strip() for v in row.values()):
                continue
            clean = {k: (v or "").strip() for k, v in row.items() if k is not None}
            out.append((reader.line_num, clean))
        return out

    def json(self) -> Any:
        try:
            return json.loads(self.text)
        except json.JSONDecodeError as exc:
            raise self.error(exc.lineno, f"not valid JSON: {exc.msg}") from None

    def line_of(self, key: str, value: Any) -> int | None:
        """Line where ``"key": value`` appears, to point at a JSON entry."""
        pattern = re.escape(json.dumps(key)) + r"\s*:\s*" + re.escape(json.dumps(value))
        m = re.search(pattern, self.text)
        return self.text.count("\n", 0, m.start()) + 1 if m else None

    def int_field(self, line: int | None, label: str, raw: Any, minimum: int = 0) -> int:
        try:
            value = int(raw) if not isinstance(raw, bool) else None
        except (TypeError, ValueError):
            value = None
        if value is None or (isinstance(raw, float) and raw != value):
            raise self.error(line, f"{label}: bad number {raw!r}")
        if value < minimum:
            raise self.error(line, f"{label}: {value} is below {minimum}")
        return value


def _flag(src: _Source, line: int, label: str, raw: str) -> bool:
    if raw not in ("0", "1"):
        raise src.error(line, f"{label}: expected 0 or 1, got {raw!r}")
    return raw == "1"


def _parse_disputed(src: _Source, line: int, raw: str) -> dict[str, dict[str, str]]:
    """``field: src=value src=value (note); field: ...`` -> {field: {src: value}}."""
    out: dict[str, dict[str, str]] = {}
    for entry in filter(None, (e.strip() for e in raw.split("; "))):
        field, sep, rest = entry.partition(":")
        if not sep:
            raise src.error(line, f"disputed: entry {entry!r} has no 'field:'")
        rest = re.sub(r"\([^)]*\)\s*$", "", rest.strip()).strip()
        votes = dict(tok.split("=", 1) for tok in rest.split() if "=" in tok)
        out[field.strip()] = votes
    return out


# --------------------------------------------------------------------------
# The loader


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
    constants = _read_constants(_Source(folder, "constants.json"))
    areas = _read_areas(_Source(folder, "areas.csv"))
    waters = _read_waters(_Source(folder, "water.csv"), options["open-sea"])
    land_pairs = _read_links(_Source(folder, "land_adjacency.csv"), areas, waters, land=True)
    water_records = _read_links(_Source(folder, "water_adjacency.csv"), areas, waters,
                                land=False)
    epochs, tracks = _read_ast(_Source(folder, "ast.json"), options)
    nations = _read_nations(_Source(folder, "nations.csv"), areas, tracks)
    stacks, price, purchase_stack = _read_stacks(_Source(folder, "trade_stacks.json"))
    calamities = _read_calamities(_Source(folder, "calamities.json"), stacks)
    names = {
        "calamities": frozenset(calamities),
        "commodities": frozenset(c.name for s in stacks for c in s.commodities),
    }
    groups, cards = _read_cards(_Source(folder, "civ_cards.json"),
                                _Source(folder, "civ_card_credits.csv"), names)
    _cross_check_calamities(_Source(folder, "calamities.json"), calamities, cards)
    aliases = _read_aliases(folder)

    # Options that choose among recorded alternatives.
    areas = _apply_disputed(areas, options["disputed-areas"])
    if options["water-links"] == "confirmed":
        water_records = [w for w in water_records if w.confidence == "confirmed"]
    boards = {"main", "western"} if options["western-extension"] == "on" else {"main"}
    areas = {n: a for n, a in areas.items() if a.board in boards}
    waters = {n: w for n, w in waters.items() if w.board in boards}
    known = set(areas) | set(waters)
    land_pairs = [p for p in land_pairs if p.a in known and p.b in known]
    water_records = [w for w in water_records if w.a in known and w.b in known]
    nations = _place_nations(nations, areas)
    setups = _read_player_counts(_Source(folder, "player_counts.json"), areas, nations,
                                 options)

    land_adj = _graph(areas, land_pairs)
    water_graph = _graph(list(areas) + list(waters), water_records)
    coast_graph = _graph(areas, [w for w in water_records if w.kind == "coast-coast"])
    return Ruleset(
        name=constants["name"], title=constants.get("title", constants["name"]),
        data_dir=str(folder), options=_frozen(options),
        areas=_frozen(dict(sorted(areas.items()))),
        waters=_frozen(dict(sorted(waters.items()))),
        land_adjacency=land_adj, water_links=water_graph, coast_links=coast_graph,
        water_link_records=tuple(water_records),
        aliases=_frozen({a: n for a, n in aliases.items() if n in known}),
        nations=_frozen(nations), epochs=epochs, player_counts=_frozen(setups),
        civ_card_groups=groups, civ_cards=_frozen(cards), stacks=tuple(stacks),
        calamities=_frozen(calamities), gold_ivory_price=price,
        purchase_stack=purchase_stack,
        cities_per_nation=constants["cities_per_nation"],
        ships_per_nation=constants["ships_per_nation"],
        tokens_per_nation=constants["tokens_per_nation"],
        hand_limit=constants["hand_limit"],
        civ_card_copies=constants["civ_card_copies"],
        numbers=_frozen(constants["numbers"]),
    )


def _graph(nodes: Iterable[str], links: Iterable[WaterLink]) -> Mapping[str, frozenset[str]]:
    graph: dict[str, set[str]] = {n: set() for n in nodes}
    for link in links:
        graph.setdefault(link.a, set()).add(link.b)
        graph.setdefault(link.b, set()).add(link.a)
    return _frozen({n: frozenset(v) for n, v in sorted(graph.items())})


def _read_constants(src: _Source) -> dict[str, Any]:
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


_AREA_COLUMNS = ("name", "board", "population_limit", "city_site", "flood_plain",
                 "flood_plain_group", "volcano", "coastal", "island", "start_nation",
                 "panel", "divider_side", "disputed")


def _read_areas(src: _Source) -> dict[str, Area]:
    areas: dict[str, Area] = {}
    for line, r in src.rows(_AREA_COLUMNS):
        name = r["name"]
        if not name:
            raise src.error(line, "area without a name")
        if name in areas:
            raise src.error(line, f"duplicate area {name!r}")
        if r["board"] not in ("main", "western"):
            raise src.error(line, f"{name}: board {r['board']!r} is not main or western")
        if r["city_site"] not in CITY_SITES:
            raise src.error(line, f"{name}: city_site {r['city_site']!r} is not one of "
                                  f"{', '.join(CITY_SITES)}")
        if r["panel"] not in ("1", "2-3", "4", "W"):
            raise src.error(line, f"{name}: panel {r['panel']!r} is not 1, 2-3, 4 or W")
        if r["divider_side"] not in ("W", "E"):
            raise src.error(line, f"{name}: divider_side {r['divider_side']!r} is not W or E")
        flood = _flag(src, line, f"{name}: flood_plain", r["flood_plain"])
        if flood != bool(r["flood_plain_group"]):
            raise src.error(line, f"{name}: flood_plain and flood_plain_group disagree")
        if r["city_site"] == "white" and not flood:
            raise src.error(line, f"{name}: white city site outside a flood plain")
        areas[name] = Area(
            name=name, board=r["board"],
            population_limit=src.int_field(line, f"{name}: population_limit",
                                           r["population_limit"]),
            city_site=r["city_site"], flood_plain=flood,
            flood_plain_group=r["flood_plain_group"] or None,
            volcano=r["volcano"] or None,
            coastal=_flag(src, line, f"{name}: coastal", r["coastal"]),
            island=r["island"] or None, start_nation=r["start_nation"] or None,
            panel=r["panel"], divider_side=r["divider_side"],
            disputed=_frozen({f: _frozen(v) for f, v in
                              _parse_disputed(src, line, r["disputed"]).items()}),
        )
    if not areas:
        raise src.error(None, "no land areas")
    return areas


def _read_waters(src: _Source, reading: str) -> dict[str, Water]:
    waters: dict[str, Water] = {}
    for line, r in src.rows(("name", "board", "open_sea_vassal", "open_sea_literal")):
        name = r["name"]
        if name in waters:
            raise src.error(line, f"duplicate water area {name!r}")
        if r["board"] not in ("main", "western"):
            raise src.error(line, f"{name}: board {r['board']!r} is not main or western")
        vassal = _flag(src, line, f"{name}: open_sea_vassal", r["open_sea_vassal"])
        literal = _flag(src, line, f"{name}: open_sea_literal", r["open_sea_literal"])
        waters[name] = Water(name=name, board=r["board"],
                             open_sea=literal if reading == "literal" else vassal,
                             open_sea_vassal=vassal, open_sea_literal=literal,
                             note=r.get("note", ""))
    return waters


def _read_links(src: _Source, areas: Mapping[str, Area], waters: Mapping[str, Water],
                land: bool) -> list[WaterLink]:
    """Read an adjacency file.

    A border may be written once (either order) or in both directions; a file
    that writes any border both ways must write every border both ways.
    """
    columns = ("a", "b") if land else ("a", "b", "kind", "confidence")
    seen: dict[tuple[str, str], int] = {}
    out: list[WaterLink] = []
    for line, r in src.rows(columns):
        a, b = r["a"], r["b"]
        for end, other in ((a, b), (b, a)):
            if end in areas or (not land and end in waters):
                continue
            what = "water area" if end in waters else "area"
            raise src.error(line, f"unknown {'land area' if land else what} {end!r} "
                                  f"(neighbour of {other!r})")
        if a == b:
            raise src.error(line, f"self-link {a!r}")
        if (a, b) in seen:
            raise src.error(line, f"duplicate link {a} / {b} (first at line {seen[(a, b)]})")
        seen[(a, b)] = line
        if (b, a) in seen:
            continue   # the reverse of a border already read
        kind, confidence = "land", "confirmed"
        if not land:
            kind, confidence = r["kind"], r["confidence"]
            n_land = (a in areas) + (b in areas)
            want = {"coast-coast": 2, "coast-sea": 1, "sea-sea": 0}.get(kind)
            if want is None:
                raise src.error(line, f"{a} / {b}: kind {kind!r} is not one of "
                                      f"{', '.join(WATER_LINK_KINDS)}")
            if n_land != want:
                raise src.error(line, f"{a} / {b}: kind {kind} needs {want} land end(s), "
                                      f"has {n_land}")
            if confidence not in ("confirmed", "single-source"):
                raise src.error(line, f"{a} / {b}: confidence {confidence!r} is not "
                                      "confirmed or single-source")
            for end in (a, b):
                if end in areas and not areas[end].coastal:
                    raise src.error(line, f"{a} / {b}: {end} is not coastal in areas.csv")
        out.append(WaterLink(a=a, b=b, kind=kind, confidence=confidence))
    two_way = any((b, a) in seen for (a, b) in seen)
    if two_way:
        for (a, b), line in seen.items():
            if (b, a) not in seen:
                raise src.error(line, f"asymmetric link {a} -> {b}: the file lists borders "
                                      f"in both directions but not {b} -> {a}")
    return out


def _read_ast(src: _Source, options: Mapping[str, str]
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
            epoch_starts=_frozen({e.name: s for e, s in zip(epochs, starts)}),
            late_iron_points=_frozen(dict(sorted(thresholds.items()))),
            points_per_space=per_space, finish_space=finish)
    return tuple(epochs), tracks


def _read_nations(src: _Source, areas: Mapping[str, Area],
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


def _read_player_counts(src: _Source, areas: Mapping[str, Area],
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
            areas_in_play=frozenset(in_play), start_areas=_frozen(starts),
            island_city_sites_ignored=bool(s.get("island_city_sites_ignored")),
            note=s.get("note", ""))
    return dict(sorted(setups.items()))


def _read_stacks(src: _Source) -> tuple[list[TradeStack], int, int]:
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


def _read_calamities(src: _Source, stacks: list[TradeStack]) -> dict[str, Calamity]:
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
            primary=_frozen({k: int(v) for k, v in c.get("primary", {}).items()}),
            secondary=_frozen({k: int(v) for k, v in c.get("secondary", {}).items()}),
            derived=_frozen(c.get("derived", {})),
            favourable=tuple(c.get("favourable", ())),
            immune_nations=tuple(c.get("immune_nations", ())),
            reduced_by=tuple(c.get("reduced_by", ())),
            aggravated_by=tuple(c.get("aggravated_by", ())),
            summary=c.get("summary", ""))
    return out


def _read_cards(src: _Source, credit_src: _Source, names: _Names
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
    credits = _read_credits(credit_src, frozenset(entries))
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
        effects = tuple(_read_effect(src, line, name, e, all_names)
                        for e in c.get("effects", ()))
        cards[name] = CivCard(name=name, cost=cost, groups=card_groups, prerequisite=prereq,
                              credits=_frozen(credits.get(name, {})), effects=effects,
                              summary=c.get("summary", ""))
    return groups, cards


def _read_effect(src: _Source, line: int | None, card: str, raw: Any,
                 names: _Names) -> Effect:
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
    return Effect(kind=kind, params=_frozen(params))


def _read_credits(src: _Source, cards: frozenset[str]) -> dict[str, dict[str, int]]:
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


def _cross_check_calamities(src: _Source, calamities: Mapping[str, Calamity],
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


def _read_aliases(folder: Path) -> dict[str, str]:
    """Optional aliases.csv: other spellings players may type (Rome -> Roma)."""
    if not (folder / "aliases.csv").exists():
        return {}
    src = _Source(folder, "aliases.csv")
    return {r["alias"]: r["name"] for _, r in src.rows(("alias", "name"))}


def _apply_disputed(areas: Mapping[str, Area], source: str) -> dict[str, Area]:
    """Replace disputed values by one source's reading (option ``disputed-areas``)."""
    if source == "majority":
        return dict(areas)
    out = {}
    for name, area in areas.items():
        changes: dict[str, Any] = {}
        for field, votes in area.disputed.items():
            if field not in _DISPUTABLE:
                continue
            raw = next((v for k, v in votes.items() if k == source
                        or k.startswith(source + "-")), None)
            if raw is None:
                continue
            raw = re.sub(r"\(.*\)$", "", raw)
            if field == "population_limit" and raw.isdigit():
                changes[field] = int(raw)
            elif field == "city_site" and raw in CITY_SITES:
                changes[field] = raw
            elif field in ("coastal", "flood_plain") and raw in ("0", "1"):
                changes[field] = raw == "1"
        if "flood_plain" in changes:
            group = area.flood_plain_group or area.name
            changes["flood_plain_group"] = group if changes["flood_plain"] else None
        out[name] = replace(area, **changes) if changes else area
    return out
