"""The archive builder (`pbem.service.archive`) without a disk or a browser: pages, links, escaping, viewers.

The game is a recorded bot game played to its end (`recorded/planner-3p-to-the-end`),
handed to the builder as the store would hand it over. What a browser makes of
the pages is tests/audit/test_archive_browser.py.
"""

from __future__ import annotations

import copy
import gzip
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag

import pytest

from pbem.audit.explain import explain
from pbem.rules import engine as rules
from pbem.rules.core.events import Event
from pbem.rules.view import view
from pbem.service.archive import (
    archive_files,
    explanation_lines,
    turn_pages,
    write_archive,
)
from pbem.store.events import RecordedEvent

RECORDED = Path(__file__).resolve().parent / "recorded" / "planner-3p-to-the-end.jsonl.gz"


class _Game:
    """The recorded game's row and events (the format of tests/audit/recorded_games.py, read without its imports)."""

    def __init__(self, path: Path) -> None:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            lines = [json.loads(line) for line in f]
        self.game, self.events = lines[0], lines[1:]


GAME = _Game(RECORDED)
GAME_ID = GAME.game["game_id"]


def recorded(events: list[dict] | None = None) -> list[RecordedEvent]:
    """The recorded game's events as `EventStore.read` returns them."""
    out, prev = [], "0" * 64
    for version, e in enumerate(events if events is not None else GAME.events, 1):
        out.append(RecordedEvent(version, GAME_ID, version, e["type"], 1, e["payload"], e["metadata"],
                                 e["dedupe_key"], prev, e["hash"]))
        prev = e["hash"]
    return out


class Page(HTMLParser):
    """The links, ids, headings and table cells of one page."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.hands: dict[str, str] = {}
        self._row: str | None = None
        self._in_hand = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.links += [a[k] for k in ("href", "src") if a.get(k) is not None]
        if a.get("id"):
            self.ids.add(a["id"])
            if tag == "tr" and a["id"].startswith("nation-"):
                self._row = a["id"].removeprefix("nation-")
        if tag == "td" and "hand" in (a.get("class") or "").split():
            self._in_hand = True
            self.hands[self._row or "?"] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in_hand = False

    def handle_data(self, data: str) -> None:
        if self._in_hand:
            self.hands[self._row or "?"] += data


@pytest.fixture(scope="module")
def observer() -> dict[str, str]:
    return archive_files(GAME_ID, recorded(), "observer", explain=None)


def ends_of_turns() -> dict[int, object]:
    """The state at the end of each turn, folded here independently of the builder."""
    state, ends = rules.new_game(GAME_ID), {}
    for e in GAME.events:
        state = rules.apply(state, Event.from_payload(e["type"], e["payload"]))
        ends[state.turn] = state
    return ends


def test_one_page_and_one_board_per_turn(observer):
    pages = ["setup.html"] + [f"turn-{n:02d}.html" for n in range(1, 11)]
    boards = ["board-setup.svg"] + [f"board-turn-{n:02d}.svg" for n in range(1, 11)]
    assert sorted(observer) == sorted(["index.html", "log.html", "archive.css", *pages, *boards])
    index = observer["index.html"]
    for page in pages:
        assert f'href="{page}"' in index
    assert "Final standings" in index and "Illyria" in index
    assert GAME.game["head"] in index  # the chain head
    assert view(ends_of_turns()[10], "observer")["seed_commitment"] in index


def test_each_turn_page_holds_that_turns_entries_and_its_board():
    turns = turn_pages(GAME_ID, recorded())
    assert [t.number for t in turns] == list(range(11))
    ends = ends_of_turns()
    for t in turns:
        assert t.state == ends[t.number]
        assert t.complete
    files = archive_files(GAME_ID, recorded(), "observer", explain=None)
    assert "Turn 2: 1. Tax collection begins" in files["turn-02.html"]
    assert "Turn 3:" not in files["turn-02.html"]
    assert 'src="board-turn-02.svg"' in files["turn-02.html"]
    assert files["board-turn-02.svg"].lstrip().startswith("<?xml")


def test_every_link_leads_to_a_file_or_an_anchor_of_the_archive(observer):
    parsed = {name: Page(text) for name, text in observer.items() if name.endswith(".html")}
    checked = 0
    for name, page in parsed.items():
        assert page.links, name
        for link in page.links:
            assert not re.match(r"^[a-z]+:|^//", link), f"{name} links outside the archive: {link}"
            target, anchor = urldefrag(link)
            target = target or name
            assert target in observer, f"{name}: {link}"
            if anchor:
                assert anchor in parsed[target].ids, f"{name}: {link}"
            checked += 1
    assert checked > 1000
    assert "url(" not in observer["archive.css"] and "@import" not in observer["archive.css"]
    assert "<script" not in "".join(observer.values())


def test_previous_and_next_turn_links(observer):
    page = Page(observer["turn-05.html"])
    assert {"turn-04.html", "turn-06.html", "index.html", "log.html"} <= set(page.links)
    assert "setup.html" in Page(observer["turn-01.html"]).links
    assert 'rel="next"' not in observer["turn-10.html"]


def test_a_name_with_markup_is_shown_as_text_everywhere():
    events = copy.deepcopy(GAME.events)
    created = events[0]["payload"]
    created["players"][0]["name"] = '<script>alert("x")</script>&Co'
    files = archive_files(GAME_ID, recorded(events), "player:italy", explain=None)
    for name, text in files.items():
        assert "<script>" not in text, name
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;Co" in files["index.html"]
    assert "&lt;script&gt;" in files["turn-01.html"] and "&lt;script&gt;" in files["log.html"]


def test_a_name_with_control_characters_is_shown_written_out_on_every_page_and_board():
    """An ANSI escape, a carriage return or a bidi override in a name: written out (\\x1b), never obeyed."""
    events = copy.deepcopy(GAME.events)
    events[0]["payload"]["players"][0]["name"] = "\x1b[2J\x1b[31mEVIL\x1b[0m\r\u202e"
    files = archive_files(GAME_ID, recorded(events), "observer", explain=None)
    for name, text in files.items():
        assert [c for c in text if (c < " " and c not in "\n\t") or "\x7f" <= c <= "\x9f" or c == "\u202e"] == [], name
    shown = "\\x1b[2J\\x1b[31mEVIL\\x1b[0m\\r\\u202e"
    assert shown in files["index.html"] and shown in files["turn-01.html"] and shown in files["log.html"]
    assert shown in files["board-turn-01.svg"]


def test_a_player_sees_his_own_hand_and_only_the_size_of_the_others():
    files = archive_files(GAME_ID, recorded(), "italy", explain=None)
    ends = ends_of_turns()
    listed = 0
    for number in range(1, 11):
        hands = Page(files[f"turn-{number:02d}.html"]).hands
        everything = view(ends[number], "auditor")["nations"]
        assert set(hands) == set(everything)
        for nation, cell in hands.items():
            cards = everything[nation]["hand"]
            if nation == "italy":
                assert all(card in cell for card in cards), (number, cell)
                listed += len(cards)
            else:
                assert re.fullmatch(r"\d+ cards?", cell.strip()), (number, nation, cell)
    assert listed > 0, "Italy held cards at the end of some turn: the positive control"
    assert "as the player of Italy sees it" in files["index.html"]


def test_the_explanation_of_each_entry_is_in_a_details_element():
    asked = []

    def explain(game_id, events, viewer):
        asked.append(viewer)
        return {e.version: (f"why <{e.version}>", "  second line") for e in events if e.version % 2 == 0}

    files = archive_files(GAME_ID, recorded(), "italy", explain=explain)
    log = files["log.html"]
    assert asked == ["player:italy"]  # one call for the whole game, with the canonical viewer
    entries = [int(v) for v in re.findall(r'id="v(\d+)"', log)]
    assert log.count("<details>") == sum(1 for v in entries if v % 2 == 0) > 0
    even = next(v for v in entries if v % 2 == 0)
    assert f'<pre class="explanation">why &lt;{even}&gt;\n  second line</pre>' in log


def test_the_archive_explains_with_pbem_audit_explain():
    """The default explainer is the audit's own, the same lines as `explain` gives one version at a time."""
    events = recorded()
    built = next(e for e in events if e.type == "CitiesBuilt")
    lines = explanation_lines(GAME_ID, events, "observer")
    assert lines[built.version] == explain(GAME_ID, events, built.version, "observer").lines
    assert lines[built.version][0].startswith(f"EXPLAIN version {built.version} of {GAME_ID}")
    assert archive_files.__kwdefaults__["explain"] is explanation_lines


def test_an_unknown_viewer_or_an_empty_log_is_refused():
    with pytest.raises(ValueError, match="no nation 'babylon'"):
        archive_files(GAME_ID, recorded(), "player:babylon", explain=None)
    with pytest.raises(ValueError, match="no events"):
        archive_files(GAME_ID, [], "observer", explain=None)


def test_writing_refuses_a_folder_with_files_unless_forced(tmp_path: Path):
    files = {"index.html": "<p>one</p>", "archive.css": "body {}"}
    out = tmp_path / "site"
    assert [p.name for p in write_archive(files, out)] == ["archive.css", "index.html"]
    with pytest.raises(FileExistsError, match="not empty"):
        write_archive(files, out)
    write_archive({"index.html": "<p>two</p>"}, out, force=True)
    assert (out / "index.html").read_text() == "<p>two</p>"
    with pytest.raises(ValueError, match="outside"):
        write_archive({"../escape.html": "x"}, tmp_path / "other")
