"""A game as a static web site (`pbem archive`): an index, one page per turn, the whole log.

Why a folder of plain files: a finished game is kept and passed around long
after the server that ran it, and read on a phone on a train. HTML pages, one
CSS file and one SVG board per turn open from the file system in any browser,
with no server, no JavaScript and nothing fetched from the network.

Why it lives in the service layer: it joins the audit (`pbem.audit.history`,
the explanations) with the board picture (`pbem.picture`), and only the
service layer may import both.

Names, press and echoed orders appear as their writers typed them, with
control characters written out (`pbem.escaping`): each page is escaped
whole, once, as the letters are.

One viewer decides everything shown, as for every report: the log entries
come from `history`, the nations' table from `pbem.rules.view.view`, the board
from `board_svg`, each given that viewer. The builder is handed the recorded
events and nothing else, so the game's secret seed, its reply secret and the
players' addresses cannot reach a page: the seed appears only if the log
itself revealed it to this viewer.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from pbem.audit.explain import explain_all
from pbem.audit.history import history
from pbem.escaping import escape_controls
from pbem.mail.render import default_templates_dir
from pbem.picture import board_svg
from pbem.rules.branches import walk
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState
from pbem.rules.ledger import revealed_seed
from pbem.rules.view import check_viewer, normalise_viewer, view
from pbem.store.events import RecordedEvent

__all__ = [
    "Explainer", "TurnPage", "archive_files", "check_out", "explanation_lines", "nation_rows", "seat_notes", "turn_pages",
    "viewer_label",
    "write_archive",
]

#: The stylesheet every page links to, copied from `templates/archive/`.
STYLESHEET = "archive.css"

#: Explains one version of the log to one viewer: lines of text; ValueError if the viewer may not see it.
Explainer = Callable[[str, Sequence[RecordedEvent], str], Mapping[int, Sequence[str]]]


@dataclass(frozen=True)
class TurnPage:
    """One turn of the game as the archive shows it: its page, its board, the state at its end."""

    number: int  # 0 for setup
    state: GameState  # at the end of the turn, or now for the turn still in play
    versions: tuple[int, ...]  # the versions recorded during the turn
    complete: bool  # a later turn has begun, or the game has ended
    entries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def page(self) -> str:
        return "setup.html" if self.number == 0 else f"turn-{self.number:02d}.html"

    @property
    def board(self) -> str:
        return "board-setup.svg" if self.number == 0 else f"board-turn-{self.number:02d}.svg"

    @property
    def title(self) -> str:
        return "Setup" if self.number == 0 else f"Turn {self.number}"


def turn_pages(game_id: str, recorded: Sequence[RecordedEvent]) -> list[TurnPage]:
    """The turns of a log, in order, each with the versions it holds and the state at its end.

    A version belongs to the turn the game is in once it is applied, so the
    event that begins turn 2 opens turn 2's page. The fold follows rollbacks
    (`pbem.rules.branches`), so a turn's end is the position that counts.
    """
    events = [Event.from_payload(rec.type, rec.payload) for rec in recorded]
    versions: dict[int, list[int]] = {}
    last: dict[int, GameState] = {}
    final = None
    for rec, (_version, _before, _event, after) in zip(recorded, walk(game_id, events)):
        versions.setdefault(after.turn, []).append(rec.version)
        last[after.turn] = final = after
    if final is None:
        raise ValueError(f"game {game_id} has no events")
    numbers = sorted(versions)
    return [
        TurnPage(
            number=n,
            state=last[n],
            versions=tuple(versions[n]),
            complete=n != numbers[-1] or final.finished,
        )
        for n in numbers
    ]


def seat_notes(recorded: Sequence[RecordedEvent], turn_of: Mapping[int, int]) -> dict[int, str]:
    """For each seat handed over (REPLACE), since when its holder has it and who held it before:
    ``{player id: "since turn 3, after Bob"}`` (``turn_of`` maps a version to its turn, 0 for setup).

    The index lists the seats as they are now, so a reader of a finished game
    would otherwise credit the whole game to the last holder. A handover is
    never undone by a rollback (`pbem.rules.branches`: the seats stay as they
    are), so every PlayerReplaced counts, superseded or not.
    """
    names: dict[int, str] = {}
    before: dict[int, list[str]] = {}
    since: dict[int, int] = {}
    for rec in recorded:
        if rec.type == "GameCreated":
            names = {p["id"]: p["name"] for p in rec.payload["players"]}
        elif rec.type == "PlayerReplaced":
            seat = rec.payload["player"]
            before.setdefault(seat, []).append(names.get(seat, f"player {seat}"))
            names[seat] = rec.payload["name"]
            since[seat] = turn_of.get(rec.version, 0)
    return {
        seat: f"since {'turn ' + str(since[seat]) if since[seat] else 'setup'}, after {', '.join(held)}"
        for seat, held in before.items()
    }


def _environment(templates_dir: Path) -> jinja2.Environment:
    """Every page through jinja2 with autoescape on: a player's name is text, never markup."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env


def _page(env: jinja2.Environment, name: str, **context: Any) -> str:
    """One page rendered and escaped whole: an ANSI escape or a bidi override in a name is shown, never obeyed
    (the templates hold no control character of their own, so only what the context brought in changes)."""
    return escape_controls(env.get_template(name).render(**context))


def nation_rows(seen: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The nations' table of a view, one row per nation, with its proper name and the hand as this viewer may know it."""
    proper = {p["nation"].lower(): p["nation"] for p in seen["players"] if p.get("nation")}
    rows = []
    for key, n in seen["nations"].items():
        if "hand" in n:
            hand = ", ".join(n["hand"]) if n["hand"] else "no cards"
        elif n["hand_count"] is None:
            hand = "not known"
        else:
            hand = f"{n['hand_count']} card{'' if n['hand_count'] == 1 else 's'}"
        rows.append({
            "key": key,
            "nation": proper.get(key, key.title()),
            "player": n["player"],
            "stock": n["stock"],
            "treasury": n["treasury"],
            "tokens": n["tokens_on_board"],
            "towns": n["towns_on_board"],
            "cities": n["cities_on_board"],
            "ships": n["ships"],
            "hand": hand,
            "hand_visible": "hand" in n,
            "civ_cards": ", ".join(n["civ_cards"]) or "none",
            "ast_position": n["ast_position"],
            "census": n["census"],
        })
    return rows


def viewer_label(viewer: str, final: GameState, asked: str | None = None) -> str:
    """Who the archive was written for, in words a reader of the page knows ("the player of Italy"); an auditor
    of a game still in play (``asked`` auditor, ``viewer`` observer) is named an auditor, with what he reads."""
    if asked is not None and normalise_viewer(asked) == "auditor" and viewer != "auditor":
        return "an auditor (reading what an observer reads until the game ends)"
    if viewer.startswith("player:"):
        nation = viewer.split(":", 1)[1]
        proper = next((n for n in final.nations if n.lower() == nation), nation.title())
        return f"the player of {proper}"
    return {"observer": "an observer"}.get(viewer, f"the {viewer}")


def explanation_lines(game_id: str, recorded: Sequence[RecordedEvent], viewer: str) -> dict[int, tuple[str, ...]]:
    """The explanation of every entry (`pbem.audit.explain`), as the plain-text lines a reader of the log opens:
    one walk of the log for the whole game."""
    return {version: told.lines for version, told in explain_all(game_id, recorded, viewer).items()}


def archive_files(
    game_id: str,
    recorded: Sequence[RecordedEvent],
    viewer: str = "observer",
    *,
    explain: Explainer | None = explanation_lines,
    templates_dir: Path | None = None,
) -> dict[str, str]:
    """Every file of the archive of one game as ``viewer`` sees it: {relative path: text}.

    Pure: nothing is read but the events given and the templates, nothing is
    written, so a test can look at each page without a disk. ValueError for a
    game without events or a viewer who is not in the game. ``explain`` gives
    the log entries their "Why", all in one walk of the log (None leaves them
    out, for tests that look at the rest).
    """
    if not recorded:
        raise ValueError(f"game {game_id} has no events to archive")
    turns = turn_pages(game_id, recorded)
    final = turns[-1].state
    asked, viewer = viewer, check_viewer(final, viewer)
    entries = history(game_id, list(recorded), viewer)
    by_version = {v: t for t in turns for v in t.versions}
    for entry in entries:
        turn = by_version[entry["version"]]
        entry["turn_page"] = turn.page
        entry["turn_title"] = turn.title
        entry.setdefault("superseded_by", None)
        turn.entries.append(entry)

    folder = Path(templates_dir) if templates_dir is not None else default_templates_dir() / "archive"
    env = _environment(folder)
    seen = view(final, viewer)
    common = {
        "game": game_id,
        "viewer": viewer,
        "viewer_label": viewer_label(viewer, final, asked),
        "stylesheet": STYLESHEET,
        "small_cities": "Small Cities" in seen["variants"],
    }
    files: dict[str, str] = {STYLESHEET: (folder / STYLESHEET).read_text(encoding="utf-8")}
    files["index.html"] = _page(
        env,
        "index.html",
        **common,
        seen=seen,
        turns=turns,
        chain_head=recorded[-1].hash,
        head_version=recorded[-1].version,
        entries_count=len(entries),
        seed=revealed_seed(final, viewer),
        seat_notes=seat_notes(recorded, {v: t.number for v, t in by_version.items()}),
    )
    for i, turn in enumerate(turns):
        at_end = view(turn.state, viewer)
        files[turn.board] = board_svg(turn.state, viewer)
        files[turn.page] = _page(
            env,
            "turn.html",
            **common,
            turn=turn,
            seen=at_end,
            nations=nation_rows(at_end),
            previous=turns[i - 1] if i > 0 else None,
            next=turns[i + 1] if i + 1 < len(turns) else None,
        )
    why = explain(game_id, recorded, viewer) if explain is not None else {}
    for entry in entries:
        entry["explanation"] = tuple(why.get(entry["version"], ()))
    files["log.html"] = _page(env, "log.html", **common, entries=entries, turns=turns)
    return files


def check_out(out: Path, *, force: bool = False) -> None:
    """FileExistsError unless ``out`` can take an archive: missing, an empty folder, or any folder with ``force``.

    Asked before the archive is built too, so a refusal costs nothing.
    """
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"{out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise FileExistsError(f"{out} is not empty (--force writes over it)")


def write_archive(files: Mapping[str, str | bytes], out: Path, *, force: bool = False) -> list[Path]:
    """Write the archive's files under ``out`` (created if missing); the paths written, in order.

    A folder that already holds files is refused unless ``force``: an archive
    written over another game's would leave that game's pages beside this one's.
    """
    out = Path(out)
    for name in files:
        plain = os.path.normpath(name)
        if os.path.isabs(plain) or plain == ".." or plain.startswith(".." + os.sep):
            raise ValueError(f"archive file {name!r} would land outside {out}")
    check_out(out, force=force)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in sorted(files):
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        content = files[name]
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        written.append(path)
    return written
