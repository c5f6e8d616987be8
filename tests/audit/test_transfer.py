"""`pbem export` and `pbem import` (pbem/audit/transfer.py, pbem/audit/disclosure.py).

A recorded game, played to its end by bots and given mail Message-IDs as if
its orders had come by mail, is exported and imported into a second
database; the copy must verify and replay exactly as the original. A file
altered in any way is refused, naming the first broken version; a player's
export withholds what the player may not read and still checks.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import update

from pbem.audit.disclosure import RULES, may_read, metadata_public, readers
from pbem.audit.transfer import (
    MODERATOR_ADDRESS,
    ExportError,
    check_export,
    decode,
    dump_line,
    imported_status,
    read_export,
    revealed_seed,
    store_export,
)
from pbem.cli import main
from pbem.rules import engine
from pbem.rules.branches import roll_back
from pbem.rules.core.commands import RollBack
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState, Player
from pbem.service.batch import mail_source
from pbem.store.database import ensure_schema, make_engine
from pbem.store.schema import games
from pbem.store.unit_of_work import UnitOfWork

from .recorded_games import HERE, load_into, read

FINISHED = HERE / "planner-3p-to-the-end.jsonl.gz"
UNFINISHED = HERE / "greedy-4p.jsonl.gz"
MAIL = "players.example"


def run(url: str, *args: str, input: bytes | None = None):
    """The `pbem` command in this process (fast), on the database at ``url``."""
    return CliRunner().invoke(main, ["--db", url, *args], input=input)


def _load(path: Path, url: str, *, by_mail: bool = True, reveal: str | None = None) -> tuple[str, dict]:
    """A recorded game stored at ``url``: players' orders given Message-IDs, the seed revealed at the end if asked."""
    recorded = read(path)
    if by_mail:
        for number, event in enumerate(recorded.events):
            if event["metadata"]["actor"].startswith("player:"):
                message_id = f"<m{number}.{path.name[:6]}@{MAIL}>"
                event["metadata"] = {**event["metadata"], "source": f"mail:{message_id}"}
                event["dedupe_key"] = f"{message_id}#1"
    if reveal:
        meta = {**recorded.events[-1]["metadata"], "actor": "moderator", "source": "cli"}
        recorded.events.append({"type": "SeedRevealed", "payload": {"seed": recorded.game["secret_seed"], "to": reveal,
                                "cites": ["DESIGN §4"]}, "metadata": meta, "dedupe_key": None})
    db = make_engine(url)
    try:
        ensure_schema(db)
        game_id = load_into(db, recorded)
    finally:
        db.dispose()
    return game_id, recorded.game


def _rows(url: str, game_id: str) -> tuple[object, list, list]:
    db = make_engine(url)
    try:
        ensure_schema(db)
        with UnitOfWork(db) as uow:
            return uow.games.get(game_id), uow.players.list(game_id), uow.events.read(game_id)
    finally:
        db.dispose()


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> dict:
    """The finished game by mail in a source database, and its complete and partial exports."""
    folder = tmp_path_factory.mktemp("source")
    url = f"sqlite:///{folder}/source.sqlite"
    game_id, recorded = _load(FINISHED, url)
    out = {"url": url, "game": game_id, "recorded": recorded, "folder": folder}
    for viewer in ("moderator", "illyria", "observer", "auditor"):
        result = run(url, "export", game_id, "--as", viewer)
        assert result.exit_code == 0, result.output
        path = folder / f"{viewer}.jsonl"
        path.write_bytes(result.stdout_bytes)
        out[viewer] = path
    return out


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


# -- a complete export ------------------------------------------------------------------------------


def test_a_complete_export_imports_into_another_database_and_replays_the_same(source, tmp_path):
    target = f"sqlite:///{tmp_path}/target.sqlite"
    imported = run(target, "import", str(source["moderator"]))
    assert imported.exit_code == 0, imported.output
    game_id = source["game"]
    assert f"imported {game_id}" in imported.stdout and "710 rehashed" in imported.stdout

    before, after = run(source["url"], "verify", game_id), run(target, "verify", game_id)
    chain = [line for line in before.stdout.splitlines() if line.startswith("hash chain ok")]
    assert chain and chain[0] in after.stdout.splitlines()
    for args in (["state", game_id, "--as", "moderator", "--json"], ["state", game_id, "--as", "italy", "--at", "300", "--json"],
                 ["log", game_id, "--as", "moderator", "--json"], ["log", game_id, "--as", "thrace"]):
        a, b = run(source["url"], *args), run(target, *args)
        assert a.exit_code == b.exit_code == 0, (a.output, b.output)
        assert a.stdout == b.stdout, args

    src_game, _, src_events = _rows(source["url"], game_id)
    game, players, events = _rows(target, game_id)
    assert game.status == imported_status() and game.secret_seed == ""
    assert game.seed_commitment == src_game.seed_commitment and game.options == src_game.options
    assert game.moderator_email == MODERATOR_ADDRESS
    seats = json.loads(run(source["url"], "state", game_id, "--json").stdout)["players"]
    assert [(p.id, p.name, p.nation) for p in players] == [(p["id"], p["name"], p["nation"]) for p in seats]
    assert all(p.email == f"imported+{p.id}@invalid" and p.secret_hash is None for p in players)
    assert [(e.version, e.hash, e.payload, e.metadata, e.superseded_by) for e in events] == [
        (e.version, e.hash, e.payload, e.metadata, e.superseded_by) for e in src_events]
    assert all(e.dedupe_key is None for e in events), "another installation's dedupe keys are not stored"

    # The copy is the log as it was: given the seed, the engine re-derives every draw of it.
    db = make_engine(target)
    with db.begin() as conn:
        conn.execute(update(games).where(games.c.game_id == game_id).values(secret_seed=source["recorded"]["secret_seed"]))
    db.dispose()
    full = run(target, "verify", game_id)
    assert full.exit_code == 0 and "re-derivation ok" in full.stdout, full.output


def test_the_export_carries_no_address_secret_or_seed(source):
    game, players, _ = _rows(source["url"], source["game"])
    text = source["moderator"].read_text(encoding="utf-8")
    header = json.loads(text.splitlines()[0])
    assert header["format"] == "pbem-export" and header["format_version"] == 1 and header["exported_as"] == "moderator"
    assert header["head"]["version"] == 710 and header["seed_commitment"] == game.seed_commitment
    for secret in (game.secret_seed, game.reply_secret, game.moderator_email, *(p.email for p in players)):
        assert secret not in text
    assert f"@{MAIL}" in text, "the moderator's export keeps the Message-IDs (metadata, dedupe keys)"


def test_the_game_id_cannot_be_reused_or_renamed(source, tmp_path):
    again = run(source["url"], "import", str(source["moderator"]))
    assert again.exit_code == 2 and "exists in this database already" in again.stderr
    assert "break the chain" in again.stderr

    renamed = _lines(source["moderator"])
    renamed[0]["game_id"] = "another-name"
    result = run(f"sqlite:///{tmp_path}/t.sqlite", "import", str(_write(tmp_path / "renamed.jsonl", renamed)))
    assert result.exit_code == 2 and "broken at version 1: hash mismatch at version 1" in result.stderr


def test_player_ids_in_use_are_refused(source, tmp_path):
    target = f"sqlite:///{tmp_path}/busy.sqlite"
    other, _ = _load(UNFINISHED, target, by_mail=False)
    db = make_engine(target)
    with UnitOfWork(db) as uow:  # players 1 to 4 of another game
        for n in range(1, 5):
            uow.players.add(other, f"Bot{n}", f"bot{n}@example.org")
    db.dispose()
    result = run(target, "import", str(source["moderator"]))
    assert result.exit_code == 2 and "player ids 1, 2, 3" in result.stderr and "nothing was stored" in result.stderr
    game, _, events = _rows(target, source["game"])
    assert game is None and events == []


def test_an_imported_game_sends_no_mail_and_is_not_played(source, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    target = f"sqlite:///{tmp_path}/target.sqlite"
    assert run(target, "import", str(source["moderator"])).exit_code == 0
    tick = run(target, "tick")
    assert tick.exit_code == 0, tick.output
    _, _, events = _rows(target, source["game"])
    assert len(events) == 710
    db = make_engine(target)
    with UnitOfWork(db) as uow:
        assert uow.outbox.list() == []
    db.dispose()


def test_an_imported_game_in_progress_is_not_played_by_the_clock(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    origin, target = f"sqlite:///{tmp_path}/o.sqlite", f"sqlite:///{tmp_path}/t.sqlite"
    game_id, _ = _load(UNFINISHED, origin, by_mail=False)
    exported = run(origin, "export", game_id)
    assert run(target, "import", "-", input=exported.stdout_bytes).exit_code == 0
    run(target, "tick")
    _, _, events = _rows(target, game_id)
    assert len(events) == 497


def test_a_revealed_seed_is_stored_and_every_draw_re_derives(tmp_path):
    origin, target = f"sqlite:///{tmp_path}/o.sqlite", f"sqlite:///{tmp_path}/t.sqlite"
    game_id, recorded = _load(FINISHED, origin, by_mail=False, reveal="everyone")
    exported = run(origin, "export", game_id, "--as", "observer")
    seen = [json.loads(line) for line in exported.stdout.splitlines()]
    assert seen[-1]["type"] == "SeedRevealed" and seen[-1]["payload"]["seed"] == recorded["secret_seed"]
    complete = run(origin, "export", game_id)
    imported = run(target, "import", "-", input=complete.stdout_bytes)
    assert imported.exit_code == 0 and "does not reveal" not in imported.stdout, imported.output
    game, _, _ = _rows(target, game_id)
    assert game.secret_seed == recorded["secret_seed"]
    full = run(target, "verify", game_id)
    assert full.exit_code == 0 and "re-derivation ok" in full.stdout, full.output


# -- a tampered export --------------------------------------------------------------------------------


def _changed_payload(lines: list[dict]) -> int:
    line = next(x for x in lines[1:] if x["type"] == "TokensMoved" and x["version"] > 200)
    line["payload"]["count"] += 1
    return line["version"]


def _deleted(lines: list[dict]) -> int:
    del lines[300]
    return 300


def _swapped(lines: list[dict]) -> int:
    lines[400], lines[401] = lines[401], lines[400]
    return 400


def _changed_hash(lines: list[dict]) -> int:
    lines[500]["hash"] = "f" * 64
    return 500


def _last_cut(lines: list[dict]) -> int:
    del lines[-1]
    return 710


@pytest.mark.parametrize("tamper, why", [
    (_changed_payload, "hash mismatch at version"),
    (_deleted, "is missing or out of place"),
    (_swapped, "is missing or out of place"),
    (_changed_hash, "hash mismatch at version"),
    (_last_cut, "the events after version 709 are missing"),
], ids=["payload", "deleted-line", "swapped-lines", "hash", "last-line-cut"])
def test_a_tampered_export_is_refused_naming_the_first_broken_version(source, tmp_path, tamper, why):
    lines = _lines(source["moderator"])
    version = tamper(lines)
    path = _write(tmp_path / "tampered.jsonl", lines)
    target = f"sqlite:///{tmp_path}/target.sqlite"
    for args in (["import", str(path)], ["import", "--check", str(path)]):
        result = run(target, *args)
        assert result.exit_code == 2, result.output
        assert result.stderr.count("\n") == 1, "one line"
        assert f"broken at version {version}:" in result.stderr and why in result.stderr, result.stderr
    game, _, events = _rows(target, source["game"])
    assert game is None and events == [], "nothing stored"


def test_a_withheld_event_whose_hash_was_changed_breaks_the_next_link(source, tmp_path):
    lines = _lines(source["illyria"])
    hidden = next(x for x in lines[1:] if "withheld" in x and x["version"] < 700)
    hidden["hash"] = "0" * 64
    result = run(source["url"], "import", "--check", str(_write(tmp_path / "t.jsonl", lines)))
    assert result.exit_code == 2
    assert f"broken at version {hidden['version'] + 1}: prev_hash" in result.stderr and "withheld" in result.stderr


@pytest.mark.parametrize("text, why", [
    ("", "empty"),
    ("hello\n", "not JSON"),
    ('{"format": "pbem-export", "format_version": 2}\n', "format version 2"),
    ('{"format": "pbem-export", "format_version": 1}\n', "the header lacks"),
])
def test_what_is_not_an_export_is_refused_in_one_line(tmp_path, text, why):
    path = tmp_path / "x.jsonl"
    path.write_text(text)
    result = run(f"sqlite:///{tmp_path}/t.sqlite", "import", str(path))
    assert result.exit_code == 2 and why in result.stderr and result.stderr.count("\n") == 1, result.stderr


def test_non_utf8_is_named_by_line():
    with pytest.raises(ExportError, match="line 2 is not UTF-8"):
        decode(b'{"a": 1}\n\xff\xfe\n')


# -- a player's export --------------------------------------------------------------------------------


def test_a_player_export_withholds_what_is_not_his_and_still_checks(source):
    mine, full = _lines(source["illyria"]), _lines(source["moderator"])
    assert mine[0]["exported_as"] == "player:illyria"
    assert mine[0]["head"] == full[0]["head"] and mine[-1]["hash"] == full[0]["head"]["hash"]
    assert [(x["version"], x["type"], x["prev_hash"], x["hash"]) for x in mine[1:]] == [
        (x["version"], x["type"], x["prev_hash"], x["hash"]) for x in full[1:]]
    draws = [x for x in mine[1:] if x["type"] == "TradeCardsDrawn"]
    others = [x for x, f in zip(mine[1:], full[1:]) if f["type"] == "TradeCardsDrawn" and f["payload"]["nation"] != "Illyria"]
    assert others and all(x["withheld"] == ["payload", "metadata"] and "payload" not in x for x in others)
    assert any(x.get("payload", {}).get("nation") == "Illyria" for x in draws), "his own draws are his"
    assert all(x.get("withheld") for x in mine[1:] if x["type"] == "StacksSetUp")
    text = source["illyria"].read_text(encoding="utf-8")
    assert f"@{MAIL}" not in text and "mail:" not in text, "no Message-ID"
    assert all("dedupe_key" not in x for x in mine[1:])
    assert any("payload" in x and "withheld" in x for x in mine[1:]), "metadata with a Message-ID goes, the payload stays"

    check = run(source["url"], "import", "--check", str(source["illyria"]))
    assert check.exit_code == 0, check.output
    withheld = sum(1 for x in mine[1:] if x.get("withheld"))
    assert f"{withheld} withheld (links checked)" in check.stdout and full[0]["head"]["hash"] in check.stdout

    refused = run(source["url"], "import", str(source["illyria"]))
    assert refused.exit_code == 2 and "cannot be replayed" in refused.stderr


def test_an_observer_reads_no_hand_and_an_auditor_of_an_ended_game_reads_all(source):
    observer = _lines(source["observer"])
    assert all(x.get("withheld") for x in observer[1:] if x["type"] in ("TradeCardsDrawn", "OfferMade", "TradeExecuted"))
    auditor = _lines(source["auditor"])
    assert not any("withheld" in x for x in auditor[1:]) and auditor[0]["exported_as"] == "auditor"
    result = check_export(read_export(source["observer"].read_text(encoding="utf-8").splitlines()))
    assert result.ok and result.rehashed + result.withheld == 710 and result.withheld > 0


# -- who reads what (pbem/audit/disclosure.py) --------------------------------------------------------


def test_every_event_type_of_the_engine_has_a_rule():
    assert set(engine.NARRATE) <= set(RULES), "decide who may read a new event type in pbem/audit/disclosure.py"


def _table() -> GameState:
    players = (Player(1, "Ann", "Egypt"), Player(2, "Bob", "Crete"), Player(3, "Cy", "Babylon"))
    return GameState(game_id="g", players=players)


def test_private_events_are_read_by_their_nations_and_the_overseers():
    before = _table()
    drawn = {"nation": "Egypt", "cards": ["Ochre"]}
    assert readers("TradeCardsDrawn", drawn, before) == {"player:egypt"}
    assert may_read("player:egypt", "TradeCardsDrawn", drawn, before, finished=False)
    assert not may_read("player:crete", "TradeCardsDrawn", drawn, before, finished=False)
    assert not may_read("auditor", "TradeCardsDrawn", drawn, before, finished=False), "an auditor waits for the end"
    assert may_read("auditor", "TradeCardsDrawn", drawn, before, finished=True)
    assert may_read("moderator", "TradeCardsDrawn", drawn, before, finished=False)
    trade = {"offerer": "Egypt", "acceptor": "Crete", "offerer_gives": ["Ochre"], "acceptor_gives": ["Hides"]}
    assert readers("TradeExecuted", trade, before) == {"player:egypt", "player:crete"}
    assert readers("SpoilsTaken", {"attacker": "Egypt", "defender": "Crete", "card": None}, before) is None
    assert readers("StacksSetUp", {"stacks": {}}, before) == frozenset()
    assert readers("TimezoneSet", {"player": 2, "zone": "UTC"}, before) == {"player:crete"}
    assert readers("SomethingNew", {}, before) == frozenset(), "an unknown type is the overseers' alone"
    assert not may_read("player:egypt", "TokensMoved", {"nation": "Egypt"}, before, finished=False, superseded=True)


def test_press_is_read_by_its_sender_and_those_it_names():
    before = _table()
    private = {"player": 1, "to": ["Crete"], "text": "hi", "anonymous": False}
    assert readers("PressSent", private, before) == {"player:egypt", "player:crete"}
    public = {**private, "to": ["ALL"]}
    assert readers("PressSent", public, before) == {"player:egypt", "player:crete", "player:babylon", "observer"}
    assert may_read("auditor", "PressSent", public, before, finished=False)
    assert readers("PressSent", {**public, "anonymous": True}, before) == {"player:egypt"}


def test_a_seed_revealed_to_the_moderator_stays_his():
    before = _table()
    secret = {"seed": "s", "to": "moderator"}
    assert may_read("moderator", "SeedRevealed", secret, before, finished=True)
    assert not may_read("auditor", "SeedRevealed", secret, before, finished=True)
    assert not may_read("player:egypt", "SeedRevealed", secret, before, finished=True)
    assert may_read("observer", "SeedRevealed", {"seed": "s", "to": "everyone"}, before, finished=True)


def test_metadata_with_a_message_id_or_a_service_note_is_withheld():
    base = {"actor": "player:1", "source": "cli", "recorded_at": "2026-01-01T00:00:00+00:00", "engine_version": "0.6.0"}
    assert metadata_public(base)
    assert not metadata_public({**base, "source": "mail:<abc@example.org>"})  # engines before 0.6.0 wrote it whole
    assert metadata_public({**base, "source": mail_source("<abc@example.org>")})  # now a digest: no server named
    assert mail_source("<abc@example.org>") == "mail:" + hashlib.sha256(b"<abc@example.org>").hexdigest()[:16]
    assert not metadata_public({**base, "missed": [2]})


def test_revealed_seed_is_read_from_the_export_only():
    header = {"format": "pbem-export", "format_version": 1, "game_id": "g", "ruleset": "r", "options": {},
              "seed_commitment": "c", "created_at": "2026-01-01T00:00:00+00:00", "exported_as": "moderator",
              "head": {"version": 0, "hash": "0" * 64}, "engine_version": "x"}
    export = read_export([json.dumps(header)])
    assert revealed_seed(export) is None and check_export(export).ok



def test_the_header_may_add_service_options_but_not_change_the_recorded_ones(source, tmp_path):
    lines = _lines(source["moderator"])
    lines[0]["options"] = {**lines[0]["options"], "deadline-hours": "72"}
    assert run(source["url"], "import", "--check", str(_write(tmp_path / "more.jsonl", lines))).exit_code == 0
    lines[0]["options"]["last-turn"] = "12"
    result = run(source["url"], "import", "--check", str(_write(tmp_path / "changed.jsonl", lines)))
    assert result.exit_code == 2 and "broken at version 1: the header's options differ" in result.stderr


def test_a_rollback_travels_with_what_it_superseded(tmp_path):
    """Superseded events keep their mark in a complete export and on import; a player reads only the rollback."""
    origin, target = f"sqlite:///{tmp_path}/o.sqlite", f"sqlite:///{tmp_path}/t.sqlite"
    recorded = read(UNFINISHED)
    events = [Event.from_payload(e["type"], e["payload"]) for e in recorded.events]
    to = next(v for v in range(400, len(events)) if engine.is_input(events[v]))
    back = roll_back(events, RollBack(to, "a mistyped order"))[0]
    recorded.events.append({"type": back.type, "payload": back.payload(), "metadata": recorded.events[-1]["metadata"],
                            "dedupe_key": None})
    db = make_engine(origin)
    ensure_schema(db)
    game_id = load_into(db, recorded)
    with UnitOfWork(db) as uow:
        assert uow.events.mark_superseded(game_id, to, len(events), len(events) + 1) == len(events) - to
    db.dispose()

    complete = run(origin, "export", game_id)
    assert run(target, "import", "-", input=complete.stdout_bytes).exit_code == 0
    _, _, stored = _rows(target, game_id)
    assert [e.superseded_by for e in stored] == [None] * to + [len(events) + 1] * (len(events) - to) + [None]
    for args in (["log", game_id, "--as", "moderator", "--json"], ["state", game_id, "--as", "moderator", "--json"]):
        assert run(origin, *args).stdout == run(target, *args).stdout

    seat = json.loads(run(origin, "state", game_id, "--json").stdout)["players"][0]["nation"]
    partial = [json.loads(x) for x in run(origin, "export", game_id, "--as", seat).stdout.splitlines()]
    assert all(x.get("withheld") for x in partial[to + 1 : len(events) + 1]), "what was undone is not his to read"
    assert partial[-1]["type"] == "RolledBack" and partial[-1]["payload"]["to"] == to
    assert check_export(read_export(map(json.dumps, partial))).ok


def test_an_import_on_either_backend_leaves_the_player_ids_to_come_free(source, db_engine):
    """Players are stored under the log's ids; PostgreSQL's id sequence must move past them (SQLite does by itself)."""
    export = read_export(source["moderator"].read_text(encoding="utf-8").splitlines())
    with UnitOfWork(db_engine) as uow:
        store_export(uow, export)
    with UnitOfWork(db_engine) as uow:
        uow.games.create("next", ruleset="advciv-1991", moderator_email="m@example.org", now=datetime.now(UTC))
        assert uow.players.add("next", "Dee", "dee@example.org") == 4
        assert uow.events.head(source["game"]) == (710, export.header["head"]["hash"])


def test_the_reveal_of_a_traded_calamity_is_read_whole_only_by_the_parties_to_its_trade():
    """Phase 8's reveal is public, but its payload names who traded a calamity: a secret of the two (§28)."""
    before = GameState(game_id="g", players=(Player(1, "A", "Egypt"), Player(2, "B", "Crete"), Player(3, "C", "Thrace")))
    untraded = {"calamities": [{"calamity": "Flood", "victim": "Egypt", "giver": None, "stack": 2}]}
    traded = {"calamities": [{"calamity": "Superstition", "victim": "Egypt", "giver": "Crete", "stack": 3}]}
    assert readers("CalamitiesRevealed", untraded, before) is None
    assert readers("CalamitiesRevealed", traded, before) == {"player:egypt", "player:crete"}
    assert not may_read("player:thrace", "CalamitiesRevealed", traded, before, finished=False)
    assert not may_read("observer", "CalamitiesRevealed", traded, before, finished=False)
    assert may_read("player:crete", "CalamitiesRevealed", traded, before, finished=False)


def test_an_export_line_writes_every_control_character_as_a_json_escape_and_reads_back_the_same():
    """JSON writes DEL, C1 controls and bidi overrides raw; an export shown on a terminal must obey none of them."""
    value = {"text": "\x1b[2J \x9b31m \u202e \x7f \u2028 \ud800 é\n", "n": 1}
    line = dump_line(value)
    assert line.isascii() is False and "é" in line  # UTF-8 characters stay themselves
    assert [c for c in line if c < " " or "\x7f" <= c <= "\x9f" or c in "\u202e\u2028\ud800"] == []
    assert "\\u009b31m \\u202e \\u007f \\u2028 \\ud800" in line
    assert json.loads(line) == value
