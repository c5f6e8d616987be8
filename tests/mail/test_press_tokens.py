"""Press reply addresses (issue 29): signed like reply addresses, bound to one press and one seat."""

from __future__ import annotations

import re

import pytest

from pbem.mail.tokens import (
    parse_game_address,
    parse_press_reply_address,
    parse_reply_address,
    press_reply_address,
    press_reply_shaped,
    reply_address,
)
from pbem.service.press_replies import relay_text

KEYS = {"nile-1": b"k" * 32, "tigris-2": b"t" * 32}


def key_for_game(game_id: str) -> bytes | None:
    return KEYS.get(game_id)


def test_press_reply_address_round_trip_and_shape():
    address = press_reply_address(KEYS["nile-1"], "nile-1", 3, 57, "civ.example.org")
    assert re.fullmatch(r"pbem\+nile-1\.3\.p57\.[0-9a-f]{16}@civ\.example\.org", address)
    assert parse_press_reply_address(address, key_for_game) == ("nile-1", 3, 57)
    assert parse_press_reply_address(address.upper(), key_for_game) == ("nile-1", 3, 57)
    assert press_reply_shaped(address) == "nile-1"


def test_a_press_reply_address_is_no_plain_reply_address_nor_the_reverse():
    press = press_reply_address(KEYS["nile-1"], "nile-1", 3, 57, "x.org")
    plain = reply_address(KEYS["nile-1"], "nile-1", 3, "x.org")
    assert parse_reply_address(press, key_for_game) is None and parse_game_address(press) is None
    assert parse_press_reply_address(plain, key_for_game) is None
    token = plain.split("@")[0].rsplit(".", 1)[1]
    assert parse_press_reply_address(f"pbem+nile-1.3.p57.{token}@x.org", key_for_game) is None


@pytest.mark.parametrize("change", ["token", "version", "player", "game", "generation"])
def test_altered_press_reply_addresses_are_refused(change):
    address = press_reply_address(KEYS["nile-1"], "nile-1", 3, 57, "x.org")
    local, domain = address.split("@")
    token = local.rsplit(".", 1)[1]
    generation = None
    if change == "token":
        address = f"pbem+nile-1.3.p57.{('0' if token[0] != '0' else '1') + token[1:]}@{domain}"
    elif change == "version":
        address = f"pbem+nile-1.3.p58.{token}@{domain}"
    elif change == "player":
        address = f"pbem+nile-1.4.p57.{token}@{domain}"
    elif change == "game":
        address = f"pbem+tigris-2.3.p57.{token}@{domain}"
    else:  # the seat was handed over since: the old press letters no longer answer for it
        generation = lambda game, player: 1  # noqa: E731
    assert parse_press_reply_address(address, key_for_game, generation_for=generation) is None


def test_relayed_text_keeps_the_writers_lines_and_never_his_secret():
    assert relay_text("Deal if you add one more card.\nSECRET abc123\n\nBen") == "Deal if you add one more card.\n\nBen"
    assert relay_text("  secret: abc\n") == ""
    assert relay_text("Secret meeting at dawn?") == "Secret meeting at dawn?"  # no SECRET line: the server reads none
