"""Full contexts for every mail kind (shared by the rendering tests)."""

ACK = {
    "game": "nile-1",
    "player": "Egypt",
    "turn": 3,
    "phase": "Movement",
    "accepted": ["MOVE 2 FROM Memphis TO Thebes", "BUILD CITY IN Thebes"],
    "errors": [
        {"line": 3, "text": "MOVE 1 FROM Memfis TO Giza", "reason": "There is no area called Memfis.",
         "suggestions": ["Memphis"]},
        {"line": 5, "text": "BUY Astronmy", "reason": "Cards are bought in the Acquisition phase.",
         "suggestions": []},
    ],
    "on_file": ["MOVE 2 FROM Memphis TO Thebes", "BUILD CITY IN Thebes"],
    "deadline": "Fri 14 June 18:00 UTC",
    "asked": True,
    "chain_head": "3f9a1c2b",
    "variants": [],
    "notes": ["1 attachment was ignored; orders are read only from the message text."],
    "error_count": 2,
    "errors_left": 0,
    "accepted_left": 0,
    "ignored": '"Thanks," and "Alex".',
    "nothing_found": "",
    "answers_only": False,
    "template": "",
    "origin": "",
    "held_subject": "",
    "held": "",
}

PROMPT = {
    "game": "nile-1",
    "player": "Egypt",
    "turn": 3,
    "phase": "Movement",
    "situation": ["Stock: 12 tokens", "Treasury: 4", "Areas: Memphis 3, Thebes 1 + city"],
    "headline": "Movement, your turn: move your tokens, then HALT",
    "rules": "Each token moves once, into a neighbouring land area. Orders, one a line: MOVE <n> <from> <to>; end with HALT.",
    "default": "your movement ends",
    "choices": ["MOVE 2 Memphis Thebes", "MOVE 1 Thebes Sinai", "HALT"],
    "choices_left": 0,
    "areas": ["Memphis", "Thebes", "Sinai"],
    "template": "MOVE 2 FROM Memphis TO Thebes\nBUILD CITY IN Thebes",
    "deadline": "2026-06-14 18:00 UTC",
    "due": "Fri 14 Jun 18:00 UTC",
    "chain_head": "3f9a1c2b",
    "variants": ["No-Trading"],
    "help_lines": ["MOVE <n> FROM <area> TO <area>", "PASS"],
}

REPORT = {
    "result": "",
    "game": "nile-1",
    "player": "Egypt",
    "phase": "Movement",
    "happened": [
        {"text": "Babylon moved 3 tokens into Sinai.", "cites": ["§21.2"]},
        {"text": "Conflict in Sinai: Egypt lost 1 token, Babylon lost 2.", "cites": ["§22.1", "§22.3"]},
        {"text": "Nothing else moved.", "cites": []},
    ],
    "covers": "what happened from turn 3, 3. Movement until turn 3, 4. Conflict began",
    "next": "Next: Turn 3, 4. Conflict. A prompt comes when it is your turn.",
    "own": ["Cities (1): Thebes.", "Tokens (4 on the board): Memphis (3), Sinai (1).", "Stock 10, treasury 4, ships 0.",
            "Hand (2): Salt, Slave Revolt (calamity).", "Civilization cards: none.", "A.S.T. space 3."],
    "others": ["Babylon (Bruno): cities Babylon; tokens Sinai (1); 3 cards in hand; A.S.T. space 2."],
    "chain_head": "77aa0c1d",
    "variants": [],
}

START = {
    "game": "nile-1",
    "player": "Zoë Ångström",
    "players": [{"name": "Zoë Ångström", "nation": "Egypt"}, {"name": "Bob", "nation": "Babylon"}],
    "options": {"small_cities": True, "no_trading": False, "deadline_hours": 48},
    "seed_commitment": "c0ffee" * 10 + "abcd",
    "chain_head": "00ab12cd",
    "variants": ["No-Trading"],
    "variant_notes": ["No-Trading (seed 004): there is no trade phase."],
    "reply_address": "pbem+nile-1.1.0123456789abcdef@civ.example.org",
    "secret": "tulip-quarry-88",
    "rules_help": ["MOVE <n> FROM <area> TO <area>", "Write HELP for the full list."],
    "seat": None,  # a replacement's start letter: see SEAT
    "place_order": ["Bob", "Zoë Ångström"],
    "moderator": "This game is moderated by the server's operator.",
}

#: What a replacement's start letter (REPLACE) tells first: whose seat, why, what is asked, the position.
SEAT = {
    "nation": "Babylon",
    "before": "Bob",
    "reason": "Bob has moved abroad",
    "asked": ["Your orders are asked now: How many tokens do you move?", "Due: 2026-11-27 08:00 UTC.",
              'The next letter, "your orders, due Fri 27 Nov 08:00 UTC", holds the order block: reply to that letter.'],
    "position": ["STATUS: Turn 3, Movement. Deadline: 2026-11-27 08:00 UTC.", "HAND of Babylon: trade cards none."],
}

NOTICE = {
    "game": None,
    "title": "Your message was not accepted",
    "lines": ["We do not know the address you wrote from.", "Nothing was changed."],
}

REMINDER = {
    "game": "nile-1",
    "player": "Egypt",
    "turn": 3,
    "phase": "Movement",
    "question": "Which tokens do you move?",
    "default": "your tokens stay where they are",
    "template": "MOVE 2 FROM Memphis TO Thebes",
    "deadline": "2026-11-27 04:28 UTC",
    "left": "11 hours",
}

CONTEXTS = {"ack": ACK, "prompt": PROMPT, "report": REPORT, "start": START, "notice": NOTICE, "reminder": REMINDER}
