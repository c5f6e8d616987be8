"""Reply-address tokens: round trips, and forgeries refused."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.mail.tokens import (
    game_address,
    parse_game_address,
    parse_reply_address,
    reply_address,
    reply_token,
)

KEYS = {"nile-1": b"k" * 32, "tigris-2": b"t" * 32}


def key_for_game(game_id: str) -> bytes | None:
    return KEYS.get(game_id)


def test_reply_address_shape_and_round_trip():
    address = reply_address(KEYS["nile-1"], "nile-1", 3, "civ.example.org")
    assert re.fullmatch(r"pbem\+nile-1\.3\.[0-9a-f]{16}@civ\.example\.org", address)
    assert parse_reply_address(address, key_for_game) == ("nile-1", 3)


def test_token_is_hmac_sha256_prefix():
    import hashlib
    import hmac

    expected = hmac.new(KEYS["nile-1"], b"nile-1:3", hashlib.sha256).hexdigest()[:16]
    assert reply_token(KEYS["nile-1"], "nile-1", 3) == expected


def test_case_insensitive_and_display_name_forms():
    address = reply_address(KEYS["nile-1"], "nile-1", 3, "civ.example.org")
    assert parse_reply_address(address.upper(), key_for_game) == ("nile-1", 3)
    assert parse_reply_address(f"Civ Server <{address}>", key_for_game) == ("nile-1", 3)
    assert parse_reply_address(f"  <{address}> ", key_for_game) == ("nile-1", 3)


def test_custom_local_part():
    address = reply_address(KEYS["nile-1"], "nile-1", 0, "x.org", local="civ")
    assert address.startswith("civ+nile-1.0.")
    assert parse_reply_address(address, key_for_game, local="civ") == ("nile-1", 0)
    assert parse_reply_address(address, key_for_game) is None  # local "pbem" expected


def _flip(ch: str) -> str:
    return "0" if ch != "0" else "1"


def test_forged_and_altered_tokens_are_refused():
    address = reply_address(KEYS["nile-1"], "nile-1", 3, "civ.example.org")
    local, domain = address.split("@")
    prefix, token = local.rsplit(".", 1)
    # every single-character alteration of the token is refused
    for i in range(len(token)):
        forged = f"{prefix}.{token[:i]}{_flip(token[i])}{token[i + 1:]}@{domain}"
        assert parse_reply_address(forged, key_for_game) is None
    # truncated / extended tokens
    assert parse_reply_address(f"{prefix}.{token[:-1]}@{domain}", key_for_game) is None
    assert parse_reply_address(f"{prefix}.{token}0@{domain}", key_for_game) is None
    # another player's number with this player's token
    assert parse_reply_address(address.replace(".3.", ".4."), key_for_game) is None
    # a token made with the wrong key
    wrong = reply_address(b"not the key", "nile-1", 3, "civ.example.org")
    assert parse_reply_address(wrong, key_for_game) is None


def test_token_of_another_game_is_refused():
    other = reply_address(KEYS["tigris-2"], "tigris-2", 3, "civ.example.org")
    token = other.split("@")[0].rsplit(".", 1)[1]
    transplanted = f"pbem+nile-1.3.{token}@civ.example.org"
    assert parse_reply_address(transplanted, key_for_game) is None
    # and the same key reused for a different game id still binds the game id
    same_key = reply_address(KEYS["nile-1"], "nile-2", 3, "civ.example.org")
    token = same_key.split("@")[0].rsplit(".", 1)[1]
    assert parse_reply_address(f"pbem+nile-1.3.{token}@civ.example.org", key_for_game) is None


@pytest.mark.parametrize(
    "address",
    [
        "",
        "pbem@civ.example.org",
        "pbem+nile-1@civ.example.org",
        "pbem+unknown-game.3.0123456789abcdef@civ.example.org",
        "pbem+nile-1.03.0123456789abcdef@civ.example.org",
        "pbem+nile-1.-3.0123456789abcdef@civ.example.org",
        "pbem+nile-1.x.0123456789abcdef@civ.example.org",
        "pbem+nile_1.3.0123456789abcdef@civ.example.org",
        "pbem+nile-1.3.0123456789abcdeg@civ.example.org",
        "pbem+nile-1.3.0123456789abcdef",
        "pbem+nile-1.3.0123456789abcdef@a@b",
        "other+nile-1.3.0123456789abcdef@civ.example.org",
        "not an address at all",
    ],
)
def test_garbage_is_refused(address):
    assert parse_reply_address(address, key_for_game) is None


def test_unknown_game_is_not_looked_up_beyond_key_for_game():
    seen = []

    def lookup(game_id):
        seen.append(game_id)
        return None

    assert parse_reply_address("pbem+ghost.1.0123456789abcdef@x.org", lookup) is None
    assert seen == ["ghost"]


def test_key_lookup_errors_propagate():
    def broken(game_id):
        raise RuntimeError("database down")

    address = reply_address(KEYS["nile-1"], "nile-1", 3, "x.org")
    with pytest.raises(RuntimeError):
        parse_reply_address(address, broken)


def test_game_address():
    assert game_address("nile-1", "Civ.Example.org") == "pbem+nile-1@civ.example.org"
    assert parse_game_address("pbem+nile-1@civ.example.org") == "nile-1"
    assert parse_game_address("PBEM+Nile-1@civ.example.org") == "nile-1"
    assert parse_game_address("Game <pbem+nile-1@x.org>") == "nile-1"
    assert parse_game_address("civ+nile-1@x.org", local="civ") == "nile-1"
    assert parse_game_address("pbem+nile-1.3.0123456789abcdef@x.org") is None
    assert parse_game_address("pbem@x.org") is None
    assert parse_game_address("pbem+@x.org") is None
    assert parse_game_address("pbem+nile 1@x.org") is None


@pytest.mark.parametrize("game_id", ["Nile", "nile_1", "", "nile.1", "nile 1"])
def test_invalid_game_ids_are_refused_when_minting(game_id):
    with pytest.raises(ValueError):
        reply_address(b"k", game_id, 1, "x.org")
    with pytest.raises(ValueError):
        game_address(game_id, "x.org")


@pytest.mark.parametrize("player_id", [-1, True, "3", 1.5])
def test_invalid_player_ids_are_refused_when_minting(player_id):
    with pytest.raises(ValueError):
        reply_address(b"k", "nile-1", player_id, "x.org")


@settings(max_examples=200, deadline=None)
@given(
    game_id=st.from_regex(r"[a-z0-9-]{1,30}", fullmatch=True),
    player_id=st.integers(min_value=0, max_value=10**12),
    key=st.binary(min_size=1, max_size=64),
)
def test_round_trip_property(game_id, player_id, key):
    address = reply_address(key, game_id, player_id, "civ.example.org")
    assert parse_reply_address(address, lambda g: key if g == game_id else None) == (game_id, player_id)
    assert parse_reply_address(address, lambda g: key + b"x") is None
    assert parse_game_address(address) is None
    assert parse_game_address(game_address(game_id, "civ.example.org")) == game_id
