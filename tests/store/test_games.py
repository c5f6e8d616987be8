"""Contract suite for games and players (SQLite and PostgreSQL)."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone

import pytest
from sqlalchemy.exc import IntegrityError

from pbem.store import Games, Players, check_secret, hash_secret

NOW = datetime(2024, 11, 22, 12, 0, tzinfo=timezone.utc)


def test_create_and_get_game(db_engine):
    with db_engine.begin() as conn:
        games = Games(conn)
        row = games.create(
            "g1", ruleset="advciv-1991", moderator_email=" Mod@Example.ORG ",
            options={"small_cities": True, "nations": 7}, secret_seed="s3cret", now=NOW,
        )
        assert row.game_id == "g1"
        assert row.options == {"small_cities": True, "nations": 7}
        assert row.seed_commitment == hashlib.sha256(b"s3cret").hexdigest()
        assert row.status == "setup"
        assert row.created_at == NOW
        assert row.moderator_email == "mod@example.org"
        assert len(row.reply_secret) == 64
        assert games.get("nope") is None

        other = games.create("g0", ruleset="advciv-1991", moderator_email="m@x",
                             now=NOW)
        assert len(other.secret_seed) == 64
        assert other.seed_commitment == hashlib.sha256(
            other.secret_seed.encode()).hexdigest()
        assert other.reply_secret != row.reply_secret

        games.set_status("g1", "active")
        assert games.get("g1").status == "active"
        assert [g.game_id for g in games.list()] == ["g0", "g1"]
        assert [g.game_id for g in games.list(status="active")] == ["g1"]
        with pytest.raises(ValueError):
            games.set_status("g1", "paused")
        with pytest.raises(KeyError):
            games.set_status("nope", "active")


def test_players(db_engine):
    with db_engine.begin() as conn:
        Games(conn).create("g", ruleset="advciv", moderator_email="m@x", now=NOW)
        players = Players(conn)
        ann = players.add("g", "Ann", "Ann@Example.org", nation="Crete", secret="open sesame")
        bob = players.add("g", "Bob", "bob@example.org")
        bob2 = players.add("g", "Bob's second", "BOB@example.org", nation="Egypt")
        assert [p.id for p in players.list("g")] == [ann, bob, bob2]
        assert [p.id for p in players.by_email("g", " bob@EXAMPLE.org")] == [bob, bob2]
        assert players.by_email("g", "nobody@x") == []
        assert players.by_email("other", "bob@example.org") == []
        assert players.by_name("g", "Ann").id == ann
        assert players.by_id(ann).email == "ann@example.org"
        assert players.by_nation("g", "Egypt").id == bob2
        assert players.by_id(9999) is None

        assert players.by_id(bob).nation is None
        players.set_nation(bob, "Babylon")
        assert players.by_id(bob).nation == "Babylon"

        stored = players.by_id(ann).secret_hash
        assert "open sesame" not in stored
        assert players.check_secret(stored, "open sesame")
        assert not players.check_secret(stored, "open sesame ")
        assert players.verify_secret(ann, "open sesame")
        assert not players.verify_secret(bob, "anything")  # no secret set
        players.set_secret(bob, "b")
        assert players.verify_secret(bob, "b")


def test_player_names_are_unique_per_game(db_engine):
    with pytest.raises(IntegrityError):
        with db_engine.begin() as conn:
            Games(conn).create("g", ruleset="advciv", moderator_email="m@x", now=NOW)
            Players(conn).add("g", "Ann", "a@x")
            Players(conn).add("g", "Ann", "b@x")


def test_players_need_an_existing_game(db_engine):
    with pytest.raises(IntegrityError):
        with db_engine.begin() as conn:
            Players(conn).add("no-such-game", "Ann", "a@x")


def test_secret_hashing():
    stored = hash_secret("tea for two")
    assert stored.startswith("scrypt$")
    assert stored != hash_secret("tea for two")  # salted
    assert check_secret(stored, "tea for two")
    assert not check_secret(stored, "tea for three")
    assert not check_secret(None, "x")
    assert not check_secret("garbage", "x")
    assert not check_secret("scrypt$1$2$3$zz$zz", "x")
