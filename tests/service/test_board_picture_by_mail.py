"""A report whose phases moved pieces carries the board as a PNG in its HTML part; MAP by mail adds the SVG;
`pbem map`. The SVG (hundreds of kilobytes) no longer rides on every report (issue 31)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import replace
from datetime import datetime, timezone

from pbem.rules.core.commands import SetDeadline
from pbem.rules.core.draws import Draws, commitment
from pbem.rules.engine import create, decide, fold, new_game, pending
from pbem.rules.phases.setup import ChooseNation, PlaceStartToken
from pbem.service.demo import reply_to_prompt
from pbem.service.pictures import report_picture
from pbem.service.settings import Settings
from pbem.service.games import NewPlayer, create_game
from pbem.service.server import PostOffice

from .mailclient import holding, last_ack, latest, letters, send, topic

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
EMAIL = {p.name: p.email for p in PLAYERS}
T0 = datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)
CHOICES = ["NATION Crete\nPLACE Knossos", "NATION Italy\nPLACE Etruria", "NATION Thrace\nPLACE Scythia"]


def parts(message) -> dict[str, list]:
    found: dict[str, list] = {}
    for part in message.walk():
        found.setdefault(part.get_content_type(), []).append(part)
    return found


def test_a_report_shows_the_board_inline_and_map_answers_with_it_and_its_svg(sqlite_url, tmp_path, world):
    db, settings = world
    settings = replace(settings, board_pictures=True)

    async def scenario():
        office = PostOffice(db, settings, clock=lambda: T0, outbox_every=0.05, deadlines_every=3600)
        await office.start()
        try:
            state = await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="map", now=T0)
            await office.idle()
            for pid, orders in zip(state.place_order, CHOICES):
                name = state.player(pid).name
                prompt = latest(settings.maildir, EMAIL[name], "your orders")
                send(office.port, reply_to_prompt(prompt, EMAIL[name], orders), EMAIL[name], [str(prompt["Reply-To"])])
                await office.idle()
            report = holding(settings.maildir, "ann@example.org", "THE BOARD")[-1]
            send(office.port, reply_to_prompt(report, "ann@example.org", "MAP"), "ann@example.org", [str(report["Reply-To"])])
            await office.idle()
            return report, last_ack(settings.maildir, "ann@example.org")
        finally:
            await office.stop()

    report, answer = asyncio.run(scenario())
    assert "image/svg+xml" not in parts(report)
    assert len(report.as_bytes()) < 250_000  # the picture is a palette PNG now
    # a prompt about places shows the areas its orders name, cropped and outlined; no SVG goes with it
    prompts = [m for address in EMAIL.values() for m in letters(settings.maildir, address) if "T1 " in topic(m)]
    placed = [m for m in prompts if "THE AREAS IN PLAY" in m.get_body(preferencelist=("plain",)).get_content()]
    assert placed, [topic(m) for m in prompts]
    for prompt in placed:
        found = parts(prompt)
        (png,) = found["image/png"]
        assert "image/svg+xml" not in found
        assert f'src="cid:{png["Content-ID"].strip("<>")}"' in prompt.get_body(preferencelist=("html",)).get_content()
    for letter in (report, answer):
        found = parts(letter)
        (png,) = found["image/png"]
        html = letter.get_body(preferencelist=("html",)).get_content()
        cid = png["Content-ID"].strip("<>")
        assert f'src="cid:{cid}"' in html
        assert png.get_content().startswith(b"\x89PNG\r\n\x1a\n")
    (svg,) = parts(answer)["image/svg+xml"]
    drawing = svg.get_content()
    drawing = drawing.decode() if isinstance(drawing, bytes) else drawing
    assert drawing.lstrip().startswith(("<?xml", "<svg")) and "Knossos" in drawing and "Etruria" in drawing
    assert "THE BOARD" in report.get_body(preferencelist=("plain",)).get_content()
    assert "MAP: the board as it stands" in answer.get_body(preferencelist=("plain",)).get_content()


def test_pbem_map_draws_a_game_into_an_svg_or_png_file(sqlite_url, tmp_path):
    def pbem(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pbem.cli", "--db", sqlite_url, *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)

    players = [x for p in PLAYERS for x in ("--player", f"{p.name}:{p.email}")]
    assert pbem("game", "create", "g1", *players, "--seed", "map").returncode == 0
    done = pbem("map", "g1", "--out", str(tmp_path / "board.svg"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "board.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
    done = pbem("map", "g1", "--at", "2", "--as", "moderator", "--out", str(tmp_path / "board.png"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "board.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    wrong = pbem("map", "g1", "--out", str(tmp_path / "board.gif"))
    assert wrong.returncode == 2 and "an .svg or a .png" in wrong.stderr
    nowhere = pbem("map", "g1", "--out", str(tmp_path / "missing" / "board.svg"))
    assert nowhere.returncode == 2 and "does not exist" in nowhere.stderr


def test_a_report_carries_a_picture_only_when_the_board_changed_since_the_last_one(tmp_path):
    """Every player gets every report, so the last picture he got shows the board where this report's span
    began: a report of phases that moved nothing sends none."""
    settings = replace(Settings(), gather_minutes=0, maildir=tmp_path, board_pictures=True)
    start = fold(new_game("g1"), create("g1", [(1, "Ann", None), (2, "Ben", None), (3, "Cy", None)], {},
                                         commitment("s"), Draws("s")))
    assert report_picture(start, start, settings) is None
    later = fold(start, decide(start, SetDeadline("2026-12-01 08:00 UTC"), Draws("s")))
    assert later.version > start.version and report_picture(start, later, settings) is None  # the clock moved only
    (prompt,) = pending(start).values()
    chose = fold(start, decide(start, ChooseNation(prompt.player_id, "Crete"), Draws("s")))
    placed = fold(chose, decide(chose, PlaceStartToken(prompt.player_id, "Knossos"), Draws("s")))
    picture = report_picture(start, placed, settings)
    assert picture is not None and picture.svg is None and picture.png.startswith(b"\x89PNG")
    assert report_picture(start, placed, replace(settings, board_pictures=False)) is None
