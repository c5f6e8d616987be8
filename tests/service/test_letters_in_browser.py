"""Every kind of letter as a player's phone and a desktop show it: Debian's headless chromium, 390 and 1280 pixels wide.

Each letter's HTML part is rendered by the server's own code from a realistic
state: a prompt for every step the engine asks (the positions of the rule case
files, and the setup of a recorded game), a report of a recorded game's turn
from its reader's view, and the acknowledgements, start letters, notices and
reminder of tests/mail/contexts.py. All of them are laid out in ONE page, each in
an iframe as large as a screen (390×844, an iPhone's; 1280×800), so chromium
starts once to measure them all, and once more to photograph a few.

On the first screen of each: the question (what is asked, or what the letter
is) and the deadline (or what comes next). No text runs past the right edge
(an element whose content is wider than its box, or a page wider than the
screen), and a picture is no wider than the screen.

Skipped only where chromium is missing and $CI is unset: in CI a missing
browser is a failure (.ci/run installs it). With PBEM_LETTER_SHOTS=<folder>
the photographs go there (docs/letters/ keeps one run's).
"""

from __future__ import annotations

import base64
import html
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image

from audit.recorded_games import HERE, read
from mail.contexts import ACK, NOTICE, REMINDER, SEAT, START
from pbem.mail.render import Renderer
from pbem.picture import board_png
from pbem.rules import engine
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState
from pbem.rules.turn import phase_title
from pbem.rules.view import variants_in_force
from pbem.service.asks import prompt_context
from pbem.service.combined import Part
from pbem.service.digests import digest_of
from pbem.service.letters import HELP_LINES
from pbem.service.pictures import PROMPT_WIDTH
from pbem.service.positions import others_positions, own_position, report_span
from rules.casefile import CASES, load, play

CHROMIUM = shutil.which("chromium")
if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("chromium is not installed (apt-get install chromium; in CI this test fails instead)",
                allow_module_level=True)

#: (width, height) of the first screen: a phone (390×844) and a desktop browser's window.
SCREENS = ((390, 844), (1280, 800))
DEADLINE, DUE = "2026-11-30 08:00 UTC", "Mon 30 Nov 08:00 UTC"
RECORDED = HERE / "planner-3p-to-the-end.jsonl.gz"
#: The letters photographed for docs/letters/ (name, width): at most a dozen small files.
SHOTS = (("start", 390), ("prompt-movement", 390), ("prompt-trade", 390), ("prompt-calamity-secondary", 390),
         ("ack", 390), ("ack-error", 390), ("report", 390), ("digest", 390), ("notice", 390), ("reminder", 390),
         ("prompt-movement", 1280), ("report", 1280))


@dataclass(frozen=True)
class Letter:
    """One letter's HTML part and what its first screen must show."""

    name: str
    html: str
    question: str
    deadline: str | None  # None: a letter that asks nothing by a date (a notice)


def _picture_uri(state: GameState, viewer: str, areas: list[str]) -> str:
    png = board_png(state, viewer, width=PROMPT_WIDTH, focus=areas, highlight=areas)
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _prompt_letter(renderer: Renderer, name: str, state: GameState) -> Letter:
    prompt = next(iter(engine.pending(state).values()))
    player = state.player(prompt.player_id)
    asked = prompt_context(state, prompt, phase_title(state, state.phase))
    viewer = f"player:{player.nation.lower()}" if player.nation else "observer"
    context = {
        "game": state.game_id, "turn": state.turn or None, "phase": phase_title(state, state.phase),
        "chain_head": "3f9a1c2b5d6e7f80", "variants": variants_in_force(state), "span": False,
        **asked, "player": f"{player.name} ({player.nation})" if player.nation else player.name,
        "deadline": DEADLINE, "due": DUE, "help_lines": list(HELP_LINES),
        "board_cid": "board" if asked["areas"] else None,
    }
    page = renderer.render("prompt", context).html
    if asked["areas"]:
        page = page.replace("cid:board", _picture_uri(state, viewer, asked["areas"]))
    return Letter(name, page, asked["headline"] + ".", f"Due {DUE}.")


def _prompts(renderer: Renderer) -> list[Letter]:
    """A prompt of every step the engine asks: the first position of the case files that asks it, and setup's."""
    found: dict[str, GameState] = {}
    for path in sorted(CASES.rglob("*.toml")):
        case = load(path)
        case.pop("orders", None)
        state = play(case).state
        asked = next(iter(engine.pending(state).values()), None)
        if asked is not None:
            found.setdefault(asked.step.split(":", 1)[0], state)
    recorded = read(RECORDED)
    state = engine.new_game(recorded.game["game_id"])
    for record in recorded.events:
        state = engine.apply(state, Event.from_payload(record["type"], record["payload"]))
        asked = next(iter(engine.pending(state).values()), None)
        if asked is not None and not state.turn:
            found.setdefault(asked.step.split(":", 1)[0], state)
    return [_prompt_letter(renderer, f"prompt-{step}", state) for step, state in sorted(found.items())]


def _report(renderer: Renderer) -> Letter:
    """Italy's report of the recorded game's turn 4, from the start of its trade to the start of turn 5."""
    context, covers = _report_context()
    return Letter("report", renderer.render("report", context).html, covers["covers"], covers["next"])


def _digest(renderer: Renderer, ack: dict) -> Letter:
    """Italy's digest of turn 4 (MAIL DIGEST): an answer that only said his orders were on file, then the report."""
    context, _ = _report_context()
    pieces = [Part(kind, renderer.render(kind, given), f"{kind}@pbem.localhost", None, None, None, None, "", 4)
              for kind, given in (("ack", ack), ("report", context))]
    rendered, _ = digest_of(pieces, 4)
    return Letter("digest", rendered.html, "Turn 4 in one letter", None)


def _report_context() -> tuple[dict, dict]:
    recorded = read(RECORDED)
    state = engine.new_game(recorded.game["game_id"])
    since = after = None
    steps = []
    for record in recorded.events:
        event = Event.from_payload(record["type"], record["payload"])
        if state.turn == 4 and phase_title(state, state.phase).endswith("Trade") and since is None:
            since = state
        if since is not None:
            steps.append((state, event))
        state = engine.apply(state, event)
        if since is not None and state.turn == 5:
            after = state
            break
    assert since is not None and after is not None
    viewer = "player:italy"
    happened = [{"text": text, "cites": list(event.cites)}
                for before, event in steps if (text := engine.describe_event(before, event, viewer))]
    covers = report_span(since, after, "", True)
    context = {
        "game": after.game_id, "phase": phase_title(since, since.phase), "result": "", "chain_head": "77aa0c1d",
        "variants": [], "player": "Bot2 (Italy)", "happened": happened, **covers,
        "own": own_position(after, "Italy"), "others": others_positions(after, viewer, "Italy"),
    }
    return context, covers


def _letters() -> list[Letter]:
    renderer = Renderer()
    asked_nothing = {**ACK, "errors": [], "error_count": 0, "asked": False, "notes": []}
    nothing_found = {**ACK, "errors": [], "error_count": 0, "accepted": [], "notes": [],
                     "nothing_found": "Still needed from you: Step 3b, movement: move your tokens, then HALT.",
                     "template": "MOVE 2 Memphis Thebes\nHALT"}
    return [
        Letter("start", renderer.render("start", START).html, "a new game of Advanced Civilization",
               "When it is your turn, a letter asks for your orders"),
        Letter("start-seat", renderer.render("start", {**START, "seat": SEAT}).html, "you take over Babylon",
               "Your orders are asked now"),
        *_prompts(renderer),
        Letter("ack", renderer.render("ack", asked_nothing).html, "your orders are on file.",
               "Nothing is asked of you now."),
        Letter("ack-error", renderer.render("ack", ACK).html, "2 lines were not accepted.",
               f"Deadline: {ACK['deadline']}"),
        Letter("ack-nothing-found", renderer.render("ack", nothing_found).html, "No orders found in your message",
               f"Deadline: {ACK['deadline']}"),
        _report(renderer),
        _digest(renderer, asked_nothing),
        Letter("notice", renderer.render("notice", {**NOTICE, "game": "nile-1", "title": "From the moderator",
                                                    "lines": ["The deadline of turn 3 moves to Mon 30 Nov 08:00 UTC: "
                                                              "Babylon's player is travelling."]}).html,
               "From the moderator", None),
        Letter("reminder", renderer.render("reminder", REMINDER).html, "your orders for", "are due"),
    ]


#: Run in the page once every frame has loaded: what each frame's first screen shows, and what runs past its edge.
MEASURE = """
<script>
function find(doc, needle) {
  const want = needle.replace(/\\s+/g, ' ').trim();
  let best = null;
  for (const el of doc.body.querySelectorAll('*')) {
    if (el.textContent.replace(/\\s+/g, ' ').includes(want)) best = el;
  }
  if (!best) return null;
  const r = best.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom};
}
window.addEventListener('load', () => {
  const out = {};
  for (const frame of document.querySelectorAll('iframe')) {
    const doc = frame.contentDocument, win = frame.contentWindow;
    const cut = [];
    for (const el of doc.body.querySelectorAll('*')) {
      const style = win.getComputedStyle(el);
      if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1 && style.display !== 'inline')
        cut.push(el.tagName + ': ' + el.textContent.slice(0, 60));
    }
    out[frame.id] = {
      width: win.innerWidth, height: win.innerHeight, page: doc.documentElement.scrollWidth,
      question: find(doc, frame.dataset.question),
      deadline: frame.dataset.deadline ? find(doc, frame.dataset.deadline) : null,
      images: Array.from(doc.images).map(i => ({width: i.getBoundingClientRect().width, natural: i.naturalWidth})),
      cut: cut,
    };
  }
  const pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def _page(frames: list[tuple[Letter, int, int, int, int]]) -> str:
    """A page of iframes at (x, y), each a screen of (width, height) holding one letter."""
    tags = []
    for letter, width, height, x, y in frames:
        tags.append(
            f'<iframe id="{letter.name}@{width}" data-question="{html.escape(letter.question)}" '
            f'data-deadline="{html.escape(letter.deadline or "")}" srcdoc="{html.escape(letter.html)}" '
            f'style="position:absolute;left:{x}px;top:{y}px;width:{width}px;height:{height}px;border:0;"></iframe>')
    return "<!DOCTYPE html><html><body style='margin:0;background:#fff;'>" + "".join(tags) + MEASURE + "</body></html>"


def _chromium(page: Path, *args: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
             "--hide-scrollbars", f"--user-data-dir={profile}", *args, page.as_uri()],
            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def _measured(dom: str) -> dict:
    start = dom.index('<pre id="measured">') + len('<pre id="measured">')
    return json.loads(html.unescape(dom[start:dom.index("</pre>", start)]))


@pytest.fixture(scope="module")
def letters() -> list[Letter]:
    if CHROMIUM is None:
        pytest.fail("chromium is not installed, and CI is set: .ci/run installs it (apt-get install chromium)")
    return _letters()


def test_every_letter_shows_its_question_and_deadline_first_and_nothing_is_cut(letters, tmp_path):
    steps = {letter.name for letter in letters if letter.name.startswith("prompt-")}
    assert len(steps) >= 25, sorted(steps)  # every step of setup, the turn's phases and the calamities
    frames, y = [], 0
    for letter in letters:
        frames += [(letter, 390, 844, 0, y), (letter, 1280, 800, 400, y)]
        y += 850
    page = tmp_path / "letters.html"
    page.write_text(_page(frames), encoding="utf-8")
    measured = _measured(_chromium(page, "--window-size=1700,900", "--dump-dom"))
    assert len(measured) == 2 * len(letters)
    pictures = 0
    for letter in letters:
        for width, height in SCREENS:
            seen = measured[f"{letter.name}@{width}"]
            where = f"{letter.name} at {width} px"
            assert (seen["width"], seen["height"]) == (width, height), where
            assert seen["page"] <= width, f"{where}: the page is {seen['page']} px wide"
            assert not seen["cut"], f"{where}: text runs past its box: {seen['cut'][:3]}"
            assert seen["question"] is not None, f"{where}: no {letter.question!r}"
            assert seen["question"]["bottom"] <= height, f"{where}: the question is below the first screen"
            if letter.deadline is not None:
                assert seen["deadline"] is not None, f"{where}: no {letter.deadline!r}"
                assert seen["deadline"]["bottom"] <= height, f"{where}: the deadline is below the first screen"
            for image in seen["images"]:
                assert image["natural"] > 0, f"{where}: a picture did not load"
                assert image["width"] <= width, f"{where}: a picture is {image['width']} px wide"
                pictures += 1
    assert pictures >= 10, "the prompts about places carry their picture"


def test_a_few_letters_are_photographed_as_players_see_them(letters, tmp_path):
    by_name = {letter.name: letter for letter in letters}
    frames, x = [], 0
    for name, width in SHOTS:
        height = dict(SCREENS)[width]
        frames.append((by_name[name], width, height, x, 0))
        x += width + 10
    page = tmp_path / "shots.html"
    page.write_text(_page(frames), encoding="utf-8")
    whole = tmp_path / "shots.png"
    _chromium(page, f"--window-size={x},{max(h for _, h in SCREENS)}", f"--screenshot={whole}")
    out = Path(os.environ.get("PBEM_LETTER_SHOTS") or tmp_path / "letters")
    out.mkdir(parents=True, exist_ok=True)
    with Image.open(whole) as image:
        for letter, width, height, left, _ in frames:
            shot = image.convert("RGB").crop((left, 0, left + width, height))
            colours = shot.getcolors(maxcolors=1_000_000)
            assert colours is not None and len(colours) > 20, f"{letter.name} at {width} px is blank"
            # a palette of 64 colours: text stays sharp, and a shot weighs tens of kilobytes, not hundreds
            shot.quantize(colors=64).save(out / f"{letter.name}-{width}.png", optimize=True)
    sizes = [path.stat().st_size for path in out.glob("*.png")]
    assert len(sizes) == len(SHOTS) and sum(sizes) < 2_000_000
