"""The property test: many seeded bot games across player counts, strategies and options, each one checked whole.

Game ``i`` is drawn from ``random.Random(f"spec:{i}")`` alone (`spec`), so any game reproduces from its
index: the same players, turns, options, strategy and seed (``prop-{i}``) every time, on every machine. Each
game is played by `pbem.service.simulate` (the service layer, as by email) into a SQLite file that is kept,
and must

* keep every invariant after every step, and have no legal bot choice refused (``summary.problems == []``);
* not get stuck: it stops only at its turn limit or at its end (``stopped_at`` empty), with a winner when it
  has a ``last-turn``;
* append events; and
* pass ``pbem verify`` re-reading the kept database: the hash chain and the re-derivation of every outcome.

How many games: ``PBEM_PROPERTY_GAMES=N`` plays games 0..N-1 (``make property`` plays 200); without it, the
fixed sample `CI_SAMPLE` that ``make test`` and CI can afford. A failure prints the one ``pbem simulate``
command that plays the same game again, and the pytest command that reruns just this game (docs/bots.md).
"""

from __future__ import annotations

import json
import os
import random
import shlex
import subprocess
import sys
from dataclasses import dataclass

import pytest
from click.testing import CliRunner

from pbem.cli import main
from pbem.service.simulate import simulate

#: How many games ``make property`` plays (docs/bots.md).
FULL_RUN = 200

#: The games ``make test`` plays (under a minute together): 2, 3, 7 and 8 players; the planner, greedy and
#: random bots; both variants, Small Cities, No-Trading, the 1991 options and none. Chosen from the first
#: FULL_RUN games, so each keeps its id and its reproduction command in the full run.
CI_SAMPLE = (141, 20, 181, 144, 158)

#: The 1991 rulebook's answers to the deviations of RULINGS.md §3, as the recorded games play them
#: (tests/audit/recorded_games.py).
OPTIONS_1991 = {
    "beneficiary-rule": "1991", "tax-shortfall-payment": "1991", "city-defender-deferral": "1991",
    "city-capture-spoils": "1991", "pirate-city-attack": "1991", "support-reduction-order": "1991",
    "post-calamity-surplus": "1991", "slave-revolt-recovery": "1991",
}

#: (name in the test id, options, weight). Keys and values are those of pbem/rules/ruleset/options.py and the
#: board choices of pbem/rules/ruleset/loader.py.
OPTION_SETS: tuple[tuple[str, dict[str, str], int], ...] = (
    ("plain", {}, 20),
    ("small-cities", {"variant-small-cities": "on"}, 15),
    ("no-trading", {"variant-no-trading": "on"}, 15),
    ("both-variants", {"variant-small-cities": "on", "variant-no-trading": "on"}, 10),
    ("1991", OPTIONS_1991, 15),
    ("zero-limit-city-ban-1991", {"zero-limit-city-ban": "1991"}, 3),
    ("public-hand-size-1991", {"public-hand-size": "1991"}, 3),
    ("no-calamity-limit", {"primary-calamity-limit": "none"}, 3),
    ("calamity-limit-1", {"primary-calamity-limit": "1"}, 3),
    ("open-sea-literal", {"open-sea": "literal"}, 3),
    ("water-links-confirmed", {"water-links": "confirmed"}, 3),
    ("disputed-areas-jc", {"disputed-areas": "jc"}, 2),
    ("five-player-board-drop-west", {"five-player-board": "drop-west"}, 2),
    ("babylon-late-iron-1600", {"babylon-late-iron": "1600-1900"}, 2),
)


@dataclass(frozen=True)
class Spec:
    """One game of the property test, as `simulate` and `pbem simulate` take it."""

    index: int
    players: int
    turns: int
    strategy: str
    kind: str  # the option set's name
    options: dict[str, str]
    miss: float

    @property
    def seed(self) -> str:
        return f"prop-{self.index}"

    @property
    def id(self) -> str:
        return f"game-{self.index}-{self.players}p-{self.strategy}-{self.kind}"

    @property
    def last_turn(self) -> int | None:
        return int(self.options["last-turn"]) if "last-turn" in self.options else None

    def command(self, db_url: str) -> list[str]:
        """``pbem --db URL simulate ...``: the same game, kept in ``db_url``."""
        args = ["pbem", "--db", db_url, "simulate", "--players", str(self.players), "--turns", str(self.turns),
                "--seed", self.seed]
        for key, value in self.options.items():
            args += ["--option", f"{key}={value}"]
        return [*args, "--miss", repr(self.miss), "--strategy", self.strategy]


def spec(index: int) -> Spec:
    """Game ``index`` of the property test: a function of the index alone."""
    rng = random.Random(f"spec:{index}")
    players = 2 if rng.random() < 0.08 else rng.randint(3, 8)
    strategy = rng.choices(["planner", "greedy", "random"], weights=[70, 15, 15])[0]
    kind, options, _ = rng.choices(OPTION_SETS, weights=[w for _, _, w in OPTION_SETS])[0]
    turns = rng.randint(12, 20)
    options = dict(options)
    if rng.random() < 2 / 3:
        options["last-turn"] = str(turns)  # the time limit of §34: the game ends in that turn, with a winner
    miss = rng.choice([0.05, 0.1, 0.15, 0.2])
    return Spec(index, players, turns, strategy, kind, options, miss)


def selected() -> list[int]:
    wanted = os.environ.get("PBEM_PROPERTY_GAMES", "").strip()
    return list(range(int(wanted))) if wanted else list(CI_SAMPLE)


def reproduction(game: Spec, game_id: str) -> str:
    """What a failure prints: one command that plays the game again, and one that reruns this test."""
    url = f"sqlite:///{game.seed}.sqlite"
    simulate_command = shlex.join([".venv/bin/pbem", *game.command(url)[1:]])
    verify_command = f".venv/bin/pbem --db {url} verify {game_id}"
    return (
        f"  play the same game again:  rm -f {game.seed}.sqlite; {simulate_command}\n"
        f"  then verify it:            {verify_command}\n"
        f"  rerun this test:           PBEM_PROPERTY_GAMES={game.index + 1} .venv/bin/pytest tests/property "
        f"-k 'game-{game.index}-'"
    )


def verify(db_url: str, game_id: str) -> tuple[int, str]:
    """``pbem --db URL verify GAME``, as a player or moderator would run it."""
    result = CliRunner().invoke(main, ["--db", db_url, "verify", game_id])
    return result.exit_code, result.output


@pytest.mark.parametrize("index", [pytest.param(i, id=spec(i).id) for i in selected()])
def test_bot_game(index, tmp_path):
    game = spec(index)
    db_url = f"sqlite:///{tmp_path / f'{game.seed}.sqlite'}"
    summary = simulate(game.players, game.turns, game.seed, options=game.options, miss=game.miss,
                       db_url=db_url, strategy=game.strategy)

    def failed(what: str) -> str:
        return (f"{game.id}: {what}\n{reproduction(game, summary.game)}\n  the game is kept in {db_url}\n"
                f"  summary: {json.dumps(summary.as_json())}")

    assert summary.problems == [], failed("\n    ".join(["problems:", *summary.problems]))
    assert summary.stopped_at == "", failed(f"stuck: nobody is asked at {summary.stopped_at!r} "
                                            f"after {summary.turns_played} turns")
    assert summary.events_appended > 0, failed("no events appended")
    if game.last_turn is not None:
        assert summary.winner is not None and summary.turns_played == game.last_turn, failed(
            f"the game did not end with a winner in its last turn ({game.last_turn})")
    else:
        assert summary.turns_played == game.turns or summary.winner is not None, failed(
            f"played {summary.turns_played} turns of {game.turns}")
    code, output = verify(db_url, summary.game)
    assert code == 0 and "re-derivation ok" in output, failed("pbem verify failed:\n" + output)


def test_the_printed_command_plays_the_same_game(tmp_path):
    """A failure's `pbem simulate` command replays the game of the test exactly: the same events, to the
    same head of the hash chain (a short game of the spec with the most options, so that this costs seconds)."""
    full = spec(1)  # six planners under the 1991 options: eight --option flags
    assert full.kind == "1991"
    game = Spec(full.index, full.players, 3, full.strategy, full.kind,
                {k: v for k, v in full.options.items() if k != "last-turn"}, full.miss)
    in_test, by_cli = (f"sqlite:///{tmp_path / name}" for name in ("test.sqlite", "cli.sqlite"))
    summary = simulate(game.players, game.turns, game.seed, options=game.options, miss=game.miss,
                       db_url=in_test, strategy=game.strategy)
    command = [sys.executable, "-m", "pbem.cli", *game.command(by_cli)[1:], "--json"]
    played = subprocess.run(command, check=False, capture_output=True, text=True, timeout=300)
    assert played.returncode == 0, played.stdout + played.stderr
    assert json.loads(played.stdout) == summary.as_json()
    (code, ours), (_, theirs) = (verify(url, summary.game) for url in (in_test, by_cli))
    assert code == 0 and ours.startswith("hash chain ok: ") and " head " in ours.splitlines()[0], ours
    assert ours.splitlines()[0] == theirs.splitlines()[0]  # the same events, to the same head hash


def test_each_game_follows_from_its_index_alone():
    """A game reported by its index is the same game later and elsewhere (a change here changes every game)."""
    assert spec(17) == Spec(17, 5, 12, "planner", "both-variants", {
        "variant-small-cities": "on", "variant-no-trading": "on", "last-turn": "12"}, 0.15)
    assert len({spec(i).id for i in range(FULL_RUN)}) == FULL_RUN
    assert set(CI_SAMPLE) <= set(range(FULL_RUN))
    kinds = {spec(i).kind for i in range(FULL_RUN)}
    assert {"plain", "small-cities", "no-trading", "both-variants", "1991"} <= kinds
    assert {spec(i).players for i in range(FULL_RUN)} == set(range(2, 9))
