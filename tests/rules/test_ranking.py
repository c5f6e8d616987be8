"""Orders of play: the beneficiary (D-1), census order, A.S.T.-ranking (seed 003)."""

from __future__ import annotations

from pbem.rules.board.ranking import beneficiary_ranking, census_order, in_ast_order
from pbem.rules.core.frozen import FrozenMap
from pbem.rules.core.state import AreaState, GameState, NationState, Player

EIGHT = ["Africa", "Italy", "Illyria", "Thrace", "Crete", "Asia", "Assyria", "Egypt"]


def table(stock: dict[str, int], cities: dict[str, int], options: dict[str, str] | None = None) -> GameState:
    """Eight players; ``cities`` says how many cities each has on the board (so 9 - n in stock)."""
    state = GameState(
        game_id="t",
        options=FrozenMap(options or {}),
        players=tuple(Player(i + 1, f"p{i + 1}", n) for i, n in enumerate(EIGHT)),
    )
    sites = (f"Site {k}" for k in range(100))  # only the counts matter for these rankings
    for i, nation in enumerate(EIGHT):
        state = state.with_nation(NationState(nation, i + 1, stock=stock.get(nation, 0)))
        for _ in range(cities.get(nation, 9)):
            state = state.with_area(next(sites), AreaState(city=nation))
    return state


def test_d1a_seed_ranks_cities_in_stock_first_1991_ranks_unit_points():
    """Test D-1a: Africa 3 cities and 10 tokens in stock, Egypt 2 cities and 20 tokens."""
    stock = {"Africa": 10, "Egypt": 20}
    cities = {"Africa": 6, "Egypt": 7}  # 3 and 2 in stock; everyone else 0 in stock
    assert beneficiary_ranking(table(stock, cities))[0] == "Africa"
    assert beneficiary_ranking(table(stock, cities, {"beneficiary-rule": "1991"}))[0] == "Egypt"


def test_d1b_a_tie_goes_to_the_earlier_nation_in_ast_order():
    """Test D-1b: Thrace and Crete both 3 cities and 12 tokens in stock: Thrace (rank 4) before Crete (5)."""
    stock = {"Thrace": 12, "Crete": 12}
    cities = {"Thrace": 6, "Crete": 6}
    for rule in ("seed", "1991"):
        ranking = beneficiary_ranking(table(stock, cities, {"beneficiary-rule": rule}))
        assert ranking[:2] == ["Thrace", "Crete"]


def test_the_victim_is_never_his_own_beneficiary():
    """Q-S5: ranked among the other players."""
    stock = {"Africa": 30}
    cities = {"Africa": 0}
    assert beneficiary_ranking(table(stock, cities), excluding=["Africa"])[0] != "Africa"


def test_ast_ranking_is_the_printed_order_and_barbarians_come_last():
    """seed 003 [A.S.T.-ranking order], RULINGS §0."""
    state = table({}, {})
    assert in_ast_order(state, ["Egypt", "Barbarians", "Africa", "Crete"]) == ["Africa", "Crete", "Egypt", "Barbarians"]


def test_census_order_military_holders_last():
    """§21.1, §22.11: most tokens first, ties by A.S.T.-ranking, Military holders after all others."""
    state = table({}, {n: 0 for n in EIGHT})
    state = state.with_area("Sinai", AreaState(tokens=FrozenMap({"Egypt": 5, "Africa": 1})))
    state = state.with_area("Libya", AreaState(tokens=FrozenMap({"Crete": 5})))
    crete = state.nations["Crete"]
    state = state.with_nation(NationState("Crete", crete.player_id, 0, civ_cards=("Military",)))
    order = census_order(state)
    assert order[:2] == ["Egypt", "Africa"] and order[-1] == "Crete"
