"""What a player's mailbox holds after a whole game: letters a turn, megabytes, the largest letter.

Run: .venv/bin/python bench/mailbox.py [--players 4] [--bots planner] [--out DIR] [--mail every|digest|nopictures]

It plays the game `make demo` plays (4 players, planner bots, by SMTP on
loopback, to the natural end), then reads each player's Maildir. A letter
belongs to the turn the game was in when it was written: the chain head it
ends with names a version of the log, and the version's turn is read from
the log; a letter without a head (a notice) belongs to the turn of the one
before it. Setup counts as turn 0. ``--mail`` sets every player's mail
preference before play, by replying ``MAIL <words>`` to his start letter; without it the server's default is measured.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, this file's folder comes first on the path, and its name would hide the standard library's
# mailbox module from everything imported below (the demo reads Maildirs with it).
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import argparse  # noqa: E402
import asyncio  # noqa: E402
import email  # noqa: E402
import mailbox  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from email.policy import default as default_policy  # noqa: E402

from pbem.rules.branches import walk  # noqa: E402
from pbem.rules.core.events import Event  # noqa: E402
from pbem.service.demo import run_demo  # noqa: E402
from pbem.store.database import make_engine  # noqa: E402
from pbem.store.unit_of_work import UnitOfWork  # noqa: E402

#: The head a letter ends with ("chain head c982c37a85d6770a"), read from our own letters.
_HEAD = re.compile(rb"chain head ([0-9a-f]{16})")


def turns_by_head(db_url: str, game_id: str) -> dict[str, int]:
    """Each version's 16-digit head, mapped to the game's turn once that version was recorded."""
    db = make_engine(db_url)
    try:
        with UnitOfWork(db) as uow:
            recorded = uow.events.read(game_id)
    finally:
        db.dispose()
    events = [Event.from_payload(r.type, r.payload) for r in recorded]
    return {rec.hash[:16]: after.turn for rec, (_v, _b, _e, after) in zip(recorded, walk(game_id, events))}


def mailbox_figures(folder: Path, turn_of: dict[str, int]) -> dict[str, float]:
    """Letters a turn (median, maximum), megabytes in all, the largest letter in kilobytes, in one Maildir."""
    box = mailbox.Maildir(folder, factory=None, create=False)
    keys = sorted(box.keys(), key=lambda k: (int(k.split(".", 1)[0]), k))
    per_turn: Counter[int] = Counter()
    sizes = []
    turn = 0
    for key in keys:
        raw = box.get_bytes(key)
        sizes.append(len(raw))
        unfolded = raw.replace(b"=\r\n", b"").replace(b"=\n", b"")
        heads = _HEAD.findall(unfolded)
        if not heads:  # maybe in a base64 body: decode the text parts
            letter = email.message_from_bytes(raw, policy=default_policy)
            part = letter.get_body(preferencelist=("plain",))
            heads = _HEAD.findall(part.get_content().encode("utf-8", "replace")) if part is not None else []
        if heads and heads[-1].decode() in turn_of:
            turn = turn_of[heads[-1].decode()]
        per_turn[turn] += 1
    counts = [per_turn[t] for t in range(0, max(per_turn) + 1)] if per_turn else [0]
    return {
        "letters": len(keys),
        "turns": len(counts),
        "median_a_turn": statistics.median(counts),
        "most_a_turn": max(counts),
        "megabytes": sum(sizes) / 1e6,
        "largest_kb": max(sizes, default=0) / 1e3,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--bots", default="planner")
    parser.add_argument("--seed", default="demo-seed")
    parser.add_argument("--out", type=Path, default=None, help="where the demo's database and Maildirs go (kept)")
    parser.add_argument("--mail", default=None, help="every player's MAIL preference (every, digest, nopictures)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="pbem-mailbox-")) / "demo"
    started = time.perf_counter()
    code = asyncio.run(run_demo(out, players=args.players, bots=args.bots, seed=args.seed, to_the_end=True,
                                echo=lambda _line: None, mail=args.mail))
    took = time.perf_counter() - started
    turn_of = turns_by_head(f"sqlite:///{out / 'pbem.sqlite'}", "demo")
    print(f"# {args.players} players, bots {args.bots}, seed {args.seed}, mail {args.mail or 'default'}: "
          f"game {'ended' if code == 0 else 'did NOT end'} in {took:.0f} s; out {out}")
    print("| player | letters | turns | letters a turn (median) | most in a turn | MB in all | largest letter (KB) |")
    print("|---|---|---|---|---|---|---|")
    for folder in sorted((out / "mail").iterdir()):
        if folder.name.startswith(".") or not (folder / "new").exists():
            continue
        f = mailbox_figures(folder, turn_of)
        print(f"| {folder.name} | {f['letters']} | {f['turns']} | {f['median_a_turn']:g} | {f['most_a_turn']} | "
              f"{f['megabytes']:.1f} | {f['largest_kb']:.0f} |")
    return code


if __name__ == "__main__":
    sys.exit(main())
