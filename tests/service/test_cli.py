"""The `pbem` command as an operator and a moderator use it (docs/cli.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest
from sqlalchemy import text

from pbem.rules.ruleset.options import option_docs
from pbem.store.database import make_engine

PBEM = [sys.executable, "-m", "pbem.cli"]


def pbem(db_url: str, *args: str, stdin: str | bytes = "", cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PBEM_DATABASE_URL": db_url, "PBEM_MAILDIR": str((cwd or Path.cwd()) / "mail")}
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([*PBEM, *args], input=data, capture_output=True, env=env, cwd=cwd, timeout=60)


def out(result: subprocess.CompletedProcess) -> str:
    return result.stdout.decode() + result.stderr.decode()


@pytest.fixture
def game(db_url, tmp_path):
    created = pbem(
        db_url,
        "game", "create", "g1",
        "--player", "Ann:ann@example.org",
        "--player", "Ben:ben@example.org:Thrace",
        "--player", "Cy:cy@example.org",
        "--seed", "cli-seed",
        cwd=tmp_path,
    )
    assert created.returncode == 0, out(created)
    return db_url, tmp_path


def setup_turns(db_url, cwd):
    """Who is asked now, from `pbem state --json`."""
    view = json.loads(pbem(db_url, "state", "g1", "--json", cwd=cwd).stdout)
    return view


def test_create_refuses_bad_requests_with_a_reason(db_url, tmp_path):
    bad_option = pbem(db_url, "game", "create", "g2", "--player", "A:a@x.org", "--player", "B:b@x.org",
                      "--option", "beneficiary-rule=2000", cwd=tmp_path)
    assert bad_option.returncode == 2 and "beneficiary-rule takes one of seed, 1991" in out(bad_option)
    bad_player = pbem(db_url, "game", "create", "g2", "--player", "nobody", cwd=tmp_path)
    assert bad_player.returncode == 2 and "NAME:EMAIL" in out(bad_player)
    bad_nation = pbem(db_url, "game", "create", "g2", "--player", "A:a@x.org:Egypt", "--player", "B:b@x.org",
                      "--player", "C:c@x.org", cwd=tmp_path)
    assert bad_nation.returncode == 2 and "Egypt cannot play" in out(bad_nation)


def test_submit_state_log_and_verify_through_setup(game):
    db_url, cwd = game
    for _ in range(5):
        view = setup_turns(db_url, cwd)
        if view["phase"] != "setup":
            break
        (who, asked), = view["pending"].items()
        orders = {"choose-nation": "nation crete\nplace knossos", "place-start-token": "PLACE Scythia"}[asked["step"]]
        if asked["step"] == "choose-nation" and any(n == "crete" for n in view["nations"]):
            orders = "NATION Africa\nPLACE Sahara"
        result = pbem(db_url, "submit", "g1", "--as", asked["player"], stdin=orders, cwd=cwd)
        assert result.returncode == 0, out(result)
        assert "accepted: " in out(result)
    view = setup_turns(db_url, cwd)
    assert view["phase"] != "setup" and view["turn"] == 1
    # one start token, then population expansion of turn 1 adds one (§20)
    assert view["nations"]["thrace"]["tokens_on_board"] == 2
    assert view["areas"]["Scythia"]["tokens"] == {"Thrace": 2}
    assert "hand" not in view["nations"]["thrace"]  # an observer sees no hands
    mine = json.loads(pbem(db_url, "state", "g1", "--as", "thrace", "--json", cwd=cwd).stdout)
    assert mine["nations"]["thrace"]["hand"] == []
    early = json.loads(pbem(db_url, "state", "g1", "--at", "2", "--json", cwd=cwd).stdout)
    assert early["version"] == 2 and early["phase"] == "setup"

    log = out(pbem(db_url, "log", "g1", cwd=cwd))
    assert "Place cards dealt" in log and "[§15.4" in log
    entries = json.loads(pbem(db_url, "log", "g1", "--as", "moderator", "--json", cwd=cwd).stdout)
    assert entries[0]["version"] == 1 and entries[0]["actor"] == "moderator"

    verified = pbem(db_url, "verify", "g1", cwd=cwd)
    assert verified.returncode == 0, out(verified)
    assert "hash chain ok" in out(verified) and "re-derivation ok" in out(verified)


def test_submit_exit_code_and_errors_by_line(game):
    db_url, cwd = game
    view = setup_turns(db_url, cwd)
    (who, asked), = view["pending"].items()
    result = pbem(db_url, "submit", "g1", "--as", asked["player"], stdin="hello there\nNATION Atlantis\nNATTOON Egypt\n", cwd=cwd)
    assert result.returncode == 1
    text_out = out(result)
    # a line that is no order attempt is listed as not read, never as an error
    assert "line 1 rejected" not in text_out and "not read as orders: 1 line" in text_out
    assert "line 2 rejected" in text_out and "line 3 rejected: 'NATTOON Egypt': unknown order 'NATTOON'" in text_out
    unknown = pbem(db_url, "submit", "g1", "--as", "Zed", stdin="NATION Crete", cwd=cwd)
    assert unknown.returncode == 2 and "no player or nation" in out(unknown)


def test_verify_names_the_first_tampered_event(game):
    db_url, cwd = game
    engine = make_engine(db_url)
    with engine.begin() as conn:
        conn.execute(
            text("UPDATE events SET payload = :p WHERE game_id = 'g1' AND version = 2"),
            {"p": json.dumps({"order": [3, 2, 1], "cites": ["§15.4"]}, separators=(",", ":"), sort_keys=True)},
        )
    engine.dispose()
    result = pbem(db_url, "verify", "g1", cwd=cwd)
    assert result.returncode == 1
    assert "BROKEN at version 2" in out(result)


def test_moderator_deadline_applies_defaults(game):
    db_url, cwd = game
    before = setup_turns(db_url, cwd)
    result = pbem(db_url, "deadline", "g1", cwd=cwd)
    assert result.returncode == 0 and "defaults applied" in out(result)
    after = setup_turns(db_url, cwd)
    assert after["version"] > before["version"]
    entries = json.loads(pbem(db_url, "log", "g1", "--json", cwd=cwd).stdout)
    assert any("by default" in e["text"] for e in entries)
    assert pbem(db_url, "verify", "g1", cwd=cwd).returncode == 0


def test_ingest_handles_one_message_from_stdin_like_the_server(game):
    db_url, cwd = game
    view = setup_turns(db_url, cwd)
    (who, asked), = view["pending"].items()
    email_of = {"Ann": "ann@example.org", "Ben": "ben@example.org", "Cy": "cy@example.org"}[asked["player"]]
    from pbem.store.unit_of_work import UnitOfWork

    engine = make_engine(db_url)
    with UnitOfWork(engine) as uow:
        prompt_row = [r for r in uow.outbox.list("g1") if r.kind == "prompt"][-1]
    engine.dispose()
    import email
    from email.policy import default

    prompt = email.message_from_bytes(bytes(prompt_row.raw), policy=default)
    mail = EmailMessage()
    mail["From"] = email_of
    mail["To"] = str(prompt["Reply-To"])
    mail["Subject"] = "Re: orders"
    mail["Message-ID"] = make_msgid()
    order = "PLACE Scythia" if asked["step"] == "place-start-token" else "NATION Crete"
    mail.set_content(order + "\n")
    first = pbem(db_url, "ingest", "--from", email_of, "--to", str(prompt["Reply-To"]), stdin=mail.as_bytes(), cwd=cwd)
    assert first.returncode == 0 and out(first).startswith("done"), out(first)
    again = pbem(db_url, "ingest", stdin=mail.as_bytes(), cwd=cwd)
    assert out(again).startswith("duplicate")


def test_rules_tables_match_the_help_by_mail(game):
    db_url, cwd = game
    card = pbem(db_url, "rules", "card", "astronomy", cwd=cwd)
    assert card.returncode == 0 and "80" in out(card)
    areas = pbem(db_url, "rules", "areas", cwd=cwd)
    assert "Sinai" in out(areas)
    unknown = pbem(db_url, "rules", "area", "Atlantiss", cwd=cwd)
    assert unknown.returncode == 2
    view = setup_turns(db_url, cwd)
    (who, asked), = view["pending"].items()
    helped = pbem(db_url, "submit", "g1", "--as", asked["player"], stdin="HELP CARD Astronomy", cwd=cwd)
    assert out(card).strip() in out(helped)


def test_rules_options_lists_every_option_with_its_default_and_meaning(tmp_path):
    listed = pbem("sqlite:///" + str(tmp_path / "x.sqlite"), "rules", "options", cwd=tmp_path)
    assert listed.returncode == 0
    text = " ".join(out(listed).split())
    for doc in option_docs():
        assert f"{doc.key}: {doc.values}." in text
    assert "variant-no-trading: off, on. The No-Trading variant" in text
    one = pbem("sqlite:///" + str(tmp_path / "x.sqlite"), "rules", "option", "beneficiary", cwd=tmp_path)
    assert one.returncode == 0 and "beneficiary-rule (D-1)" in out(one)


def test_both_variants_are_created_and_a_clash_of_options_is_refused(db_url, tmp_path):
    players = ("--player", "A:a@x.org", "--player", "B:b@x.org", "--player", "C:c@x.org")
    small = pbem(db_url, "game", "create", "g2", *players, "--option", "variant-small-cities=on", cwd=tmp_path)
    assert small.returncode == 0, out(small)
    assert json.loads(pbem(db_url, "state", "g2", "--json", cwd=tmp_path).stdout)["variants"] == ["Small Cities"]
    clash = pbem(db_url, "game", "create", "g3", *players, "--option", "variant-no-trading=on",
                 "--option", "primary-calamity-limit=2", cwd=tmp_path)
    assert clash.returncode == 2 and "primary-calamity-limit must be none with variant-no-trading=on" in out(clash)
    created = pbem(db_url, "game", "create", "g3", *players, "--option", "variant-no-trading=on", cwd=tmp_path)
    assert created.returncode == 0, out(created)
    view = json.loads(pbem(db_url, "state", "g3", "--json", cwd=tmp_path).stdout)
    assert view["variants"] == ["No-Trading"]


def test_a_seat_goes_to_a_bot_and_back_from_the_command_line(db_url, tmp_path):
    """Issue 33 on the CLI: `--player bot:...` at creation, `REPLACE ... WITH BOT` through `pbem submit --as
    moderator`, and back to a person; `pbem state` names the bot seats, and the log verifies."""
    created = pbem(db_url, "game", "create", "g1", "--player", "Ann:ann@example.org:Africa",
                   "--player", "bot:greedy:Crete", "--player", "Cy:cy@example.org:Thrace", "--seed", "cli-bots",
                   "--moderator", "mod@example.org", cwd=tmp_path)
    assert created.returncode == 0, out(created)
    handed = pbem(db_url, "submit", "g1", "--as", "moderator",
                  stdin="REPLACE Thrace WITH BOT planner Cy is away for two weeks", cwd=tmp_path)
    assert handed.returncode == 0, out(handed)
    players = {p["nation"]: p["name"] for p in setup_turns(db_url, tmp_path)["players"]}
    assert players == {"Africa": "Ann", "Crete": "Bot 2 (greedy)", "Thrace": "Bot for Thrace (planner)"}
    back = pbem(db_url, "submit", "g1", "--as", "moderator",
                stdin="REPLACE Thrace WITH Cy cy@example.org Cy is back", cwd=tmp_path)
    assert back.returncode == 0, out(back)
    players = {p["nation"]: p["name"] for p in setup_turns(db_url, tmp_path)["players"]}
    assert players["Thrace"] == "Cy" and players["Crete"] == "Bot 2 (greedy)"
    mistyped = pbem(db_url, "submit", "g1", "--as", "moderator", stdin="REPLACE Africa WITH BOT planer Ann left",
                    cwd=tmp_path)  # a strategy mistyped is refused, not read as the planner with "planer" in the reason
    assert "planer: not a bot strategy; did you mean planner?" in out(mistyped), out(mistyped)
    assert {p["nation"]: p["name"] for p in setup_turns(db_url, tmp_path)["players"]}["Africa"] == "Ann"
    unnamed = pbem(db_url, "submit", "g1", "--as", "moderator", stdin="REPLACE Africa WITH BOT Ann left",
                   cwd=tmp_path)  # no strategy named: the planner, and the acknowledgement says so
    assert unnamed.returncode == 0 and "accepted: REPLACE Africa WITH BOT planner Ann left" in out(unnamed)
    verified = pbem(db_url, "verify", "g1", cwd=tmp_path)
    assert verified.returncode == 0 and "re-derivation ok" in out(verified), out(verified)
