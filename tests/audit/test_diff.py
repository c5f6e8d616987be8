"""`pbem diff` (pbem/audit/diff.py): what changed between two versions, told from two views.

On a recorded game, every number a sentence gives must be the one the two
views hold, every difference of the views must be told, and a player must
never read another nation's hand in it.
"""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from pbem.audit.diff import diff, diff_versions, views_between
from pbem.cli import main
from pbem.rules.core.events import Event
from pbem.store.database import ensure_schema, make_engine

from .recorded_games import HERE, load_into, read

GAME = HERE / "planner-3p-to-the-end.jsonl.gz"
#: Version pairs across a trade, a whole turn, the start and the end of the game.
SPANS = [(300, 340), (340, 420), (2, 60), (600, 710), (120, 121)]
COUNTS = {"stock": "stock", "treasury": "treasury", "tokens on the board": "tokens_on_board",
          "cities": "cities_on_board", "ships": "ships", "cards in hand": "hand_count",
          "A.S.T. space": "ast_position", "census rank": "census", "towns on the board": "towns_on_board"}
CHANGE = re.compile(r"(?:^In [^:]+: |^[^:]+: |; )([A-Za-z. ]+?) (-?\d+|none) to (-?\d+|none)(?: \(([+-]?\d+)\))?")


@pytest.fixture(scope="module")
def recorded():
    game = read(GAME)
    return game.game["game_id"], [Event.from_payload(e["type"], e["payload"]) for e in game.events]


def _told(sentence: str) -> dict[str, tuple[int | None, int | None]]:
    """The `word old to new (change)` clauses of a sentence; the change is checked against the two numbers."""
    out = {}
    for word, old, new, change in CHANGE.findall(sentence):
        a, b = (None if old == "none" else int(old)), (None if new == "none" else int(new))
        if change:
            assert a is not None and b is not None and int(change) == b - a, sentence
        out[word.strip()] = (a, b)
    return out


@pytest.mark.parametrize("a, b", SPANS)
@pytest.mark.parametrize("viewer", ["moderator", "player:italy"])
def test_the_numbers_told_are_the_differences_of_the_views(recorded, a, b, viewer):
    game_id, events = recorded
    _, before, after = views_between(game_id, events, a, b, viewer)
    sentences = diff(before, after)
    names = {p["nation"].lower(): p["nation"] for p in after["players"] if p["nation"]}
    for key, new in after["nations"].items():
        old = before["nations"].get(key)
        if old is None:
            continue
        mine = [s for s in sentences if s.startswith(f"{names[key]}: ")]
        told = _told(mine[0]) if mine else {}
        for word, field in COUNTS.items():
            if old[field] != new[field]:
                assert told.get(word) == (old[field], new[field]), (key, word, mine)
            else:
                assert word not in told, (key, word, mine)
    for area, new in after["areas"].items():
        old = before["areas"][area]
        mine = [s for s in sentences if s.startswith(f"In {area}: ")]
        told = _told(mine[0]) if mine else {}
        for nation in set(old["tokens"]) | set(new["tokens"]):
            if old["tokens"].get(nation, 0) != new["tokens"].get(nation, 0):
                assert told.get(f"{nation} tokens") == (old["tokens"].get(nation, 0), new["tokens"].get(nation, 0))
        assert (old["city"] != new["city"]) == any("city" in s for s in mine), (area, mine)
        assert bool(mine) == (old != new)
    moved = (before["turn"], before["phase"]) != (after["turn"], after["phase"])
    assert moved == any(s.startswith("The game moved from") for s in sentences)


def test_either_order_tells_the_same_numbers_the_other_way(recorded):
    game_id, events = recorded
    forth = diff_versions(game_id, events, 300, 420, "moderator")
    back = diff_versions(game_id, events, 420, 300, "moderator")
    assert len(forth) == len(back) and forth != back
    swapped = {k: (b, a) for s in back for k, (a, b) in _told(s).items()}
    assert {k: v for s in forth for k, v in _told(s).items()} == swapped


def test_a_player_never_reads_another_nations_hand(recorded):
    game_id, events = recorded
    hands_seen_by_moderator = 0
    for a, b in SPANS:
        moderator = diff_versions(game_id, events, a, b, "moderator")
        hands_seen_by_moderator += sum(1 for s in moderator if not s.startswith("Italy") and "hand gained" in s + "hand lost")
        who, before, after = views_between(game_id, events, a, b, "italy")
        assert who == "player:italy"
        _, *seen = views_between(game_id, events, a, b, "moderator")
        cards = {c for v in seen for name, n in v["nations"].items() if name != "italy" for c in n["hand"]}
        for sentence in diff(before, after):
            if sentence.startswith("Italy"):
                continue
            assert "hand gained" not in sentence and "hand lost" not in sentence, sentence
            public = re.sub(r"civilization cards (gained|lost): [^;.]*", "", sentence)  # Cloth Making is no Cloth
            assert not any(re.search(rf"\b{re.escape(card)}\b", public) for card in cards), sentence
    assert hands_seen_by_moderator, "the moderator's diff does tell the other hands (the test is not vacuous)"


def test_the_end_of_the_game_is_told_with_its_scores(recorded):
    game_id, events = recorded
    told = diff_versions(game_id, events, 700, 710, "observer")
    assert any(s.startswith("The game has ended: 1. Illyria 911") for s in told), told


def test_equal_views_tell_nothing():
    game = {"turn": 1, "phase": "movement", "nations": {}, "areas": {"Thebes": {"tokens": {"Egypt": 1}, "city": None}}}
    assert diff(game, dict(game)) == []


# -- the command ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    path = tmp_path_factory.mktemp("diff") / "game.sqlite"
    db = make_engine(f"sqlite:///{path}")
    ensure_schema(db)
    load_into(db, read(GAME))
    db.dispose()
    return f"sqlite:///{path}"


def run(url: str, *args: str):
    return CliRunner().invoke(main, ["--db", url, *args])


def test_the_command_tells_the_span_and_the_sentences(url, recorded):
    game_id, events = recorded
    result = run(url, "diff", game_id, "300", "340", "--as", "illyria")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"{game_id}, as player:illyria, from version 300 (turn 6, tax-collection) to version 340 (turn 6, city-construction):"
    assert [line.strip() for line in lines[1:]] == diff_versions(game_id, events, 300, 340, "illyria")


def test_equal_versions_say_nothing_changed(url, recorded):
    game_id, _ = recorded
    result = run(url, "diff", game_id, "250", "250")
    assert result.exit_code == 0 and "nothing changed from version 250" in result.stdout, result.output


@pytest.mark.parametrize("a, b", [(0, 10), (10, 711), (711, 711)])
def test_versions_outside_the_log_are_one_line_and_exit_2(url, recorded, a, b):
    game_id, _ = recorded
    result = run(url, "diff", game_id, str(a), str(b))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert "outside the log" in result.stderr and "versions 1 to 710" in result.stderr


def test_an_unknown_game_or_viewer_is_one_line_and_exit_2(url, recorded):
    game_id, _ = recorded
    assert run(url, "diff", "nope", "1", "2").exit_code == 2
    result = run(url, "diff", game_id, "1", "2", "--as", "atlantis")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
