"""Every report carries the board as a picture (PNG in the HTML part, SVG attached); MAP by mail; `pbem map`."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import replace
from datetime import datetime, timezone

from pbem.service.demo import reply_to_prompt
from pbem.service.games import NewPlayer, create_game
from pbem.service.server import PostOffice

from .mailclient import latest, letters, send

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
EMAIL = {p.name: p.email for p in PLAYERS}
T0 = datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)
CHOICES = ["NATION Crete\nPLACE Knossos", "NATION Italy\nPLACE Etruria", "NATION Thrace\nPLACE Scythia"]


def parts(message) -> dict[str, list]:
    found: dict[str, list] = {}
    for part in message.walk():
        found.setdefault(part.get_content_type(), []).append(part)
    return found


def test_a_report_shows_the_board_inline_and_attached_and_map_answers_with_it(sqlite_url, tmp_path, world):
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
            report = latest(settings.maildir, "ann@example.org", "Report")
            send(office.port, reply_to_prompt(report, "ann@example.org", "MAP"), "ann@example.org", [str(report["Reply-To"])])
            await office.idle()
            return report, latest(settings.maildir, "ann@example.org", "Orders received")
        finally:
            await office.stop()

    report, answer = asyncio.run(scenario())
    # a prompt about places shows the areas its orders name, cropped and outlined; no SVG goes with it
    prompts = [m for address in EMAIL.values() for m in letters(settings.maildir, address) if "T1 " in str(m["Subject"])]
    placed = [m for m in prompts if "THE AREAS IN PLAY" in m.get_body(preferencelist=("plain",)).get_content()]
    assert placed, [str(m["Subject"]) for m in prompts]
    for prompt in placed:
        found = parts(prompt)
        (png,) = found["image/png"]
        assert "image/svg+xml" not in found
        assert f'src="cid:{png["Content-ID"].strip("<>")}"' in prompt.get_body(preferencelist=("html",)).get_content()
    for letter in (report, answer):
        found = parts(letter)
        (png,) = found["image/png"]
        (svg,) = found["image/svg+xml"]
        html = letter.get_body(preferencelist=("html",)).get_content()
        cid = png["Content-ID"].strip("<>")
        assert f'src="cid:{cid}"' in html
        assert png.get_content().startswith(b"\x89PNG\r\n\x1a\n")
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
