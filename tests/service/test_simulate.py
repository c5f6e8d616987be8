"""`pbem simulate`: bot games through the service layer, reproducible from their seed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pbem.service.simulate import simulate


def run_cli(*args: str) -> dict:
    result = subprocess.run([sys.executable, "-m", "pbem.cli", "simulate", *args, "--json"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def test_same_seed_same_game_through_the_cli():
    first = run_cli("--players", "4", "--turns", "2", "--seed", "s1", "--option", "unplayable-phases=skip")
    again = run_cli("--players", "4", "--turns", "2", "--seed", "s1", "--option", "unplayable-phases=skip")
    assert first == again
    assert set(first) >= {"game", "turns_played", "winner", "events_appended", "invariant_checks"}
    assert first["problems"] == [] and first["invariant_checks"] > 1
    assert first["turns_played"] == 2
    other = run_cli("--players", "4", "--turns", "2", "--seed", "s2", "--option", "unplayable-phases=skip")
    assert other != first


def test_simulate_keeps_the_game_in_the_database_named_on_the_command_line(tmp_path):
    """`pbem --db URL simulate` leaves the game there to be inspected, replayed and verified; a second run of the
    same seed is refused in one line rather than mixed into it."""
    url = f"sqlite:///{tmp_path / 'bots.sqlite'}"
    pbem = [sys.executable, "-m", "pbem.cli", "--db", url]
    played = subprocess.run([*pbem, "simulate", "--players", "3", "--turns", "2", "--seed", "kept"],
                            capture_output=True, text=True, timeout=300)
    assert played.returncode == 0 and f"kept in {url}" in played.stdout, played.stdout + played.stderr
    listed = subprocess.run([*pbem, "game", "list"], capture_output=True, text=True, timeout=60)
    assert listed.stdout.startswith("sim-kept\t")
    verified = subprocess.run([*pbem, "verify", "sim-kept"], capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0 and "re-derivation ok" in verified.stdout, verified.stdout
    again = subprocess.run([*pbem, "simulate", "--players", "3", "--turns", "2", "--seed", "kept"],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "already exists" in again.stderr and len(again.stderr.splitlines()) == 1


def test_simulate_takes_the_database_as_its_own_option_too(tmp_path):
    """`pbem simulate --db URL`, as the command is often written, keeps the game just as `pbem --db URL simulate`."""
    url = f"sqlite:///{tmp_path / 'own.sqlite'}"
    played = subprocess.run([sys.executable, "-m", "pbem.cli", "simulate", "--db", url, "--players", "3", "--turns", "1",
                             "--seed", "own"], capture_output=True, text=True, timeout=300)
    assert played.returncode == 0 and f"kept in {url}" in played.stdout, played.stdout + played.stderr
    verified = subprocess.run([sys.executable, "-m", "pbem.cli", "--db", url, "verify", "sim-own"],
                              capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0 and "re-derivation ok" in verified.stdout, verified.stdout


@pytest.mark.parametrize("players", range(2, 9))
@pytest.mark.parametrize("seed", ["a", "b", "c"])
def test_bot_games_keep_every_invariant(players, seed):
    summary = simulate(players, 3, f"{seed}{players}", options={"unplayable-phases": "skip"}, miss=0.25)
    assert summary.problems == []
    assert summary.turns_played == 3


def test_greedy_bots_look_ahead_and_keep_every_invariant():
    """The greedy strategy tries each legal choice on a copy of the game before choosing."""
    summary = simulate(4, 4, "greedy", options={"unplayable-phases": "skip"}, miss=0.05, strategy="greedy")
    assert summary.problems == [] and summary.turns_played == 4
    again = simulate(4, 4, "greedy", options={"unplayable-phases": "skip"}, miss=0.05, strategy="greedy")
    assert again.as_json() == summary.as_json()


@pytest.mark.parametrize("players", [3, 5, 7])
def test_planner_bots_play_whole_games_to_the_turn_limit(players):
    """Planner bots grow, build, fight, trade and buy; the turn limit of §34 ends the game with a winner."""
    summary = simulate(players, 12, f"plan{players}", options={"last-turn": "10"}, miss=0.05, strategy="planner")
    assert summary.problems == [], summary.problems
    assert summary.winner is not None and summary.turns_played == 10
    assert summary.orders_sent > 20 * players


@pytest.mark.parametrize(("players", "strategy"), [(2, "random"), (4, "planner"), (6, "greedy")])
def test_no_trading_bot_games_run_to_the_turn_limit(players, strategy):
    """No-Trading (seed 004) through the service layer: every invariant, money and calamities conserved, a winner."""
    summary = simulate(players, 14, f"nt{players}", options={"variant-no-trading": "on", "last-turn": "12"},
                       miss=0.1, strategy=strategy)
    assert summary.problems == [], summary.problems
    assert summary.winner is not None and summary.turns_played == 12


@pytest.mark.parametrize(("players", "strategy", "options"), [
    (3, "planner", {"variant-small-cities": "on"}),
    (5, "random", {"variant-small-cities": "on"}),
    (4, "greedy", {"variant-small-cities": "on", "variant-no-trading": "on"}),
])
def test_small_cities_bot_games_run_to_the_turn_limit(players, strategy, options):
    """Small Cities (seed 000), alone and with No-Trading, through the service layer: every invariant, a winner."""
    summary = simulate(players, 14, f"sc{players}", options={**options, "last-turn": "12"}, miss=0.1, strategy=strategy)
    assert summary.problems == [], summary.problems
    assert summary.winner is not None and summary.turns_played == 12
