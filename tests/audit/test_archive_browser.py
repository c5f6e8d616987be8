"""`pbem archive` opened in a real browser: Debian's chromium, headless, from the file system.

A recorded bot game played to its end is loaded into a SQLite database beside
players' rows that hold addresses and secrets, archived through the command
line for an observer and for the player of Italy, and every page is opened
with `chromium --dump-dom`. What the browser shows must load, link only
inside the archive, and hold nothing the viewer may not see.

Skipped only where chromium is missing and $CI is unset: in CI a missing
browser is a failure (.ci/run installs it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urldefrag

import pytest
from PIL import Image

from pbem.audit.history import history
from pbem.rules import engine as rules
from pbem.rules.core.events import Event
from pbem.rules.view import view
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from .recorded_games import HERE, load_into, read
from .test_archive import Page

CHROMIUM = shutil.which("chromium")
if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("chromium is not installed (apt-get install chromium; in CI this test fails instead)",
                allow_module_level=True)

RECORDED = HERE / "planner-3p-to-the-end.jsonl.gz"
VIEWERS = ("observer", "italy")
#: Players' rows as the store would hold them: the addresses and secrets must reach no page.
SEATS = (("Bot1", "ann.bot1@mail.example", "Illyria", "ILLYRIA-SECRET-4471"),
         ("Bot2", "ben.bot2@mail.example", "Italy", "ITALY-SECRET-9023"),
         ("Bot3", "cleo.bot3@mail.example", "Thrace", "THRACE-SECRET-3318"))


#: Elements without an end tag, left off the parser's stack of open elements.
VOID = {"meta", "link", "img", "br", "hr", "input", "source", "wbr"}


@dataclass
class Site:
    game_id: str
    folders: dict[str, Path]
    recorded: list
    secrets: list[str]
    db_url: str
    work: Path


class Dom(Page):
    """What a dumped DOM holds: besides a page's links, ids and hand cells, its title, headings and text."""

    def __init__(self, text: str) -> None:
        self.title = ""
        self.headings: list[str] = []
        self.text: list[str] = []
        self._open: list[str] = []
        super().__init__(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self._open.append(tag)
        if tag == "h1":
            self.headings.append("")
        super().handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag):]
        super().handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if "title" in self._open:
            self.title += data
        elif "h1" in self._open:
            self.headings[-1] += data
        super().handle_data(data)


def chromium(url: str, *args: str) -> str:
    """Run headless chromium on one URL with its own profile (so two can run at once); its standard output."""
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             f"--user-data-dir={profile}", *args, url],
            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[Site]:
    if CHROMIUM is None:
        pytest.fail("chromium is not installed, and CI is set: .ci/run installs it (apt-get install chromium)")
    work = tmp_path_factory.mktemp("archive")
    url = f"sqlite:///{work}/game.sqlite"
    game = read(RECORDED)
    db = make_engine(url)
    try:
        ensure_schema(db)
        game_id = load_into(db, game)
        with UnitOfWork(db) as uow:
            for name, email, nation, secret in SEATS:
                uow.players.add(game_id, name, email, nation, secret=secret)
        with UnitOfWork(db) as uow:
            row = uow.games.get(game_id)
            secrets = [row.secret_seed, row.reply_secret, row.moderator_email]
            secrets += [p.email for p in uow.players.list(game_id)] + [s[3] for s in SEATS]
            recorded = uow.events.read(game_id)
    finally:
        db.dispose()
    folders = {viewer: work / f"site-{viewer}" for viewer in VIEWERS}
    # Both archives at once (each explains every entry, a fold of the log apiece): two cores, half the time.
    running = [subprocess.Popen([sys.executable, "-m", "pbem.cli", "--db", url, "archive", game_id,
                                 "--out", str(out), "--as", viewer],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=work)
               for viewer, out in folders.items()]
    for process in running:
        stdout, stderr = process.communicate(timeout=180)
        assert process.returncode == 0, stdout + stderr
        assert "index.html" in stdout
    yield Site(game_id, folders, recorded, secrets, url, work)


@pytest.fixture(scope="module")
def doms(site) -> dict[tuple[str, str], Dom]:
    """Every page of both archives as the browser built it, two browsers at a time."""
    pages = [(viewer, path) for viewer, folder in site.folders.items() for path in sorted(folder.glob("*.html"))]
    with ThreadPoolExecutor(max_workers=2) as pool:
        dumped = list(pool.map(lambda vp: chromium(vp[1].as_uri(), "--dump-dom"), pages))
    return {(viewer, path.name): Dom(text) for (viewer, path), text in zip(pages, dumped)}


def expected_heading(name: str, game_id: str) -> str:
    if name == "index.html":
        return f"Game {game_id}"
    if name == "log.html":
        return "The log"
    if name == "setup.html":
        return "Setup"
    number = re.fullmatch(r"turn-(\d+)\.html", name)
    assert number is not None, name
    return f"Turn {int(number.group(1))}"


def ends_of_turns(site: Site) -> dict[int, object]:
    """The state at the end of each turn, folded here apart from the archive's own code."""
    state, ends = rules.new_game(site.game_id), {}
    for rec in site.recorded:
        state = rules.apply(state, Event.from_payload(rec.type, rec.payload))
        ends[state.turn] = state
    return ends


def test_every_page_loads_in_the_browser(site, doms):
    for viewer in VIEWERS:
        names = sorted(name for v, name in doms if v == viewer)
        assert names == sorted(["index.html", "log.html", "setup.html", *(f"turn-{n:02d}.html" for n in range(1, 11))])
        for name in names:
            dom = doms[(viewer, name)]
            heading = expected_heading(name, site.game_id)
            assert [h.strip() for h in dom.headings] == [heading], (viewer, name, dom.headings)
            assert heading in dom.title, (viewer, name, dom.title)
    assert "Final standings" in "".join(doms[("observer", "index.html")].text)


def test_every_link_and_picture_resolves_inside_the_archive(site, doms):
    followed = 0
    for (viewer, name), dom in doms.items():
        folder = site.folders[viewer]
        for link in dom.links:
            assert not re.match(r"^[a-z][a-z0-9+.-]*:|^//", link, re.IGNORECASE), f"{viewer}/{name} leaves the archive: {link}"
            target, anchor = urldefrag(link)
            path = (folder / unquote(target or name)).resolve()
            assert path.parent == folder.resolve() and path.is_file(), f"{viewer}/{name}: {link}"
            if anchor:
                assert anchor in doms[(viewer, path.name)].ids, f"{viewer}/{name}: no #{anchor} in {path.name}"
            followed += 1
    assert followed > 2000
    for folder in site.folders.values():
        css = (folder / "archive.css").read_text()
        assert "url(" not in css and "@import" not in css
        for svg in folder.glob("*.svg"):
            assert not re.search(r"""(?:href|src)\s*=\s*["'](?!#)""", svg.read_text()), svg.name


def test_a_turn_page_is_drawn_with_its_board(site, tmp_path):
    shot = tmp_path / "turn-01.png"
    chromium((site.folders["italy"] / "turn-01.html").as_uri(), f"--screenshot={shot}", "--window-size=1000,2800",
             "--hide-scrollbars")
    assert shot.stat().st_size > 50_000
    with Image.open(shot) as image:
        pixels = image.convert("RGB")
        assert pixels.size == (1000, 2800)
        colours = pixels.getcolors(maxcolors=1_000_000)
    assert len(colours) > 200, "the page is more than a blank"
    # The board's sea (#a9cbe3): the SVG picture was found and drawn, not only its alt text.
    sea = sum(count for count, rgb in colours if max(abs(a - b) for a, b in zip(rgb, (0xA9, 0xCB, 0xE3))) <= 6)
    assert sea > 0.05 * 1000 * 2800


def test_no_page_lists_a_hand_the_viewer_may_not_see(site, doms):
    ends = ends_of_turns(site)
    own_cards = 0
    for viewer in VIEWERS:
        mine = None if viewer == "observer" else viewer
        for number in range(1, 11):
            hands = doms[(viewer, f"turn-{number:02d}.html")].hands
            everything = view(ends[number], "auditor")["nations"]
            assert set(hands) == set(everything)
            for nation, cell in hands.items():
                cards = everything[nation]["hand"]
                if nation == mine:
                    assert all(card in cell for card in cards), (viewer, number, cell)
                    own_cards += len(cards)
                else:
                    assert re.fullmatch(r"\d+ cards?", cell.strip()), (viewer, number, nation, cell)
    assert own_cards > 0, "the positive control: Italy's own cards are listed"


def test_no_page_holds_a_log_entry_hidden_from_the_viewer(site, doms):
    told = {e["text"] for e in history(site.game_id, site.recorded, "auditor")}
    for viewer in VIEWERS:
        entries = history(site.game_id, site.recorded, viewer)
        hidden = told - {e["text"] for e in entries}
        assert hidden, f"the auditor reads something that {viewer} does not: the check can fail"
        log = doms[(viewer, "log.html")]
        assert {i for i in log.ids if re.fullmatch(r"v\d+", i)} == {f"v{e['version']}" for e in entries}
        for (v, name), dom in doms.items():
            if v != viewer:
                continue
            text = " ".join(dom.text)
            leaked = [t for t in hidden if t in text]
            assert not leaked, (viewer, name, leaked[:3])


def test_each_log_entry_opens_its_explanation(site, doms):
    for viewer in VIEWERS:
        log = (site.folders[viewer] / "log.html").read_text()
        entries = log.count('<article class="entry')
        assert entries > 400 and log.count("<details>") == entries
        text = " ".join(doms[(viewer, "log.html")].text)
        assert text.count("EXPLAIN version") == entries
        # An explanation lists a nation's hand ("Italy: stock 17, ..., hand: Hides x3") only to its own player.
        shown = set(re.findall(r"(\w+): stock [^\n]*?hand: ", text))
        assert shown == ({"Italy"} if viewer == "italy" else set()), (viewer, shown)


def test_no_file_holds_a_secret_or_an_address(site, doms):
    assert len(site.secrets) == 9 and all(site.secrets)
    for viewer, folder in site.folders.items():
        for path in folder.iterdir():
            content = path.read_bytes().lower()
            for secret in site.secrets:
                assert secret.lower().encode() not in content, (viewer, path.name)
    for dom in doms.values():
        text = " ".join(dom.text).lower()
        assert not any(secret.lower() in text for secret in site.secrets)


def test_an_archive_is_not_written_over_another(site):
    result = subprocess.run([sys.executable, "-m", "pbem.cli", "--db", site.db_url, "archive", site.game_id,
                             "--out", str(site.folders["observer"])], capture_output=True, text=True, cwd=site.work, check=False,
                            timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "not empty (--force writes over it)" in result.stderr
