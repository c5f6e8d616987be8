"""Issue 31: every letter of a turn to a player reads as one conversation, in Gmail, Outlook and Apple Mail.

Gmail puts two letters in one conversation when their subjects are the same (but for "Re:") and their
References name an id seen before, or the same id each time; Outlook's conversations go by the subject;
Apple Mail and Thunderbird follow References (docs/mail.md, "One conversation per turn"). So this plays
setup and a turn by mail (`pbem demo`, bots replying by SMTP) and reads, per player, the subjects and
References of everything he received: each turn's letters share one subject and one id they all name,
and no two turns share either.
"""

from __future__ import annotations

import email
import mailbox
import subprocess
import sys
from collections import defaultdict
from email.policy import default as default_policy


def _named(letter) -> set[str]:
    """The ids of the server's letters a letter's References name (an answer names the player's message too)."""
    return {ref for ref in str(letter["References"] or "").split() if ref.endswith("@pbem.localhost>")}


def test_the_letters_of_each_turn_form_one_thread_per_player(tmp_path):
    out = tmp_path / "demo"
    played = subprocess.run([sys.executable, "-m", "pbem.cli", "demo", "--out", str(out), "--turns", "1"],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert played.returncode == 0, played.stdout[-3000:] + played.stderr[-3000:]
    players = sorted(p for p in (out / "mail").iterdir() if not p.name.startswith("."))
    assert len(players) == 3
    for folder in players:
        box = mailbox.Maildir(folder, factory=None, create=False)
        keys = sorted(box.keys(), key=lambda k: (int(k.split(".", 1)[0]), k))
        letters = [email.message_from_bytes(box.get_bytes(k), policy=default_policy) for k in keys]
        turns: dict[str, list] = defaultdict(list)
        for letter in letters:
            turns[str(letter["Subject"])].append(letter)
        assert set(turns) == {"[demo] Setup", "[demo] Turn 1", "[demo] Turn 2"}, (folder.name, sorted(turns))
        root = str(letters[0]["Message-ID"])  # the start letter: every later letter of the game names it too
        shared = {}
        for subject, thread in turns.items():
            common = set.intersection(*(_named(letter) for letter in thread)) - {root}
            assert len(common) == 1, (folder.name, subject, [str(m["X-Pbem-Topic"]) for m in thread])
            shared[subject] = common.pop()
            assert all(letter["X-Pbem-Topic"] for letter in thread)  # what each letter is, beside the thread's subject
        assert len(set(shared.values())) == len(shared)  # each turn its own thread
        assert all(root in _named(letter) for letter in letters[1:])
        # one turn's letters are a few, not the twenty of before (issue 31): the prompts travel with what caused them
        assert len(turns["[demo] Turn 1"]) <= 6, [str(m["X-Pbem-Topic"]) for m in turns["[demo] Turn 1"]]
