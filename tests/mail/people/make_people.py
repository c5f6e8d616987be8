"""Write the corpus of replies as people write them (tests/mail/people/*.eml and cases.json).

Run `python tests/mail/people/make_people.py` from the repository's root after changing a case; the files
it writes are committed, so a reader (or a test) needs no generator to see what was sent. Why generated:
150 replies in five clients' layouts by hand would drift from each other in the details the server reads
(the attribution, the encoding, where the quote ends); here each client's layout is written once
(`clients.py`) and each case says only what the player typed and what he meant.

Every case names what the writer meant, as the acknowledgement must show it: the orders applied (their
canonical text, as the "ACCEPTED FROM THIS MESSAGE" lines show it), the lines refused, the lines named as
not read, and the prose that must be neither. See README.md for the fields.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from clients import CLIENTS, Reply, outlook  # noqa: E402

HERE = Path(__file__).parent

# -- the letters a reply quotes (their text as the server writes it; lines of them are not orders) --------

NATION_PROMPT = """Nations and start areas, your turn: choose your nation, then place its first token. Due Fri 27 Nov 08:00 UTC.
Ben - Setup, Nations and start areas.
Deadline: 2026-11-27 08:00 UTC

YOUR POSITION
  You hold place card 1 of 3.

YOUR CHOICES
  NATION Africa
  NATION Italy
  NATION Illyria
  NATION Thrace
  NATION Crete

HOW TO WRITE ORDERS
  Choose your nation, then place your first token in one of its start
  areas.
  If no orders arrive in time: the first nation still free in A.S.T.
  order (Africa) and its first start area.
  One order per line; case does not matter; names may be abbreviated.
  HELP lists the orders; HELP AREA Sinai or HELP CARD Astronomy explains one.
  Lines starting with # are ignored.

Reply to this message with the lines you want, one order per line.
Edit the block below; delete the lines you do not want.

===== ORDERS: edit below this line =====
NATION Africa
PLACE Sahara
===== END OF ORDERS =====""".split("\n")

MOVES_PROMPT = """Movement, your turn: move your tokens, then HALT. Due Fri 27 Nov 08:00 UTC.
Ben (Crete) - Turn 1, 3. Movement.
Deadline: 2026-11-27 08:00 UTC

YOUR POSITION
  Your tokens that may move: Knossos 2.
  Your ships that may sail: none.
  Order of movement: Italy, Thrace, Crete.

YOUR CHOICES
  MOVE up to 2 from Knossos to: Phaestos
  HALT when your movement is done

THE AREAS IN PLAY
  Knossos, Phaestos

HOW TO WRITE ORDERS
  Step 3b, movement: each token moves once, into a neighbouring land
  area or aboard a ship; a ship carries up to 5 tokens of its area up to
  4 water areas to a coast, never through open sea (Astronomy). Entering
  an area with another player's or a pirate city attacks it (the
  conflict phase resolves it). Orders, one a line: MOVE <n> <from> <to>,
  SAIL <n> <from> <to>; end with HALT.
  If no orders arrive in time: your movement ends: moves already
  accepted stand, every other token and ship stays where it is.
  One order per line; case does not matter; names may be abbreviated.
  HELP lists the orders; HELP AREA Sinai or HELP CARD Astronomy explains one.
  Lines starting with # are ignored.

Reply to this message with the lines you want, one order per line.
Edit the block below; delete the lines you do not want.

===== ORDERS: edit below this line =====
MOVE 2 Knossos Phaestos
HALT
===== END OF ORDERS =====""".split("\n")

REPORT = """Ben (Crete): what happened from Setup, Nations and start areas until turn 1, 3. Movement began.
Next: Turn 1, 3. Movement. A prompt comes when it is your turn.

YOUR POSITION NOW
  Cities (0): none.
  Tokens (2 on the board): Knossos (2).
  Stock 45, treasury 0, ships 0.
  Hand (0): no cards.
  Civilization cards: none.
  A.S.T. space 0.

WHAT HAPPENED
- Game g1 created for Ann, Ben, Cy; seed commitment e8bc163c82eee187. [§15, §16]
- Place cards dealt: 1. Ben, 2. Cy, 3. Ann. [§15.4]
- Ben chose Crete.
- Crete placed its first token in Knossos.
- Cy chose Thrace.
- Thrace placed its first token in Scythia.
- Ann chose Italy.
- Italy placed its first token in Etruria.
- Setup is complete. [§15.4]
- Turn 1: 1. Tax collection begins. [seed 003: 1]
- Turn 1: 2. Population expansion begins. [seed 003: 2]
- Population expansion: Crete +1 in 1 area; Italy +1 in 1 area; Thrace +1 in 1 area. [seed 003: 2, §20]
- Census: 1. Italy 2, 2. Thrace 2, 3. Crete 2. [R-2.1, §21, D-12]
- Turn 1: 3. Movement begins. [seed 003: 3]
- Order of ship building and movement (census, Military last): Italy, Thrace, Crete. [R-2.2, R-2.6, §21.1, §22.11, §23.21]

THE OTHER NATIONS
  Italy (Ann): cities none; tokens Etruria (2); 0 cards in hand; A.S.T.
    space 0.
  Thrace (Cy): cities none; tokens Scythia (2); 0 cards in hand; A.S.T.
    space 0.

Keep this mail: the chain head proves what you were told.""".split("\n")

ACK = """Ben (Crete): your orders are on file.

Turn 1, 3. Movement.
Nothing is asked of you now.

ACCEPTED FROM THIS MESSAGE
  HALT

NOW ON FILE FOR YOU
  You play Crete.
  Your tokens stand in Knossos (2).
  Nothing more is needed from you now.
""".split("\n")

PRESS = """Press from Italy

Press from Italy to Crete: shall we share the sea? I keep out of Knossos if you keep out of Etruria.
Answer with PRESS TO <nation> ... END.""".split("\n")

QUOTES = {("nation", "prompt"): NATION_PROMPT, ("moves", "prompt"): MOVES_PROMPT, ("moves", "report"): REPORT,
          ("moves", "ack"): ACK, ("moves", "press"): PRESS}
OUTLOOK_SUBJECTS = {
    "prompt": "[g1] T1 3. Movement: your orders, due Fri 27 Nov 08:00 UTC",
    "report": "[g1] Report: Nations and start areas to turn 1, 3. Movement",
    "ack": "[g1] Orders received",
    "press": "[g1] Press from Italy",
}

# -- what the player means, in each position -------------------------------------------------------------

NATION_ORDERS = ["NATION Crete", "PLACE Knossos"]
NATION_DONE = {"nation": "Crete", "tokens": {"Knossos": 1}}
MOVE = "MOVE 1 Knossos > Phaestos"
MOVED = [["Knossos", "Phaestos", 1]]

#: Every name of pbem/orders/first_names.txt that is a verb's beginning or one edit from a verb or query word.
VERB_NAMES = [
    "Hal", "Ann", "Don", "Fin", "Nat", "Nati", "Wat", "Tim", "Red", "Con", "Den", "Pau", "Han", "Anno", "Walt",
    "Hale", "Halo", "Nick", "Rick", "Mick", "Dick", "Vick", "Pat", "Pam", "Ray", "Jay", "Kay", "Fay", "May",
    "Paz", "Max", "Tam", "Tad", "Tex", "Mac", "Mat", "Mal", "Mae", "Mai", "Hap", "Moe", "Bud", "Guy", "Jose",
    "Rose", "Lise", "Paule", "Gail", "Sal", "Saul", "Drew", "Clay", "Reed", "Skip", "Hank", "Hans", "Rand",
    "Hana", "Dany", "Dena", "Deni", "Dona", "Dane", "Walter", "Stuart",
]
OTHER_NAMES = ["Florian", "Hans", "Paco", "Gio", "Ben", "Sophie", "Jürgen", "Chema", "Beppe", "Margaux", "Liz", "Bob",
               "Tom", "Sam", "Jo", "Flo", "Gus", "Will", "Bill", "Ted", "Pip", "Kit", "Sue", "Lou", "Fred", "Ken",
               "Jim", "Gil", "Mel", "Bea", "Ed", "Al", "Rob", "Ben", "Mo"]

CLIENT_CYCLE = ["gmail", "outlook", "applemail", "iphone", "thunderbird"]

CASES: list[dict] = []


def case(name: str, category: str, position: str, typed: list[str], *, client: str | None = None,
         where: str = "top", answers: str = "prompt", edited: list[str] | None = None, **meant) -> None:
    """Record one case: what the player typed, where, and what he meant."""
    client = client or CLIENT_CYCLE[len(CASES) % len(CLIENT_CYCLE)]
    quote = QUOTES[(position, answers)]
    if client == "outlook" and where == "bottom":
        where = "top"  # Outlook's own quote is unmarked: a bottom post under it is the outlook-bottom category
    if where == "outlook-bottom":
        reply = Reply(name, [], quote, typed)
        raw = outlook(reply, OUTLOOK_SUBJECTS[answers] if position == "moves" else "[g1] Setup, Nations and start areas: your orders")
        client = "outlook"
    else:
        reply = Reply(name, typed if where == "top" else [], quote, typed if where == "bottom" else [],
                      edited_quote=edited)
        raw = CLIENTS[client](reply) if client != "outlook" else outlook(
            reply, OUTLOOK_SUBJECTS[answers] if position == "moves" else "[g1] Setup, Nations and start areas: your orders")
    (HERE / f"{name}.eml").write_bytes(raw)
    entry = {"file": f"{name}.eml", "category": category, "client": client, "position": position,
             "answers": answers, "where": where, "typed": typed}
    entry.update({"accepted": [], "errors": [], "named": [], "prose": []})
    entry.update(meant)
    CASES.append(entry)


def sign_off_cases() -> None:
    """Rules 1 and 2: a name (often a verb's beginning) under a sign-off, or alone at the end, is no order."""
    shapes = [
        ("Thanks,", "{n}"), ("Cheers, {n}",), ("-- ", "{n}"), ("Merci,", "{n}"), ("Grüße", "{n}"),
        ("Saludos,", "{n}"), ("Ciao", "{n}"), ("{n}",), ("{n}", "", "Sent from my iPhone"), ("Best,", "{n}"),
        ("Regards,", "{n}"), ("Thanks, {n}",), ("Viele Grüße", "{n}"), ("Un saludo,", "{n}"), ("Grazie,", "{n}"),
        ("Love,", "{n}"), ("Kind regards,", "{n}"), ("Cordialement,", "{n}"), ("Cheers", "{n}"), ("LG {n}",),
        ("Thank you!", "{n}"), ("Best regards", "{n}"), ("Bises,", "{n}"), ("Cordiali saluti", "{n}"),
    ]
    names = VERB_NAMES + OTHER_NAMES[:10]
    for i, n in enumerate(names):
        shape = shapes[i % len(shapes)]
        tail = [s.format(n=n) for s in shape]
        prose = [t for t in tail if t.strip() and t != "-- " and t != "Sent from my iPhone"]
        if i % 2 == 0:  # at nation choice: both orders, then the sign-off
            greet = ["Hi,", ""] if i % 4 == 0 else []
            case(f"signoff_{i:02d}_{n.lower()}", "sign-off", "nation", [*greet, *NATION_ORDERS, "", *tail],
                 where="bottom" if i % 3 == 0 else "top",
                 accepted=NATION_ORDERS, prose=prose, state=NATION_DONE)
        else:  # in movement, one move and no HALT: a name read as HALT, PAY, ... would show
            case(f"signoff_{i:02d}_{n.lower()}", "sign-off", "moves", ["MOVE 1 Knossos Phaestos", "", *tail],
                 where="bottom" if i % 3 == 0 else "top",
                 accepted=[MOVE], prose=prose, state={"moved": MOVED, "halted": False})


def query_prose_cases() -> None:
    """Rule 5: a line starting with a query word is a query only when what follows is empty, numbers or names."""
    prose = [
        ("nation", "Orders in the block below."), ("nation", "Orders: as discussed with Ann."),
        ("moves", "Status of the trade: pending"), ("moves", "Status update: I'm moving south."),
        ("moves", "Map looks great!"), ("nation", "Map is lovely, thanks for the picture."),
        ("moves", "Hand me the dice next time, ha."), ("nation", "Hand-picked Crete for the islands."),
        ("moves", "History will judge me for this."), ("nation", "History buff here, Crete it is."),
        ("moves", "Board looks crowded already."), ("nation", "Board game night was fun, thanks all."),
        ("moves", "Explain to me why Thrace goes first?"), ("nation", "Explaining myself: I love islands."),
        ("moves", "Help, I'm drowning in options here."), ("nation", "Help me if I got this wrong."),
        ("moves", "Orders are in, good luck everyone."),
    ]
    for i, (position, line) in enumerate(prose):
        orders = NATION_ORDERS if position == "nation" else ["MOVE 1 Knossos Phaestos"]
        typed = [line, "", *orders] if i % 2 == 0 else [*orders, "", line]
        case(f"query_prose_{i:02d}", "query-prose", position, [*typed, "", "Thanks,", OTHER_NAMES[i % len(OTHER_NAMES)]],
             accepted=NATION_ORDERS if position == "nation" else [MOVE], prose=[line], no_answer=True,
             state=NATION_DONE if position == "nation" else {"moved": MOVED, "halted": False})
    real = [("nation", "STATUS", "STATUS:"), ("moves", "HISTORY 20", "HISTORY, by version ("), ("nation", "HISTORY 5", "HISTORY, by version (")]
    for i, (position, line, marker) in enumerate(real):
        orders = NATION_ORDERS if position == "nation" else ["MOVE 1 Knossos Phaestos"]
        case(f"query_real_{i:02d}", "query-prose", position, [*orders, line, "", "Cheers,", "Gus"],
             accepted=NATION_ORDERS if position == "nation" else [MOVE], answered=[marker],
             state=NATION_DONE if position == "nation" else {"moved": MOVED, "halted": False})


def typo_cases() -> None:
    """Rule 4: a first word one edit from exactly one verb reads as that verb when the rest parses."""
    nation = [("NATOIN Crete", "NATOIN", "NATION"), ("NTION Crete", "NTION", "NATION"), ("NATIONN Crete", "NATIONN", "NATION"),
              ("natoin crete", "natoin", "NATION"), ("Naiton Crete", "Naiton", "NATION"), ("NAITON Crete", "NAITON", "NATION")]
    for i, (line, word, verb) in enumerate(nation):
        case(f"typo_nation_{i:02d}", "typo", "nation", ["Hi all,", "", line, "PLACE Knossos", "", "Cheers,", "Sophie"],
             accepted=NATION_ORDERS, notes=[f"read '{word}' as {verb}"], state=NATION_DONE)
    place = [("PLAEC Knossos", "PLAEC"), ("PLCE Knossos", "PLCE"), ("PLACEE Knossos", "PLACEE"), ("Palce Knossos", "Palce"),
             ("plase knossos", "plase")]
    for i, (line, word) in enumerate(place):
        case(f"typo_place_{i:02d}", "typo", "nation", ["NATION Crete", line, "", "Thanks", "Chema"],
             accepted=NATION_ORDERS, notes=[f"read '{word}' as PLACE"], state=NATION_DONE)
    moves = [("MVOE 1 Knossos Phaestos", "MVOE"), ("MOEV 1 Knossos Phaestos", "MOEV"), ("MVE 1 Knossos Phaestos", "MVE"),
             ("MOOVE 1 Knossos Phaestos", "MOOVE"), ("mvoe 1 knossos phaestos", "mvoe"), ("Moev 1 Knossos Phaestos", "Moev")]
    for i, (line, word) in enumerate(moves):
        case(f"typo_move_{i:02d}", "typo", "moves", [line, "", "Cheers, Bob"],
             accepted=[MOVE], notes=[f"read '{word}' as MOVE"], state={"moved": MOVED, "halted": False})
    # a typo alone on its line is never an order (rule 1): named as not read, no error, no HALT
    for i, word in enumerate(["HLAT", "Hatl", "HALTT"]):
        case(f"typo_alone_{i:02d}", "typo", "moves", ["MOVE 1 Knossos Phaestos", word, "", "Thanks,", "Beppe"],
             accepted=[MOVE], named=[word], state={"moved": MOVED, "halted": False})


def hold_cases() -> None:
    """A typo, then the order that closes the step: read, both apply; not readable, the step stays open."""
    readable = [("MVOE 1 Knossos Phaestos", "MVOE"), ("MOEV 1 Knossos Phaestos", "MOEV"), ("MVE 1 Knossos Phaestos", "MVE"),
                ("MOVVE 1 Knossos Phaestos", "MOVVE"), ("mvoe 1 Knossos Phaestos", "mvoe"), ("MOCE 1 Knossos Phaestos", "MOCE")]
    for i, (line, word) in enumerate(readable):
        case(f"hold_read_{i:02d}", "typo-then-close", "moves", [line, "HALT", "", "Cheers,", "Tom"],
             accepted=[MOVE, "HALT"], notes=[f"read '{word}' as MOVE"], state={"moved": MOVED, "halted": True},
             needs="hold")
    unreadable = ["MVEO 1 Knossos Phaestos", "MEOV 1 Knossos Phaestos", "MVOE 1 Knossos Atlantis", "MOVEE 1 Knossos Sparta",
                  "MVEO 2 Knossos Phaestos", "MOVE 3 Knossos Phaestos"]
    for i, line in enumerate(unreadable):
        case(f"hold_refused_{i:02d}", "typo-then-close", "moves", [line, "HALT", "", "Thanks,", "Liz"],
             errors=[{"text": line}], held=["HALT"], subject_says="open", state={"moved": [], "halted": False},
             needs="hold")
    nation_read = [("NATOIN Crete", "NATOIN"), ("NATION Crete", None)]
    for i, (line, word) in enumerate(nation_read):
        case(f"hold_nation_{i:02d}", "typo-then-close", "nation", [line, "PLAEC Knossos", "", "Danke,", "Hans"],
             accepted=NATION_ORDERS, notes=[n for n in (f"read '{word}' as NATION" if word else None,
                                                         "read 'PLAEC' as PLACE") if n],
             state=NATION_DONE, needs="hold")
    # without a nation, PLACE is refused by the rules themselves: two refused lines, nothing held or played
    for i, line in enumerate(["NATION Atlantis", "NAOTIN Crete"]):
        case(f"hold_nation_refused_{i:02d}", "typo-then-close", "nation", [line, "PLACE Knossos", "", "Ciao", "Gio"],
             errors=[{"text": line}, {"text": "PLACE Knossos"}], subject_says="2 errors",
             state={"nation": None, "tokens": {}}, needs="hold")


def end_cases() -> None:
    """Rule 3: END or SIGNOFF alone on a line stops the reading; what follows is not read, and no error."""
    words = ["END", "end", "End", "SIGNOFF", "Signoff", "signoff", "END.", "End!"]
    for i, word in enumerate(words):
        if i % 2 == 0:
            case(f"end_moves_{i:02d}", "end", "moves", ["MOVE 1 Knossos Phaestos", word, "HALT", "", "Bob"],
                 accepted=[MOVE], named=["HALT"], state={"moved": MOVED, "halted": False})
        else:
            case(f"end_nation_{i:02d}", "end", "nation", [*NATION_ORDERS, word, "NATION Italy", "Thanks,", "Liz"],
                 accepted=NATION_ORDERS, named=["NATION Italy"], state=NATION_DONE)
    # END inside a PRESS block ends the press text, and the reading goes on
    for i, who in enumerate(["Italy", "Thrace", "italy", "thrace"]):
        case(f"end_press_block_{i:02d}", "end", "moves",
             [f"PRESS TO {who}", "Let us keep the peace this turn.", "No ships from me.", "END", "MOVE 1 Knossos Phaestos",
              "", "Cheers,", "Tom"],
             accepted=[f"PRESS TO {who.title()}", MOVE], state={"moved": MOVED, "halted": False})
    case("end_then_prose", "end", "nation", [*NATION_ORDERS, "END", "Sorry for the late reply, busy week.", "Sam"],
         accepted=NATION_ORDERS, prose=["Sorry for the late reply, busy week."], state=NATION_DONE)
    case("end_before_orders", "end", "moves", ["END", "MOVE 1 Knossos Phaestos", "HALT"],
         named=["MOVE 1 Knossos Phaestos", "HALT"], state={"moved": [], "halted": False})


def for_cases() -> None:
    """Rule 6: FOR <player>: <order> from a player is refused with a reason; "For the record, ..." is prose."""
    refused = ["FOR Ann: HALT", "FOR Italy: MOVE 1 Etruria Roma", "for cy: halt", "FOR Thrace: HALT", "For Ann: MOVE 2 Etruria Roma",
               "FOR Cy: MOVE 1 Scythia Dacia", "FOR Italy HALT"]
    for i, line in enumerate(refused):
        case(f"for_refused_{i:02d}", "for", "moves", ["MOVE 1 Knossos Phaestos", line, "", "Cheers,", "Jo"],
             accepted=[MOVE], errors=[{"text": line, "reason": "only the moderator gives orders for another player"}],
             state={"moved": MOVED, "halted": False})
    nation_refused = ["FOR Ann: NATION Italy", "FOR Cy: NATION Thrace"]
    for i, line in enumerate(nation_refused):
        case(f"for_nation_refused_{i:02d}", "for", "nation", [*NATION_ORDERS, line, "", "Thanks,", "Flo"],
             accepted=NATION_ORDERS, errors=[{"text": line, "reason": "only the moderator gives orders for another player"}],
             state=NATION_DONE)
    prose = ["For the record, I'm heading south.", "For what it's worth, Crete is mine now.", "For Ann: good luck out west!",
             "For now just the one move.", "For the record: no ships this turn.", "for real this time, no attacks"]
    for i, line in enumerate(prose):
        position = "moves" if i % 2 == 0 else "nation"
        orders = ["MOVE 1 Knossos Phaestos"] if position == "moves" else NATION_ORDERS
        case(f"for_prose_{i:02d}", "for", position, [line, *orders, "", "Cheers,", "Gus"],
             accepted=[MOVE] if position == "moves" else NATION_ORDERS, prose=[line],
             state={"moved": MOVED, "halted": False} if position == "moves" else NATION_DONE)


def quoted_cases() -> None:
    """Orders edited inside the quoted order block: legal lines are taken; every other edit is named."""

    def edit(quote: list[str], block: list[str]) -> list[str]:
        start = quote.index("===== ORDERS: edit below this line =====")
        end = quote.index("===== END OF ORDERS =====")
        return [*quote[: start + 1], *block, *quote[end:]]

    moves_edits = [
        (["MOVE 1 Knossos Phaestos"], [MOVE], [], {"moved": MOVED, "halted": False}),
        (["MOVE 5 Knossos Phaestos"], [], ["MOVE 5 Knossos Phaestos"], {"moved": [], "halted": False}),
        (["MOVE 1 Knossos Atlantis"], [], ["MOVE 1 Knossos Atlantis"], {"moved": [], "halted": False}),
        (["MOVE 1 Knossos Phaestos", "MOVE 3 Knossos Phaestos"], [MOVE], ["MOVE 3 Knossos Phaestos"], {"moved": MOVED, "halted": False}),
        (["MOVE 1 Knossos Phaestos", "FOR Ann: HALT"], [MOVE], ["FOR Ann: HALT"], {"moved": MOVED, "halted": False}),
        (["MVOE 1 Knossos Phaestos"], [MOVE], [], {"moved": MOVED, "halted": False}),  # a slip read (rule 4)
    ]
    for i, (block, accepted, named, state) in enumerate(moves_edits):
        client = ["gmail", "thunderbird", "applemail", "iphone", "gmail", "thunderbird"][i]
        case(f"quoted_block_moves_{i:02d}", "quoted-block", "moves", ["My orders are in the block below.", "", "Thanks,", "Rob"],
             client=client, edited=edit(MOVES_PROMPT, block), accepted=accepted, named=named,
             prose=["My orders are in the block below."], state=state, needs="quoted-named")
    nation_edits = [
        (["NATION Crete", "PLACE Knossos"], NATION_ORDERS, [], NATION_DONE),
        (["NATION Crete", "PLACE Phaestos"], ["NATION Crete", "PLACE Phaestos"], [], {"nation": "Crete", "tokens": {"Phaestos": 1}}),
        (["NATION Atlantis", "PLACE Knossos"], [], ["NATION Atlantis", "PLACE Knossos"], {"nation": None, "tokens": {}}),
        (["NATION Crete", "PLACE Knossos", "PLACE Phaestos"], NATION_ORDERS, ["PLACE Phaestos"], NATION_DONE),
        (["NATOIN Crete", "PLACE Knossos"], NATION_ORDERS, [], NATION_DONE),  # a slip read (rule 4)
        (["NATION Crete", "PLACE Knossos", "HALT"], NATION_ORDERS, ["HALT"], NATION_DONE),
    ]
    for i, (block, accepted, named, state) in enumerate(nation_edits):
        client = ["thunderbird", "gmail", "iphone", "applemail", "thunderbird", "gmail"][i]
        case(f"quoted_block_nation_{i:02d}", "quoted-block", "nation", ["See the block below.", "", "Cheers,", "Ken"],
             client=client, edited=edit(NATION_PROMPT, block), accepted=accepted, named=named,
             prose=["See the block below."], state=state, needs="quoted-named")


def press_reply_cases() -> None:
    """A reply to a press letter is press back to its sender: no line of it is an order or an error."""
    texts = [
        ["Deal. I stay out of Etruria this turn.", "", "Ben"],
        ["Sounds good to me, Ann!", "Let's talk again after the census.", "", "Cheers,", "Ben"],
        ["No deal, sorry. Crete needs room.", "", "Hal"],
        ["Hand on heart, I won't sail west.", "", "Thanks,", "Don"],
        ["Move your tokens away from the coast and we are friends.", "", "Ben"],
        ["Halt right there, Italy :)", "Just kidding. Peace.", "", "Ann"],
        ["Place your bets: I'll be in Phaestos.", "", "Ciao", "Gio"],
        ["Status quo is fine by me.", "", "Ben"],
        ["OK", "", "Ben"],
        ["Sure. Pay me in grain later.", "", "Pat"],
        ["Done deal!", "", "Ben"],
        ["Thanks for writing. Yes to peace.", "", "Grüße", "Hans"],
    ]
    for i, typed in enumerate(texts):
        case(f"press_reply_{i:02d}", "press-reply", "moves", typed, answers="press",
             client=CLIENT_CYCLE[i % len(CLIENT_CYCLE)], prose=[t for t in typed if t], press_to_ann=typed[0],
             state={"moved": [], "halted": False}, needs="press-replies")


def outlook_bottom_cases() -> None:
    """Bottom posts under an unmarked Outlook quote: only the lines typed after the quoted letter are read."""
    for i, answers in enumerate(["prompt", "report", "ack"] * 4):
        position = "moves"
        n = i // 3
        if n == 0:
            typed, accepted, state = ["MOVE 1 Knossos Phaestos", "HALT", "", "Thanks,", "Margaux"], [MOVE, "HALT"], {"moved": MOVED, "halted": True}
        elif n == 1:
            typed, accepted, state = ["MOVE 1 Knossos Phaestos", "", "Cheers", "Jürgen"], [MOVE], {"moved": MOVED, "halted": False}
        elif n == 2:
            typed, accepted, state = ["Moving one to Phaestos:", "MOVE 1 Knossos Phaestos", "", "Regards,", "Gio"], [MOVE], {"moved": MOVED, "halted": False}
        else:
            typed, accepted, state = ["MOVE 2 Knossos Phaestos", "HALT", "", "Ben"], ["MOVE 2 Knossos > Phaestos", "HALT"], {"moved": [["Knossos", "Phaestos", 2]], "halted": True}
        case(f"outlook_bottom_{answers}_{n:02d}", "outlook-bottom", position, typed, where="outlook-bottom", answers=answers,
             accepted=accepted, prose=[t for t in typed if t and t not in ("HALT",) and not t.upper().startswith("MOVE")],
             state=state, needs="outlook-bottom")
    # a line typed below the quote that the game refuses is the player's: refused with its reason, never dropped
    for answers in ("prompt", "report", "ack"):
        case(f"outlook_bottom_{answers}_refused", "outlook-bottom", "moves",
             ["MOVE 1 Knossos Phaestos", "MOVE 5 Knossos Phaestos", "", "Cheers", "Gio"], where="outlook-bottom",
             answers=answers, accepted=[MOVE], errors=[{"text": "MOVE 5 Knossos Phaestos"}], prose=["Cheers", "Gio"],
             state={"moved": MOVED, "halted": False}, needs="outlook-bottom")
    case("outlook_bottom_nation_prompt", "outlook-bottom", "nation", [*NATION_ORDERS, "", "Best regards,", "Florian"],
         where="outlook-bottom", accepted=NATION_ORDERS, prose=["Best regards,", "Florian"], state=NATION_DONE, needs="outlook-bottom")


def main() -> None:
    for old in HERE.glob("*.eml"):
        old.unlink()
    sign_off_cases()
    query_prose_cases()
    typo_cases()
    hold_cases()
    end_cases()
    for_cases()
    quoted_cases()
    press_reply_cases()
    outlook_bottom_cases()
    names = [c["file"] for c in CASES]
    assert len(names) == len(set(names)), "two cases with one name"
    (HERE / "cases.json").write_text(json.dumps(CASES, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(CASES)} cases")


if __name__ == "__main__":
    main()
