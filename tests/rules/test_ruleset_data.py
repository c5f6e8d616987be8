"""Cross-checks of the packaged ruleset against the shared fact sources, and
tests of the validator on broken copies of the data."""

from __future__ import annotations

import collections
import csv
import json
import shutil
from pathlib import Path

import pytest

from pbem.rules.ruleset.loader import PACKAGED_DATA, RULESET_OPTIONS, load_ruleset
from pbem.rules.ruleset.model import Ruleset, RulesetError


@pytest.fixture(scope="module")
def r() -> Ruleset:
    return load_ruleset()


@pytest.fixture(scope="module")
def west() -> Ruleset:
    return load_ruleset(overrides={"western-extension": "on"})


def _pairs(graph) -> set[frozenset[str]]:
    return {frozenset((a, b)) for a, ns in graph.items() for b in ns}


# --- board: CSV README summary figures ------------------------------------

def test_land_area_counts_per_board(west: Ruleset, r: Ruleset) -> None:
    boards = collections.Counter(a.board for a in west.areas.values())
    assert boards == {"main": 123, "western": 26}
    assert len(r.areas) == 123 and all(a.board == "main" for a in r.areas.values())


def test_population_capacity_and_city_sites(west: Ruleset) -> None:
    main = [a for a in west.areas.values() if a.board == "main"]
    wext = [a for a in west.areas.values() if a.board == "western"]
    assert sum(a.population_limit for a in main) == 250
    assert sum(a.population_limit for a in wext) == 41
    assert collections.Counter(a.population_limit for a in main) == {1: 43, 2: 45, 3: 26,
                                                                     4: 6, 5: 3}
    assert sum(a.has_city_site for a in main) == 55
    assert sum(a.city_site == "white" for a in main) == 8
    assert sum(a.has_city_site for a in wext) == 6
    assert sum(a.city_site == "white" for a in wext) == 1
    assert sum(bool(a.disputed) for a in west.areas.values()) == 23


def test_water_areas_and_link_counts(west: Ruleset, r: Ruleset) -> None:
    assert len(west.waters) == 10 and len(r.waters) == 9
    assert len(_pairs(west.land_adjacency)) == 279
    kinds = collections.Counter(w.kind for w in west.water_link_records)
    assert kinds == {"coast-coast": 148, "coast-sea": 96, "sea-sea": 1}
    assert sum(w.confidence == "single-source" for w in west.water_link_records) == 9
    assert len(_pairs(west.water_links)) == 245
    assert len(_pairs(west.coast_links)) == 148


@pytest.mark.parametrize("graph", ["land_adjacency", "water_links", "coast_links"])
def test_graphs_symmetric_no_self_links_known_nodes(west: Ruleset, graph: str) -> None:
    g = getattr(west, graph)
    known = set(west.areas) | set(west.waters)
    for a, ns in g.items():
        assert a in known and a not in ns
        for b in ns:
            assert b in known and a in g[b]


def test_land_links_match_shared_csv(west: Ruleset) -> None:
    shared = Path(__file__).resolve().parents[3] / "shared" / "data" / "advciv" / "land_adjacency.csv"  # ../shared
    if not shared.exists():
        pytest.skip("shared source data not present")
    with shared.open(newline="") as fh:
        pairs = {frozenset((row["a"], row["b"])) for row in csv.DictReader(fh)}
    assert _pairs(west.land_adjacency) == pairs


def test_known_neighbours(r: Ruleset) -> None:
    assert r.land_adjacency["Sinai"] == {"Eastern Desert", "Gaza", "Jerusalem", "Petra",
                                         "Tanis"}
    assert "Kuban" not in r.land_adjacency["Scythia"]          # strait, not land
    assert "Red Sea" in r.water_links["Nubia"]
    assert r.water_links["Central Mediterranean"] >= {"Eastern Mediterranean", "Ithaka"}
    assert r.areas["Thera"].volcano == "Thera"
    assert r.areas["Knossos"].island == "Crete"


def test_start_areas_exist_and_name_their_nation(west: Ruleset) -> None:
    for ruleset in (west, load_ruleset()):
        for nation in ruleset.nations.values():
            assert nation.start_areas
            for area in nation.start_areas:
                assert ruleset.areas[area].start_nation == nation.name
    assert load_ruleset().nations["Thrace"].start_areas == ("Scythia",)


def test_nations_and_ast_order(r: Ruleset, west: Ruleset) -> None:
    assert list(r.nations) == ["Africa", "Italy", "Illyria", "Thrace", "Crete", "Asia",
                               "Assyria", "Babylon", "Egypt"]
    assert [n.ast_order for n in r.nations.values()] == list(range(1, 10))
    assert "Iberia" in west.nations and west.nations["Iberia"].replaces == "Italy"
    assert "Cirta" in west.nations["Africa"].start_areas
    assert "Cirta" not in r.nations["Africa"].start_areas


def test_open_sea_options() -> None:
    vassal = load_ruleset()
    literal = load_ruleset(overrides={"open-sea": "literal"})
    assert {w.name for w in vassal.waters.values() if w.open_sea} == {
        "Central Mediterranean", "Eastern Mediterranean", "Western Mediterranean"}
    assert all(w.open_sea for w in literal.waters.values())
    assert not vassal.waters["Aegean Sea"].open_sea and vassal.waters["Aegean Sea"].open_sea_literal


def test_disputed_area_option() -> None:
    majority, jc = load_ruleset(), load_ruleset(overrides={"disputed-areas": "jc"})
    assert majority.areas["Siwa"].population_limit == 1
    assert jc.areas["Siwa"].population_limit == 2
    assert majority.areas["Parthia"].city_site == "none"
    assert jc.areas["Parthia"].city_site == "black"
    assert majority.areas["Siwa"].disputed["population_limit"] == {"jc": "2", "ng": "1",
                                                                   "lv": "1"}


def test_confirmed_water_links_option() -> None:
    confirmed = load_ruleset(overrides={"water-links": "confirmed"})
    assert all(w.confidence == "confirmed" for w in confirmed.water_link_records)
    assert "Petra" not in confirmed.water_links["Sinai"]
    assert "Petra" in load_ruleset().water_links["Sinai"]


def test_bad_option_value_refused() -> None:
    with pytest.raises(RulesetError, match="open-sea"):
        load_ruleset(overrides={"open-sea": "maybe"})
    # unrelated game options are ignored
    assert load_ruleset(overrides={"beneficiary-rule": "1991"}).name == "advciv-1991"


def test_options_table_defaults_first() -> None:
    assert RULESET_OPTIONS["open-sea"][0] == "vassal"
    assert RULESET_OPTIONS["western-extension"] == ("off", "on")
    assert load_ruleset().options == {k: v[0] for k, v in RULESET_OPTIONS.items()}


def test_packaged_default_is_cached() -> None:
    assert load_ruleset() is load_ruleset()
    assert load_ruleset(overrides={"open-sea": "literal"}) is not load_ruleset()


# --- player counts (fact sheet 1.1) -----------------------------------------

def test_player_count_table(r: Ruleset) -> None:
    tokens = {n: r.setup_for(n).tokens_per_player for n in range(2, 9)}
    assert tokens == {2: 55, 3: 47, 4: 55, 5: 47, 6: 55, 7: 55, 8: 47}
    west_side = {a.name for a in r.areas.values() if a.divider_side == "W"}
    assert r.setup_for(3).areas_in_play == west_side
    assert r.setup_for(2).areas_in_play == west_side
    assert r.setup_for(4).areas_in_play == set(r.areas) - west_side
    assert r.setup_for(8).areas_in_play == set(r.areas)
    assert r.setup_for(3).nations_allowed == ("Africa", "Italy", "Illyria", "Thrace", "Crete")
    assert r.setup_for(2).nations_allowed == ("Africa", "Italy", "Illyria", "Thrace")
    assert set(r.setup_for(4).nations_allowed) == {"Egypt", "Babylon", "Assyria", "Asia"}
    assert r.setup_for(2).island_city_sites_ignored
    assert not r.setup_for(3).island_city_sites_ignored
    assert len(r.setup_for(7).nations_allowed) == 9
    five = r.setup_for(5)
    assert not any(r.areas[a].panel == "4" for a in five.areas_in_play)
    assert "Babylon" not in five.nations_allowed
    with pytest.raises(ValueError):
        r.setup_for(9)


def test_western_extension_setups(west: Ruleset) -> None:
    seven = west.setup_for(7)
    assert len(seven.areas_in_play) == 149
    assert "Iberia" in seven.nations_allowed and "Italy" not in seven.nations_allowed
    assert "Italy" in west.setup_for(3).nations_allowed
    assert seven.start_areas["Africa"] == ("Cirta", "Sahara", "Tripolitania", "Tunisia")


# --- civilization cards and credits (fact sheet 3) ---------------------------

def test_cards_costs_and_groups(r: Ruleset) -> None:
    assert len(r.civ_cards) == 24
    assert sum(c.cost for c in r.civ_cards.values()) == 3190
    costs = {"Pottery": 45, "Cloth Making": 45, "Metalworking": 80, "Agriculture": 110,
             "Engineering": 140, "Astronomy": 80, "Mathematics": 230, "Mysticism": 50,
             "Law": 170, "Philosophy": 240, "Monotheism": 220, "Theology": 250}
    for name, cost in costs.items():
        assert r.civ_cards[name].cost == cost
    dual = {n for n, c in r.civ_cards.items() if len(c.groups) == 2}
    assert dual == {"Engineering", "Mathematics", "Literacy", "Mysticism"}
    prereq = {n: c.prerequisite for n, c in r.civ_cards.items() if c.prerequisite}
    assert prereq == {"Roadbuilding": "Engineering", "Mining": "Engineering",
                      "Democracy": "Law", "Philosophy": "Law",
                      "Monotheism": "Enlightenment", "Theology": "Enlightenment"}
    assert r.civ_card_copies == 8


@pytest.mark.parametrize("owned,buying,credit", [
    ("Engineering", "Astronomy", 20), ("Literacy", "Law", 25),
    ("Metalworking", "Military", 20), ("Pottery", "Democracy", 10),
    ("Mathematics", "Philosophy", 25), ("Mysticism", "Deism", 15),
    ("Drama & Poetry", "Literacy", 20), ("Music", "Mathematics", 20),
    ("Architecture", "Law", 15), ("Enlightenment", "Theology", 15),
    ("Law", "Democracy", 0), ("Astronomy", "Pottery", 0), ("Theology", "Monotheism", 0),
    ("Deism", "Mysticism", 0),
])
def test_credit_spot_checks(r: Ruleset, owned: str, buying: str, credit: int) -> None:
    assert r.credit(owned, buying) == credit


def test_credit_column_totals(r: Ruleset) -> None:
    """The fact sheet's 'max credit receivable' row."""
    expected = dict(zip(r.civ_cards, [60, 60, 60, 60, 60, 60, 120, 80, 80, 80, 120, 25, 25,
                                      25, 40, 55, 125, 20, 150, 25, 15, 80, 115, 150]))
    for buying, total in expected.items():
        assert sum(r.credit(o, buying) for o in r.civ_cards) == total, buying


def test_credit_examples_e8_e11(r: Ruleset) -> None:
    assert r.credit("Astronomy", "Coinage") == r.credit("Astronomy", "Medicine") == 20
    assert sum(r.credit(c, "Democracy") for c in
               ("Drama & Poetry", "Architecture", "Literacy")) == 45
    assert r.credit("Mysticism", "Music") == 5
    with pytest.raises(KeyError):
        r.credit("Atlantis", "Law")


def test_card_effects_machine_readable(r: Ruleset) -> None:
    cloth = r.civ_cards["Cloth Making"].effects_of("ship-range")
    assert cloth[0].get("value") == 5
    assert r.civ_cards["Coinage"].effects_of("tax-rate-choice")[0].get("values") == [1, 2, 3]
    pottery = r.civ_cards["Pottery"].effects_of("calamity-modifier")[0]
    assert (pottery.calamity, pottery.get("delta"), pottery.get("per")) == ("Famine", -4,
                                                                              "Grain")
    eng = {e.get("role"): e for e in r.civ_cards["Engineering"].effects_of("city-attack")}
    assert (eng["attacker"].get("threshold"), eng["attacker"].get("replacement_tokens")) == (6, 5)
    assert (eng["defender"].get("threshold"), eng["defender"].get("replacement_tokens")) == (8, 7)
    assert r.civ_cards["Mathematics"].effects == ()


# --- trade stacks and calamities (fact sheet 2.12, 4) ------------------------

def test_stack_card_counts(r: Ruleset) -> None:
    assert [s.card_count for s in r.stacks] == [14, 17, 19, 17, 15, 12, 12, 10, 10]
    assert sum(s.card_count for s in r.stacks) == 126
    assert sum(c.copies for s in r.stacks for c in s.commodities) == 114
    for s in r.stacks:
        assert all(c.value == s.number for c in s.commodities)
    assert r.commodity("Ivory").copies == 4
    assert r.commodity("Grain").set_value(3) == 36              # example E3
    assert r.commodity("Ochre").set_value(9) == 49              # capped at 7 copies
    assert r.gold_ivory_price == 18 and r.purchase_stack == 9
    assert r.stacks[0].non_tradable_calamity is None and r.stacks[0].tradable_calamity is None


def test_twelve_calamities(r: Ruleset) -> None:
    assert r.calamity_order() == (
        "Volcanic Eruption / Earthquake", "Treachery", "Famine", "Superstition",
        "Civil War", "Slave Revolt", "Flood", "Barbarian Hordes", "Epidemic",
        "Civil Disorder", "Iconoclasm & Heresy", "Piracy")
    non_tradable = {n for n, c in r.calamities.items() if not c.tradable}
    assert non_tradable == {"Volcanic Eruption / Earthquake", "Famine", "Civil War", "Flood"}
    assert r.calamities["Famine"].primary["unit_points"] == 10
    assert r.calamities["Famine"].secondary == {"unit_points_total": 20, "max_per_player": 8}
    assert r.calamities["Epidemic"].primary["unit_points"] == 16
    assert r.calamities["Flood"].primary["unit_points"] == 17
    assert r.calamities["Slave Revolt"].primary["tokens_disabled"] == 15
    assert r.calamities["Barbarian Hordes"].immune_nations == ("Crete",)
    assert set(r.calamities["Epidemic"].reduced_by) == {"Medicine"}
    assert set(r.calamities["Epidemic"].aggravated_by) == {"Roadbuilding"}
    assert set(r.calamities["Civil Disorder"].aggravated_by) == {"Military", "Roadbuilding"}
    assert r.stack_of("Piracy").number == 9


def test_epidemic_oracle_from_effects(r: Ruleset) -> None:
    """Fact sheet 7.1: Medicine + Roadbuilding as primary: 16 - 8 + 5 = 13."""
    loss = r.calamities["Epidemic"].primary["unit_points"]
    for card in ("Medicine", "Roadbuilding"):
        for e in r.civ_cards[card].effects_of("calamity-modifier"):
            if e.calamity == "Epidemic" and e.get("role") == "primary":
                loss += e.get("delta")
    assert loss == 13


def test_constants_from_data(r: Ruleset) -> None:
    assert (r.cities_per_nation, r.ships_per_nation, r.hand_limit, r.tokens_per_nation) == \
        (9, 4, 8, 55)
    assert r.numbers["ship_range"] == 4 and r.numbers["city_attack_tokens"] == 7


def test_ast_tracks(r: Ruleset) -> None:
    egypt = r.nations["Egypt"].ast_track
    assert egypt.epoch_starts == {"Stone Age": 1, "Early Bronze Age": 4,
                                  "Late Bronze Age": 7, "Early Iron Age": 10,
                                  "Late Iron Age": 13}
    assert egypt.late_iron_points == {13: 1300, 14: 1600, 15: 1900}
    assert egypt.epoch_at(0) == "Stone Age" and egypt.epoch_at(4) == "Early Bronze Age"
    assert egypt.finish_space == 16 and egypt.points_per_space == 100
    assert r.nations["Babylon"].ast_track.late_iron_points == {14: 1500, 15: 1800}
    alt = load_ruleset(overrides={"babylon-late-iron": "1600-1900"})
    assert alt.nations["Babylon"].ast_track.late_iron_points == {14: 1600, 15: 1900}
    assert [e.cities for e in r.epochs] == [0, 2, 3, 4, 5]


def test_the_numbers_of_the_no_trading_variant(r: Ruleset) -> None:
    """NT-3, NT-17: nine piles in the seed's order, 228 cards, the means of Outpost's reference sheet."""
    assert [p.type for p in r.money_piles] == [
        "Ore", "Water", "Titanium", "Research", "Microbiotics", "New Chemicals", "Orbital Medicine",
        "Ring Ore", "Moon Ore"]
    assert sum(p.card_count for p in r.money_piles) == 228
    means = [round(sum(v * n for v, n in p.values.items()) / p.card_count, 2) for p in r.money_piles]
    assert means == [3.0, 7.08, 10.0, 13.0, 17.0, 20.0, 30.0, 40.0, 50.0]
    assert r.no_trading is not None and r.no_trading.price == 18 and r.no_trading.hand_limit == 8
    assert dict(r.no_trading.calamity_dice) == {
        "Stone Age": (0, 0), "Early Bronze Age": (4, -2), "Late Bronze Age": (6, -2),
        "Early Iron Age": (8, -2), "Late Iron Age": (6, 1)}
    assert r.money_pile_of("Ring Ore 35").number == 8 and r.money_piles[1].cards()[:3] == ["Water 4", "Water 4", "Water 5"]


# --- validator on broken copies ---------------------------------------------

@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    target = tmp_path / "house"
    shutil.copytree(PACKAGED_DATA, target)
    return target


def _append(path: Path, line: str) -> int:
    text = path.read_text(encoding="utf-8")
    if not text.endswith("\n"):
        text += "\n"
    path.write_text(text + line + "\n", encoding="utf-8")
    return text.count("\n") + 1


def test_house_copy_loads(copy: Path) -> None:
    house = load_ruleset(copy)
    assert len(house.areas) == 123 and house.data_dir == str(copy)


def test_unknown_neighbour(copy: Path) -> None:
    line = _append(copy / "land_adjacency.csv", "Aleppo,Atlantis,house")
    with pytest.raises(RulesetError) as err:
        load_ruleset(copy)
    msg = str(err.value)
    assert "land_adjacency.csv" in msg and f"line {line}" in msg and "Atlantis" in msg
    assert "unknown" in msg


def test_asymmetric_link(copy: Path) -> None:
    path = copy / "land_adjacency.csv"
    rows = path.read_text(encoding="utf-8").splitlines()
    reversed_rows = [f"{r.split(',')[1]},{r.split(',')[0]},x" for r in rows[1:-1]]
    path.write_text("\n".join(rows + reversed_rows) + "\n", encoding="utf-8")
    last = rows[-1].split(",")
    with pytest.raises(RulesetError) as err:
        load_ruleset(copy)
    msg = str(err.value)
    assert "land_adjacency.csv" in msg and f"line {len(rows)}" in msg
    assert "asymmetric" in msg and last[0] in msg and last[1] in msg


def test_duplicate_link(copy: Path) -> None:
    line = _append(copy / "land_adjacency.csv", "Aleppo,Antiochia,again")
    with pytest.raises(RulesetError, match=rf"land_adjacency.csv, line {line}: duplicate"):
        load_ruleset(copy)


def test_self_link(copy: Path) -> None:
    line = _append(copy / "water_adjacency.csv", "Aleppo,Aleppo,coast-coast,confirmed,x")
    with pytest.raises(RulesetError, match=rf"water_adjacency.csv, line {line}: self-link"):
        load_ruleset(copy)


def test_credit_for_unknown_card(copy: Path) -> None:
    line = _append(copy / "civ_card_credits.csv", "Alchemy" + ",10" * 24)
    with pytest.raises(RulesetError) as err:
        load_ruleset(copy)
    msg = str(err.value)
    assert "civ_card_credits.csv" in msg and f"line {line}" in msg
    assert "unknown card 'Alchemy'" in msg


def test_missing_start_area(copy: Path) -> None:
    path = copy / "nations.csv"
    text = path.read_text(encoding="utf-8").replace("Scythia,,", "Scythia;Hyperborea,,")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RulesetError, match=r"nations.csv, line 5: Thrace: start area "
                                           r"'Hyperborea' does not exist"):
        load_ruleset(copy)


def test_bad_number(copy: Path) -> None:
    path = copy / "areas.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace("Aleppo,main,2,", "Aleppo,main,two,")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(RulesetError, match=r"areas.csv, line 2: Aleppo: population_limit: "
                                           r"bad number 'two'"):
        load_ruleset(copy)


def test_non_positive_cost(copy: Path) -> None:
    path = copy / "civ_cards.json"
    text = path.read_text(encoding="utf-8").replace('"cost": 80, "groups": ["Sciences"]',
                                                    '"cost": 0, "groups": ["Sciences"]')
    path.write_text(text, encoding="utf-8")
    line = next(i for i, l in enumerate(text.splitlines(), 1) if '"Astronomy"' in l)
    with pytest.raises(RulesetError, match=rf"civ_cards.json, line {line}: Astronomy: cost"):
        load_ruleset(copy)


def test_unknown_effect_kind(copy: Path) -> None:
    path = copy / "civ_cards.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["cards"][0]["effects"].append({"kind": "teleport"})
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    with pytest.raises(RulesetError, match="civ_cards.json, line .*Pottery: unknown effect "
                                           "kind 'teleport'"):
        load_ruleset(copy)


def test_stack_count_mismatch_with_calamities(copy: Path) -> None:
    path = copy / "trade_stacks.json"
    text = path.read_text(encoding="utf-8").replace('"tradable_calamity": "Piracy"',
                                                    '"tradable_calamity": "Locusts"')
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RulesetError, match="calamities.json, line .*Piracy: not in any stack"):
        load_ruleset(copy)


def test_calamity_card_lists_checked_against_effects(copy: Path) -> None:
    path = copy / "calamities.json"
    text = path.read_text(encoding="utf-8").replace('"reduced_by": ["Medicine"]',
                                                    '"reduced_by": []')
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RulesetError, match="calamities.json, line .*Epidemic: reduced_by"):
        load_ruleset(copy)


def test_money_piles_out_of_order_are_named(copy: Path) -> None:
    path = copy / "no_trading.json"
    data = json.loads(path.read_text())
    data["piles"][1]["number"] = 3
    path.write_text(json.dumps(data, indent=1))
    with pytest.raises(RulesetError, match=r"no_trading.json, line \d+: pile 3 out of order \(expected 2\)"):
        load_ruleset(copy)


def test_a_house_map_without_no_trading_data_has_no_money_piles(copy: Path) -> None:
    (copy / "no_trading.json").unlink()
    house = load_ruleset(copy)
    assert house.no_trading is None and house.money_piles == ()


def test_calamity_dice_must_cover_every_epoch(copy: Path) -> None:
    path = copy / "no_trading.json"
    data = json.loads(path.read_text())
    data["calamity_dice"] = data["calamity_dice"][:4]
    path.write_text(json.dumps(data, indent=1))
    with pytest.raises(RulesetError, match="calamity_dice: no entry for Late Iron Age"):
        load_ruleset(copy)


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(RulesetError, match="does not exist"):
        load_ruleset(tmp_path / "nowhere")
