"""`pbem explain` (pbem/audit/explain): one event of a real game explained, its numbers checked against the rules.

The games are the recorded bot games of tests/audit/recorded, and one of them
continued through the service layer with real orders, since bots never
attack a city: Italy takes Assyria's city in Moesia with exactly the 7
tokens needed, Asia attacks Egypt's Sinope with 2 and fails, and Italy
draws a card from Assyria's hand as spoils. Each kind of explanation is held
to the arithmetic of the rules package and of the event it explains, not
only to its wording.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

from pbem.audit.explain import explain, explain_all
from pbem.audit.explain.conflict import rounds
from pbem.cli import main
from pbem.rules import engine
from pbem.rules.board.battle import city_attack_needed, fight_removals, forces, holds
from pbem.rules.board.commodities import commodity_kinds
from pbem.rules.board.ranking import beneficiary_ranking, cities_in_stock
from pbem.rules.core.events import Event
from pbem.rules.ruleset.rulebook import ruleset_of
from pbem.service.games import submit
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from .recorded_games import HERE, RecordedGame, load_into, read

FIVE = HERE / "planner-5p-20-turns.jsonl.gz"
THREE = HERE / "planner-3p-to-the-end.jsonl.gz"
#: The five-player game stopped where Italy, first to move in turn 12, may bring 7 tokens next to Moesia.
ATTACK_FROM = 1117
ORDERS = (
    ("Italy", "MOVE 2 Dacia Moesia\nMOVE 2 Danube Moesia\nMOVE 2 Illyricum Moesia\nMOVE 1 Paeonia Moesia\nHALT"),
    ("Africa", "HALT"),
    ("Asia", "MOVE 2 Cappadocia Sinope\nHALT"),
    ("Egypt", "HALT"),
    ("Assyria", "HALT"),
    ("Italy", "SPOILS yes 2"),
)
ROUND = re.compile(r"Round (\d+): (.*); (.*) -> (.*) = (\d+)\.$")


def _load(path, url: str, upto: int | None = None) -> tuple[str, list]:
    game = read(path)
    db = make_engine(url)
    try:
        ensure_schema(db)
        game_id = load_into(db, RecordedGame(game.game, game.events[:upto]) if upto else game)
        with UnitOfWork(db) as uow:
            return game_id, uow.events.read(game_id)
    finally:
        db.dispose()


@pytest.fixture(scope="module")
def five(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('five') / 'five.sqlite'}"
    game_id, recorded = _load(FIVE, url)
    return url, game_id, recorded


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('three') / 'three.sqlite'}"
    game_id, recorded = _load(THREE, url)
    return url, game_id, recorded


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """The five-player game from turn 12's movement on, played on by mail-equivalent orders (`pbem submit`)."""
    folder = tmp_path_factory.mktemp("attacked")
    url = f"sqlite:///{folder / 'attacked.sqlite'}"
    game_id, recorded = _load(FIVE, url, ATTACK_FROM)
    db = make_engine(url)
    try:
        with UnitOfWork(db) as uow:  # the players' rows, as the recorded game had them (ids 1 to 5)
            for pid, nation in enumerate(("Assyria", "Asia", "Italy", "Egypt", "Africa"), 1):
                assert uow.players.add(game_id, f"Bot{pid}", f"bot{pid}@sim.invalid", nation) == pid
        settings = replace(Settings(), gather_minutes=0, db_url=url, maildir=folder / "mail", board_pictures=False)
        now = datetime(2026, 1, 24, 5, 30, tzinfo=timezone.utc)
        for nation, text in ORDERS:
            receipt = submit(db, settings, game_id, nation, text, now=now)
            assert receipt.ok, receipt.errors
        with UnitOfWork(db) as uow:
            recorded = uow.events.read(game_id)
    finally:
        db.dispose()
    return url, game_id, recorded


def _version(recorded, kind: str, **data) -> int:
    return next(r.version for r in recorded if r.type == kind and all(r.payload.get(k) == v for k, v in data.items()))


def _before(game_id: str, recorded, version: int):
    return engine.fold(engine.new_game(game_id), [Event.from_payload(r.type, r.payload) for r in recorded[: version - 1]])


def items(lines) -> list[str]:
    """The explanation's lines with every wrapped continuation joined back to the line it continues."""
    out: list[str] = []
    base = -1
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        if out and indent > base and not out[-1].endswith(":"):
            out[-1] += " " + line.strip()
        else:
            out.append(line)
            base = indent
    return out


def _counts(text: str) -> dict[str, int]:
    return {who: int(n) for who, n in (part.rsplit(" ", 1) for part in text.split(", "))}


def _round_removals(lines) -> tuple[dict[str, int], dict[str, int]]:
    """What the told rounds remove from each party, and what they leave: read from the numbers, not the words."""
    removed: dict[str, int] = {}
    left: dict[str, int] = {}
    expected = 1
    for line in items(lines):
        found = ROUND.search(line)
        if not found:
            continue
        assert int(found.group(1)) == expected
        expected += 1
        start, left = _counts(found.group(2)), _counts(found.group(4))
        assert sum(left.values()) == int(found.group(5))
        named = {who for group in found.group(3).split(", then ") for who in group.rsplit(" -1", 1)[0].split(" and ")}
        for who, n in start.items():
            gone = n - left.get(who, 0)
            assert gone == (1 if who in named else 0), line  # one unit a round each, until the fight stops
            removed[who] = removed.get(who, 0) + gone
    return removed, left


# -- 1. a token conflict, round by round ------------------------------------------------------------


def test_a_token_conflict_is_told_round_by_round_and_the_rounds_add_up_to_the_event(three):
    _, game_id, recorded = three
    version = 647  # Dacia, limit 3: Italy 4 against Thrace 8
    event = recorded[version - 1].payload
    told = explain(game_id, recorded, version, "observer")
    removed, left = _round_removals(told.lines)
    assert removed == {p: n for p, n in event["removed"].items() if n}
    assert left == {p: n for p, n in event["after"].items() if n}
    state = _before(game_id, recorded, version)
    assert len(rounds(fight_removals(state, "Dacia", forces(state, "Dacia"), False))) == 4 == sum(
        1 for line in told.lines if ROUND.search(line))
    assert "  Stop: only Thrace is left." in told.lines
    assert told.cites == tuple(event["cites"])


def test_the_fight_of_a_city_attack_stops_at_the_areas_limit(attacked):
    _, game_id, recorded = attacked
    version = _version(recorded, "TokenConflictResolved", area="Moesia")
    event = recorded[version - 1].payload
    assert event["in_attack"] and event["before"] == {"Assyria": 6, "Italy": 7}
    told = explain(game_id, recorded, version, "player:italy")
    removed, left = _round_removals(told.lines)
    assert removed == event["removed"] == {"Assyria": 5, "Italy": 4}
    assert left == event["after"] and sum(left.values()) == event["limit"] == 4
    assert "  Stop: 4 units are within the limit of 4." in told.lines
    assert "seed 001: [city-attack step 2]" in told.cites


# -- 2. a city attack: the threshold --------------------------------------------------------------


def test_a_city_attack_is_held_to_the_threshold_the_rules_give_for_that_city(attacked):
    _, game_id, recorded = attacked
    version = _version(recorded, "CityAttackSucceeded", area="Moesia")
    state = _before(game_id, recorded, version)
    needed = city_attack_needed(state, "Italy", "Assyria")
    assert needed == ruleset_of(state).numbers["city_attack_tokens"] == 7  # nobody holds Engineering
    assert not holds(state, "Italy", "Engineering") and not holds(state, "Assyria", "Engineering")
    assert state.area("Moesia").tokens["Italy"] == 7 and state.area("Moesia").city == "Assyria"
    told = explain(game_id, recorded, version, "observer")
    assert f"  Neither side holds Engineering: tokens needed {needed} (D-19)." in told.lines
    assert "  Italy has 7 tokens there: 7 >= 7, the attack succeeds." in told.lines
    assert told.lines[1] == "Outcome: Italy attacks Assyria's city in Moesia with 7 tokens (7 needed): the attack succeeds."
    assert not any(line.startswith("NOTE") for line in told.lines)

    failed = _version(recorded, "CityAttackFailed", area="Sinope")
    told = explain(game_id, recorded, failed, "observer")
    assert recorded[failed - 1].payload["tokens"] == 2
    assert f"  Asia has 2 tokens there: 2 < {needed}, the attack fails and its 2 tokens there go back to stock." in items(
        told.lines)

    replaced = _version(recorded, "CityReplaced", area="Moesia")
    stock = _before(game_id, recorded, replaced).nations["Assyria"].stock
    told = explain(game_id, recorded, replaced, "observer")
    assert f"  Assyria has {stock} in stock: min(6, {stock}) = 6 placed." in told.lines
    assert recorded[replaced - 1].payload["placed"] == 6


# -- 3. a civilization card purchase --------------------------------------------------------------


def test_a_purchase_adds_up_cost_credits_sets_and_treasury(five):
    _, game_id, recorded = five
    version = _version(recorded, "AdvancesBought", nation="Egypt", cards=["Music"])
    d = recorded[version - 1].payload
    before, after = _before(game_id, recorded, version), _before(game_id, recorded, version + 1)
    told = items(explain(game_id, recorded, version, "player:egypt").lines)
    rules = ruleset_of(before)
    credit = sum(rules.credit(o, "Music") for o in before.nations["Egypt"].civ_cards)
    assert credit == 5 and rules.civ_cards["Music"].cost == 60
    assert "  Music: cost 60, credits Mysticism 5 = 5; 60 - 5 = 55." in told
    sets = [line for line in told if re.match(r"    \w+ x\d+: ", line)]
    kinds = commodity_kinds(before)
    values = {}
    for line in sets:
        name, count, value = re.match(r"    (\w+) x(\d+): .* = (\d+)$", line).groups()
        assert int(value) == kinds[name].set_value(int(count))  # n² × face value (§28.51)
        values[name] = int(count)
    assert values == d["pay"]
    worth = sum(kinds[n].set_value(c) for n, c in values.items())
    paid = before.nations["Egypt"].treasury - after.nations["Egypt"].treasury
    assert paid == d["treasury"] == 26
    assert f"  Cards worth {worth}; treasury paid {paid}: {worth} + {paid} = {worth + paid}." in told
    assert worth + paid - d["lost"] == 60 - credit == d["due"]  # nothing is given back (§31.58)
    assert f"  Treasury {before.nations['Egypt'].treasury} - 26 = {after.nations['Egypt'].treasury}; the 26 tokens go to " \
           f"stock (0 + 26 = 26)." in told

    other = explain(game_id, recorded, version, "player:africa").text()
    assert "Music: cost 60, credits Mysticism 5 = 5; 60 - 5 = 55." in other
    assert "Paid with 8 trade cards" in other and "26 from treasury" in other
    for card in d["pay"]:
        assert not re.search(rf"\b{card}\b", other), card


# -- 4. a calamity: the losses, how they were counted, who chose ------------------------------------


def _losses_total(lines) -> int:
    total = next(line for line in items(lines) if line.startswith("  Total: "))
    terms, result = total[len("  Total: "):].rstrip(".").split(" = ")
    assert sum(int(t) for t in terms.split(" + ")) == int(result)
    return int(result)


def test_a_famine_tells_each_victims_unit_points_and_who_chose_them(five):
    _, game_id, recorded = five
    primary = _version(recorded, "CalamityLossChosen", calamity="Famine", nation="Asia")
    d = recorded[primary - 1].payload
    told = explain(game_id, recorded, primary, "observer")
    state = _before(game_id, recorded, primary)
    base = ruleset_of(state).calamities["Famine"].primary["unit_points"]
    assert f"  Famine costs its primary victim {base} unit points (§30.31)." in told.lines
    assert _losses_total(told.lines) == d["points"] == sum(c["points"] for c in d["losses"]) == 10
    assert "  It must lose exactly 10." in told.lines
    assert "  Chosen by Asia, the player who loses them (§29.62)." in told.lines

    given = _version(recorded, "CalamityLossesGiven", calamity="Famine")
    g = recorded[given - 1].payload
    told = explain(game_id, recorded, given, "observer")
    assert "  Given: Africa 8 + Italy 4 + Egypt 8 = 20." in told.lines and g["total"] == 20
    assert "  Chosen by Asia, the primary victim; each then chooses his own losses." in told.lines
    assert "  Famine: Asia gives 20 more unit points to other players, at most 8 each (§30.31, §29.62, §29.61)." in told.lines

    for nation, share in g["shares"]:
        version = _version(recorded, "CalamityLossChosen", calamity="Famine", nation=nation)
        told = explain(game_id, recorded, version, f"player:{nation.lower()}")
        assert f"  Asia gave {nation} {share} of the secondary unit points (§29.61)." in told.lines
        assert _losses_total(told.lines) == share == recorded[version - 1].payload["points"]
        assert f"  Chosen by {nation}, the player who loses them (§29.62)." in told.lines


def test_the_trader_of_a_calamity_is_named_only_to_the_two_players_and_the_overseers(five):
    _, game_id, recorded = five
    version = _version(recorded, "SlavesRevolted", victim="Assyria")
    revealed = next(c for r in recorded[:version] if r.type == "CalamitiesRevealed"
                    for c in r.payload["calamities"] if c["calamity"] == "Slave Revolt")
    assert revealed["giver"] == "Asia"
    named = "  Calamity: Slave Revolt, primary victim Assyria, traded to it by Asia."
    for viewer in ("player:assyria", "player:asia", "moderator"):
        assert named in explain(game_id, recorded, version, viewer).lines
    for viewer in ("player:egypt", "observer"):
        told = explain(game_id, recorded, version, viewer)
        assert "traded" not in told.text() and "  Calamity: Slave Revolt, primary victim Assyria." in told.lines
    told = explain(game_id, recorded, version, "observer")
    assert "  It has 9 tokens on the board: min(15, 9) = 9 cannot support; its cities are checked at once." in told.lines

    reveal = _version(recorded, "CalamitiesRevealed", calamities=[
        {"calamity": "Superstition", "giver": "Egypt", "stack": 3, "victim": "Africa"}])
    for viewer in ("observer", "player:italy"):  # Egypt traded it; nothing else names Egypt here
        assert "Egypt" not in explain(game_id, recorded, reveal, viewer).text()


# -- 5. a tax revolt: the beneficiary ranking ---------------------------------------------------------


def test_a_tax_revolt_shows_the_beneficiary_ranking_the_engine_chose_by(five):
    _, game_id, recorded = five
    version = _version(recorded, "RevoltChosen", victim="Italy", beneficiary="Asia")
    state = _before(game_id, recorded, version)
    ranking = beneficiary_ranking(state, excluding=["Italy"])
    assert ranking[:2] == ["Asia", "Assyria"]
    assert cities_in_stock(state, "Asia") == cities_in_stock(state, "Assyria") == 9  # a tie broken by tokens in stock
    assert state.nations["Asia"].stock == 39 > state.nations["Assyria"].stock == 38
    told = explain(game_id, recorded, version, "player:italy")
    listed = [re.match(r"    \d+\. (\w+):", line).group(1) for line in told.lines if re.match(r"    \d+\. ", line)]
    assert listed == ranking
    assert "    1. Asia: 9 cities in stock, 39 tokens <- the first with a city to give: beneficiary" in told.lines
    assert "  Its stock paid for 7 // 2 = 3 cities: 4 - 3 = 1 revolt (seed 003: 1B, D-2)." in told.lines
    assert "  Asia takes min(1 revolting, 9 in stock) = 1, each replaced by its own city." in told.lines
    assert "  Chosen by Asia, the beneficiary (Q-S5): Neapolis." in told.lines

    whole = _version(recorded, "CitiesRevolted", victim="Italy", beneficiary="Assyria")
    told = explain(game_id, recorded, whole, "observer")
    beneficiary = next(line for line in told.lines if "<- the first with a city to give" in line)
    assert beneficiary.startswith("    1. Assyria: ")
    assert "  No choice to make: every city still to revolt goes (Appolonia, Moesia, Roma)." in told.lines


# -- what a viewer may see ----------------------------------------------------------------------------


def test_a_player_cannot_explain_a_version_hidden_from_him(five):
    _, game_id, recorded = five
    version = _version(recorded, "OfferMade", nation="Africa", to=["Egypt"])
    told = explain(game_id, recorded, version, "player:asia")
    assert told.lines == (f"version {version} is not yours to see",) and told.cites == ()
    assert explain(game_id, recorded, version, "player:egypt").lines[0].startswith(f"EXPLAIN version {version} ")


def test_a_players_explanation_never_shows_another_nations_hand(attacked):
    _, game_id, recorded = attacked
    spoils = _version(recorded, "SpoilsTaken", area="Moesia")
    card = recorded[spoils - 1].payload["card"]
    assert card and recorded[spoils - 1].payload["pillage"] == 2
    assert re.search(rf"\b{card}\b", explain(game_id, recorded, spoils, "player:italy").text())
    assert re.search(rf"\b{card}\b", explain(game_id, recorded, spoils, "player:assyria").text())
    versions = [spoils] + [r.version for r in recorded if r.type in ("TradeCardsDrawn", "TradeExecuted", "AdvancesBought")][-8:]
    own = 0
    for version in versions:
        state = _before(game_id, recorded, version)
        for nation in ("Egypt", "Asia", "Africa"):
            told = explain(game_id, recorded, version, f"player:{nation.lower()}")
            for line in items(told.lines):
                if re.search(r"\bhand(:| gained| lost)", line):  # the cards of a hand: told only of one's own
                    assert line.lstrip().startswith(f"{nation}:"), (version, nation, line)
                    own += 1
            if version == spoils:
                assert not re.search(rf"\b{card}\b", told.text())
                others = set(state.nations["Assyria"].hand) | set(state.nations["Italy"].hand)
                assert not any(re.search(rf"\b{c}\b(?! Making)", told.text()) for c in others)
    assert own > 0  # the check above was not vacuous: players did read their own hands


def test_a_version_outside_the_log_or_an_unknown_viewer_is_one_line_of_error(five):
    _, game_id, recorded = five
    for version in (0, len(recorded) + 1):
        with pytest.raises(ValueError, match=rf"^version {version} is outside the log of {game_id}: versions 1 to "):
            explain(game_id, recorded, version, "observer")
    with pytest.raises(ValueError, match="rome"):
        explain(game_id, recorded, 10, "player:rome")
    assert explain(game_id, recorded, 10, "Italy").viewer == "player:italy"  # a bare nation is a player


# -- the command line ----------------------------------------------------------------------------------


def test_pbem_explain_prints_the_explanation_or_json_and_fails_in_one_line(five):
    url, game_id, recorded = five
    runner = CliRunner()
    version = _version(recorded, "AdvancesBought", nation="Egypt", cards=["Music"])
    result = runner.invoke(main, ["--db", url, "explain", game_id, str(version), "--as", "egypt"])
    assert result.exit_code == 0, result.output
    assert result.stdout == explain(game_id, recorded, version, "player:egypt").text() + "\n"
    assert "Cards worth 29; treasury paid 26: 29 + 26 = 55." in result.stdout

    result = runner.invoke(main, ["--db", url, "explain", game_id, str(version), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["version"] == version and data["viewer"] == "observer"
    assert data["cites"] == recorded[version - 1].payload["cites"] and data["lines"][0].startswith("EXPLAIN version")

    hidden = _version(recorded, "OfferMade", nation="Africa", to=["Egypt"])
    result = runner.invoke(main, ["--db", url, "explain", game_id, str(hidden), "--as", "player:asia"])
    assert result.exit_code == 0 and result.stdout == f"version {hidden} is not yours to see\n"

    for args, message in (([game_id, "99999"], "version 99999 is outside the log"),
                          ([game_id, "5", "--as", "rome"], "rome"),
                          (["no-such-game", "5"], "there is no game called 'no-such-game'")):
        result = runner.invoke(main, ["--db", url, "explain", *args])
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("pbem: ") and message in result.stderr and result.stderr.count("\n") == 1


def test_explaining_the_whole_log_at_once_gives_each_version_as_explaining_it_alone_does(three):
    """`explain_all` (the archive's, one walk of the log) and `explain` (one version) agree, for every viewer."""
    _, game_id, recorded = three
    for viewer in ("observer", "italy", "moderator"):
        every = explain_all(game_id, recorded, viewer)
        assert sorted(every) == list(range(1, len(recorded) + 1))
        for version in range(1, len(recorded) + 1, 37):
            assert every[version] == explain(game_id, recorded, version, viewer), (viewer, version)


def test_a_city_lost_for_want_of_support_is_told_with_the_support_it_needed_and_had(tmp_path):
    """greedy-4p, turn 4: Assyria builds Ur from all its tokens there, has none left to support it, and loses it."""
    game_id, recorded = _load(HERE / "greedy-4p.jsonl.gz", f"sqlite:///{tmp_path / 'g.sqlite'}")
    version = _version(recorded, "CityReduced", area="Ur")
    before = _before(game_id, recorded, version)
    told = explain(game_id, recorded, version, "assyria")
    how = " ".join(line.strip() for line in told.lines)  # wrapped for a phone: read as one text
    assert before.tokens_on_board("Assyria") == 0 and before.cities_on_board("Assyria") == 1
    assert "each needs 2 of its population tokens on the board (§26.3), 2 in all" in how
    assert "It has 0 tokens on the board: 0 < 2, short by 2." in how
    assert "Ur went: the only one that could, so nobody was asked." in how
    stock = before.nations["Assyria"].stock
    assert f"The city becomes Ur's limit of 3 = 3 tokens from stock (§26.41): min(3, stock {stock}) = 3." in how
    assert "After it: 3 tokens on the board, 0 needed (supported)." in how
    assert told.cites == ("seed 001: 5C", "§26.3", "§26.41", "D-6")
